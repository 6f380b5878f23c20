"""The data side: an official-format EvalBench release -> a Hub-ready dataset folder.

- :mod:`.release`: reading a release folder (JSONL or JSON files, splits, ``wav_path`` resolution,
  audio archives);
- :mod:`.hub_source`: a release given as a Hub dataset id, downloaded into the Hub cache;
- :mod:`.features`: the ``datasets.Features`` of each config and the row a record becomes;
- :mod:`.build`: the streamed, atomic build of the parquet folder and its build report;
- :mod:`.card`: the folder's ``README.md`` dataset card (template ``templates/datasetcard.md``);
- :mod:`.summary`: rows, hours and label distributions of a built folder.

The names below are imported on first use, so ``import speech_drame.data`` loads neither
``datasets`` nor ``pyarrow``.
"""

from .._lazy import lazy_attributes

__all__ = [
    "ArchiveError",
    "BuildError",
    "BuildReport",
    "JsonlFile",
    "RawLine",
    "build_dataset",
    "config_features",
    "extract_archives",
    "find_jsonl_files",
    "format_summary",
    "iter_lines",
    "iter_release",
    "labels_are_synthetic",
    "open_source",
    "record_row",
    "render_card",
    "summarize",
    "summarize_dataset",
    "synthetic_label_note",
]
_MODULES = {
    ".build": ("BuildError", "BuildReport", "build_dataset", "summarize"),
    ".card": ("labels_are_synthetic", "render_card", "synthetic_label_note"),
    ".features": ("config_features", "record_row"),
    ".hub_source": ("open_source",),
    ".release": (
        "ArchiveError",
        "JsonlFile",
        "RawLine",
        "extract_archives",
        "find_jsonl_files",
        "iter_lines",
        "iter_release",
    ),
    ".summary": ("format_summary", "summarize_dataset"),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
