"""Offline speech features of a clip (ASR, DNSMOS, speaker, VAD, prosody, text context).

Each extractor is a module with a typed function over a 16 kHz :class:`speech_drame.audio.Audio`;
:mod:`speech_drame.features.blueprint` combines them, with caching, into one record per clip.
Heavy libraries are imported on first use.
"""

from .._lazy import lazy_attributes

__all__ = [
    "Blueprint",
    "FeatureCache",
    "FeatureError",
    "audio_features",
    "default_cache_dir",
    "extract_blueprint",
    "extract_blueprints",
    "iter_blueprints",
]
_MODULES = {
    ".blueprint": (
        "Blueprint",
        "FeatureError",
        "audio_features",
        "extract_blueprint",
        "extract_blueprints",
        "iter_blueprints",
    ),
    ".cache": ("FeatureCache", "default_cache_dir"),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
