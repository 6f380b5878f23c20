"""A trained LiteScorer made ready to leave the machine (``train-lite --push-to-hub``,
``push-lite``, ``speech-drame space bundle``): its files copied with local paths reduced to
names, plus its model card (:func:`speech_drame.hub.cards.render_lite_model_card`), and pushed
(:func:`push_lite_scorer`, through :func:`speech_drame.hub.push.push_folder`).

``train-lite`` records the ``--dataset`` folder and the scorer folders as paths of the training
machine; the published copy names the dataset by its folder name (a Hub id stays) and each
scorer by its config, wherever those paths appear (failure reasons included).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ...atomic_io import write_bytes, write_json, write_text
from ...hub.push import push_folder
from ...schema import CONFIGS
from .model import CONFIG_FILE, WEIGHTS_FILE
from .training import METRICS_FILE

CARD = "README.md"
LITE_COMMIT_MESSAGE = "Upload LiteScorer (speech-drame train-lite)"


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _renamed(value: Any, paths: dict[str, str]) -> Any:
    """``value`` with each local path of ``paths`` (longest first) replaced in every string."""
    if isinstance(value, dict):
        return {k: _renamed(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, paths) for v in value]
    if isinstance(value, str):
        for path in sorted(paths, key=len, reverse=True):
            value = value.replace(path, paths[path])
    return value


def _local_paths(path: str | os.PathLike, name: str) -> dict[str, str]:
    """The spellings of a local ``path`` (as given and absolute) mapped to ``name``."""
    given = str(path)
    return {given: name, str(Path(given).resolve()): name} if Path(given).exists() else {}


def _parent_paths(parent: dict[str, Any]) -> dict[str, str]:
    """The local paths a fine-tuned scorer records of its parent, mapped to names: its folder
    to the source's folder name (or Hub id), with the config folder under it when there is
    one; its training dataset to its folder name."""
    from ...hub.cards import dataset_name

    source, path = parent.get("source") or "", parent.get("path")
    name = parent.get("hub_id") or Path(source).name or "parent"
    out = _local_paths(source, name) if source and not parent.get("hub_id") else {}
    if path:
        same = bool(source) and Path(source).resolve() == Path(path).resolve()
        out[path] = name if same else f"{name}/{Path(path).name}"
    if parent.get("dataset"):
        out |= _local_paths(parent["dataset"], dataset_name(parent["dataset"]))
    return out


def stage_lite_scorer(
    out_dir: str | os.PathLike, target: str | os.PathLike, model_id: str
) -> list[Path]:
    """Copy the ``train-lite`` output ``out_dir`` into ``target`` as published: ``README.md``
    (the model card, titled ``model_id``), ``metrics.json`` and each config's scorer files.
    Returns those files relative to ``target``.

    Raises:
        FileNotFoundError: no ``metrics.json`` (training did not finish) or a scorer file named
            in it is missing.
    """
    from ...hub.cards import dataset_name, lite_data_card, render_lite_model_card

    out, target = Path(out_dir), Path(target)
    if not (out / METRICS_FILE).is_file():
        raise FileNotFoundError(
            f"{out / METRICS_FILE}: no finished train-lite run to publish (train it first)"
        )
    metrics = _read_json(out / METRICS_FILE)
    data_card = lite_data_card(metrics["dataset"])  # read where the training data is
    paths = _local_paths(metrics["dataset"], dataset_name(metrics["dataset"]))
    for config, entry in metrics["configs"].items():
        paths |= _local_paths(entry["scorer"], config)
        if entry.get("init"):
            paths |= _parent_paths(entry["init"]["parent"])
    files, versions = [Path(CARD), Path(METRICS_FILE)], {}
    for config in metrics["configs"]:
        scorer = [Path(config, CONFIG_FILE), Path(config, WEIGHTS_FILE)]
        missing = [str(out / f) for f in scorer if not (out / f).is_file()]
        if missing:
            raise FileNotFoundError(f"cannot publish {out}: missing {', '.join(missing)}")
        cfg = _read_json(out / scorer[0])
        versions[config] = cfg["feature_versions"]
        (target / config).mkdir(parents=True, exist_ok=True)
        write_json(target / scorer[0], _renamed(cfg, paths))
        shutil.copyfile(out / scorer[1], target / scorer[1])
        files += scorer
    published = _renamed(metrics, paths)
    write_json(target / METRICS_FILE, published)
    card = render_lite_model_card(
        model_id=model_id,
        metrics=published,
        feature_versions=versions,
        data_card=data_card,
    )
    write_text(target / CARD, card)
    return files


def push_lite_scorer(
    out_dir: str | os.PathLike,
    repo_id: str,
    *,
    dry_run: bool,
    private: bool | None = None,
    token: str | None = None,
) -> str | None:
    """Push a ``train-lite`` output folder to ``repo_id`` in one commit, as
    :func:`stage_lite_scorer` publishes it (model card, local paths reduced to names); scorer
    folders an earlier push left and this one lacks are deleted. The card is also written to
    ``out_dir/README.md``, dry run or not. Returns the commit URL (``None`` for a dry run)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="lite-push-") as stage:
        files = stage_lite_scorer(out_dir, stage, repo_id)
        write_bytes(Path(out_dir, CARD), Path(stage, CARD).read_bytes())
        return push_folder(
            stage,
            files,
            repo_id,
            dry_run=dry_run,
            commit_message=LITE_COMMIT_MESSAGE,
            replace_under=CONFIGS,
            private=private,
            token=token,
        )
