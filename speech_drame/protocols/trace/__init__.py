"""TRACE: dimension-first pairwise judging over a textual blueprint of audio cues, with typed ties.

- :mod:`.labels`: the label space {1, 2, both_good, both_bad}, the fusion policies and the
  missing-content and missing-other rules;
- :mod:`.blueprint`: the per-response blueprint (content, voice quality from the personalised
  or plain DNSMOS model, paralinguistics);
- :mod:`.affect`: optional emotion/accent scores from a local audio-classification model;
- :mod:`.judges`: the offline rule judge and the chat (text LLM) judge;
- :mod:`.hcot`: the HCoT label loader and evaluation against it.
"""

from ..._lazy import lazy_attributes

__all__ = [
    "Pair",
    "TraceRun",
    "fuse_labels",
    "load_pairs",
    "run_trace",
]
_MODULES = {
    ".protocol": ("Pair", "TraceRun", "load_pairs", "run_trace"),
    ".labels": ("fuse_labels",),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
