"""SpeechParaling-Bench: paralinguistic-aware speech generation judged candidate vs baseline.

- :mod:`.queries`: the query format (JSONL), the instruction builder and spoken queries;
- :mod:`.judges`: presentation order, the chat (audio LLM) judge and the offline comparator;
- :mod:`.scoring`: points, per-task and per-dimension scores, the baseline's weighted score,
  position bias and rank agreement with humans;
- :mod:`.protocol`: a run over queries and system responses;
- :mod:`.demo`: a small demo query set and demo systems.
"""

from ..._lazy import lazy_attributes

__all__ = [
    "ParalingRun",
    "Query",
    "build_report",
    "load_queries",
    "run_paraling",
    "write_queries",
]
_MODULES = {
    ".protocol": ("ParalingRun", "build_report", "run_paraling"),
    ".queries": ("Query", "load_queries", "write_queries"),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
