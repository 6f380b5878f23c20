"""Audio-LLM plumbing shared by DRAME-Eval training and scoring (Qwen2-Audio)."""

from .._lazy import lazy_attributes

__all__ = [
    "DEFAULT_MODEL",
    "PromptEncoder",
    "TINY_MODEL",
    "build_tiny",
    "load_base",
    "prefix_text",
    "suffix_text",
]
_MODULES = {
    ".qwen2_audio": ("DEFAULT_MODEL", "PromptEncoder", "load_base", "prefix_text", "suffix_text"),
    ".tiny": ("TINY_MODEL", "build_tiny"),
}
__getattr__, __dir__ = lazy_attributes(
    __name__, {name: module for module, names in _MODULES.items() for name in names}
)
