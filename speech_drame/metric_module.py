"""The ``evaluate`` module ``drame_metric``: where its script is, and registering it so that
``evaluate.load("drame_metric")`` resolves from any folder, offline.

For a bare name that is no local folder, ``evaluate.load`` (0.4.6, ``evaluation_module_factory``)
asks the Hub for ``evaluate-metric/NAME`` and, when that fails (offline, or no such metric there),
takes the newest copy in its module cache that such a download left:
``$HF_MODULES_CACHE/evaluate_modules/metrics/evaluate-metric--NAME/HASH/NAME.py``
(``CachedEvaluationModuleFactory``). :func:`install_metric` writes that copy with ``evaluate``'s
own cache writer, so the name then loads as a cached module does; ``speech-drame install-metric``
calls it (``make setup`` too), and again after the script changes (the newest copy wins).
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

METRIC_NAME = "drame_metric"
SCRIPT = Path("evaluate_metric", METRIC_NAME, f"{METRIC_NAME}.py")  # in the checkout and wheel
_CHECKOUT = Path(__file__).resolve().parents[1] / SCRIPT


def metric_script() -> Path:
    """The module's script: the checkout's ``evaluate_metric/drame_metric/drame_metric.py``,
    else (an installed wheel) the copy ``setup.py`` ships inside the package."""
    if _CHECKOUT.is_file():
        return _CHECKOUT
    return Path(str(files("speech_drame").joinpath(SCRIPT.as_posix())))


def install_metric(modules_cache: str | os.PathLike | None = None) -> Path:
    """Register :func:`metric_script` in ``evaluate``'s module cache (``modules_cache``, default
    ``$HF_MODULES_CACHE``, i.e. ``$HF_HOME/modules``) under the name ``drame_metric``; returns the
    registered copy. Registering the same script again changes nothing.

    Raises:
        MissingExtra: ``evaluate`` is not installed (the ``train`` extra).
        FileNotFoundError: the script is missing (a broken install).
    """
    from speech_drame.extras import require

    require("evaluate", "evaluate.load('drame_metric')")
    from evaluate.loading import _create_importable_file, init_dynamic_modules

    script = metric_script()
    if not script.is_file():
        raise FileNotFoundError(f"{script}: the drame_metric module is missing: reinstall")
    modules = init_dynamic_modules(hf_modules_cache=modules_cache)
    module_path, _ = _create_importable_file(
        local_path=str(script),
        local_imports=[],
        additional_files=[],
        dynamic_modules_path=modules,
        module_namespace="metrics",
        name=f"evaluate-metric/{METRIC_NAME}",  # what a download of the bare name is cached as
        download_mode=None,
    )
    return Path(modules).parent.joinpath(*module_path.split(".")).with_suffix(".py")
