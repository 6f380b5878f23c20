"""ISDrama objective evaluation (Zhang et al., 2025, arXiv:2504.20630).

Two separate protocols, as the paper keeps them apart:

- single sentence (:func:`~speech_drame.protocols.isdrama.protocol.score_sentences`): CER against
  the script, SIM against the prompt audio, FFE against the ground-truth recording;
- full drama (:func:`~speech_drame.protocols.isdrama.protocol.score_dramas`): IPD/ILD as the
  released evaluator computes it (default) or as wrapped mel-band MAE, ANG/DIS cosine of
  per-window spatial-model outputs and a GCC-PHAT direction check.

The math lives in :mod:`.official_cues` (released IPD/ILD), :mod:`.spatial` (wrapped-band
IPD/ILD, GCC-PHAT), :mod:`.f0_frame_error`, :mod:`.spatial_embedder` and
:mod:`speech_drame.text_metrics` (CER); :mod:`.manifest` reads the inputs.
"""

from ..._lazy import lazy_attributes

__all__ = [
    "ProtocolResult",
    "read_manifest",
    "score_dramas",
    "score_sentences",
    "write_results",
]
_MODULES = {
    ".protocol": ("ProtocolResult", "score_dramas", "score_sentences", "write_results"),
    ".manifest": ("read_manifest",),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
