"""The data side: an official-format EvalBench release -> a Hub-ready dataset folder, and back.

- :mod:`.release`: reading a release folder (JSONL or JSON files, splits, ``wav_path`` resolution,
  audio archives);
- :mod:`.audio_dirs`: audio kept apart from the release (``--audio-dir``), found by file name;
- :mod:`.hub_source`: a release given as a Hub dataset id, downloaded into the Hub cache;
- :mod:`.features`: the ``datasets.Features`` of each config and the row a record becomes;
- :mod:`.build`: the streamed, atomic build of the parquet folder and its build report;
- :mod:`.card`: the folder's ``README.md`` dataset card (template ``model_card/datasetcard.md``);
- :mod:`.reader`: the one reader of built folders (:func:`open_split`: streamed columns, which
  clips have audio, :func:`require_audio`);
- :mod:`.examples`: a built split's clips as scorer inputs (:class:`SplitStream`);
- :mod:`.summary`: rows, hours and label distributions of a built folder.

The names below are imported on first use, so ``import speech_drame.data`` loads neither
``datasets`` nor ``pyarrow``.
"""

from .._lazy import lazy_attributes

__all__ = [
    "ArchiveError",
    "AudioDirError",
    "BuildError",
    "BuildReport",
    "BuiltSplit",
    "DatasetError",
    "Example",
    "JsonlFile",
    "NoAudioError",
    "RawLine",
    "SplitStream",
    "build_dataset",
    "config_features",
    "dataset_configs",
    "dataset_splits",
    "extract_archives",
    "find_jsonl_files",
    "format_summary",
    "index_audio_dirs",
    "iter_lines",
    "iter_release",
    "labels_are_synthetic",
    "open_source",
    "open_split",
    "record_row",
    "render_card",
    "require_audio",
    "summarize",
    "summarize_dataset",
    "synthetic_label_note",
]
_MODULES = {
    ".audio_dirs": ("AudioDirError", "index_audio_dirs"),
    ".build": ("BuildError", "BuildReport", "build_dataset", "summarize"),
    ".card": ("labels_are_synthetic", "render_card", "synthetic_label_note"),
    ".features": ("config_features", "record_row"),
    ".examples": ("Example", "SplitStream"),
    ".hub_source": ("open_source",),
    ".reader": (
        "BuiltSplit",
        "DatasetError",
        "NoAudioError",
        "dataset_configs",
        "dataset_splits",
        "open_split",
        "require_audio",
    ),
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
