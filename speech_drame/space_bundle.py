"""A folder that is a complete Hugging Face Space (``speech-drame space bundle``), made from
the checkout's ``space/`` (:data:`SPACE_FOLDER`, the Space as it is deployed): a copy of it, then
what is particular to the bundle and its scorer.

From ``space/`` as it is: ``app.py`` (starts :func:`speech_drame.space_app.build_app`),
``packages.txt`` (the Debian packages, :data:`DEBIAN_PACKAGES`) and ``examples/`` (the clips the
page offers). Rendered for the bundle:

- ``README.md``: the Space card (front matter: Gradio SDK and version, licence, models);
- ``requirements.txt``: installable with a plain ``pip install -r`` (no ``--no-deps``): the
  package wheel beside it with its ``features`` and ``space`` extras (``train`` too for a
  DRAME-Eval scorer), torch's CPU build from :data:`TORCH_CPU_INDEX`, and the repository's
  pins (``requirements.txt``) of every package those name;
- ``scorer.txt``: the scorer spec (:data:`SPEC_FILE`);

plus the wheel, built from the checkout (:mod:`speech_drame.source_wheel`), and ``scorer/``: a
LiteScorer's files and model card (:mod:`speech_drame.scorers.lite.publish`). A DRAME-Eval
evaluator or a judge is not copied: the Space loads it from its spec.

The checked-in ``space/README.md`` and ``space/requirements.txt`` are these files rendered for
the checkout itself (scorer ``lite``, the package from ``..``): :func:`checked_in_files`.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from .atomic_io import replace_dir, staging_dir, write_text
from .errors import UsageError
from .source_wheel import build_wheel, checkout_root
from .space_app import MAX_QUEUE, MAX_SECONDS, MAX_UPLOAD_MB, SPEC_FILE, TEMP_FILES

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
DEBIAN_PACKAGES = ("ffmpeg",)  # torchcodec decodes compressed uploads with FFmpeg's libraries
SPACE_FOLDER = "space"  # in the checkout
SCORER_FOLDER = "scorer"
SPACE_EXTRAS = ("features", "space")
CHECKOUT_PACKAGE = ".."  # the package, in the checked-in space/requirements.txt
# the files every bundle has, earlier ones too
BUNDLE_FILES = ("app.py", "README.md", "requirements.txt", "packages.txt")
RENDERED = ("README.md", "requirements.txt")  # the files of space/ rendered for a bundle


class BundleError(UsageError):
    """The Space cannot be bundled as asked."""


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _normalise(re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0])


def pinned_requirements(extras: tuple[str, ...], root: Path) -> list[str]:
    """The pins in ``root/requirements.txt`` of the package's core dependencies and of
    ``extras`` (torch excepted, see :func:`requirements_text`), in the file's order."""
    import tomllib

    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {_requirement_name(r) for r in project["dependencies"]}
    for extra in extras:
        wanted |= {_requirement_name(r) for r in project["optional-dependencies"][extra]}
    wanted.discard("torch")
    lines = (root / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [
        line.strip()
        for line in lines
        if "==" in line and not line.lstrip().startswith("#") and _requirement_name(line) in wanted
    ]


def requirements_text(
    package: str, extras: tuple[str, ...], pins: list[str], root: Path, torch_index: str
) -> str:
    """A Space's ``requirements.txt``: ``package`` (the wheel's path, or the checkout's) with
    its ``extras``, torch, and the ``pins`` of :func:`pinned_requirements`."""
    torch = next(
        line.strip()
        for line in (root / "constraints.txt").read_text(encoding="utf-8").splitlines()
        if _requirement_name(line) == "torch" and "==" in line
    )
    where = (
        "the package from the checkout (run pip in space/)"
        if package == CHECKOUT_PACKAGE
        else "the package wheel beside this file"
    )
    head = [
        f"# The Space's environment (speech-drame space bundle): {where}",
        f"# with its {' and '.join(extras)} extras, and the versions the repository is tested with.",
    ]
    if torch_index:
        head += [f"--extra-index-url {torch_index}"]
    return "\n".join([*head, torch, f"{package}[{','.join(extras)}]", *pins]) + "\n"


def _space_card(
    spec: str,
    folder: str | None,
    info: dict,
    torch_index: str,
    hub_model: str | None,
    pins: list[str],
    extras: tuple[str, ...],
    wheel: str | None,
) -> str:
    from huggingface_hub import SpaceCard, SpaceCardData

    import speech_drame

    from . import templates
    from .audio import SCORED_SECONDS

    gradio_version = next(
        line.split("==")[1] for line in pins if _requirement_name(line) == "gradio"
    )
    data = SpaceCardData(
        title="Speech-DRAME scorer",
        emoji="🎭",
        colorFrom="indigo",
        colorTo="pink",
        sdk="gradio",
        sdk_version=gradio_version,
        app_file="app.py",
        pinned=False,
        license="apache-2.0",
        short_description="Score spoken role-play clips on the Speech-DRAME rubrics",
        models=[hub_model] if hub_model else None,
        tags=["speech-drame", "audio", "role-play", "evaluation"],
    )
    return templates.render(
        SpaceCard,
        data,
        templates.read_template(templates.SPACE_README),
        spec=spec,
        scorer_folder=folder,
        version=speech_drame.__version__,
        torch_index=torch_index,
        extras=extras,
        wheel=wheel,
        debian=DEBIAN_PACKAGES,
        scored_seconds=f"{SCORED_SECONDS:.0f}",
        max_upload_mb=MAX_UPLOAD_MB,
        max_minutes=f"{MAX_SECONDS / 60:.0f}",
        delete_every=TEMP_FILES[0] // 60,
        delete_after=TEMP_FILES[1] // 60,
        max_queue=MAX_QUEUE,
        **info,
    )


def _lite_info(scorer_dir: Path) -> dict:
    """What the Space card says of a bundled LiteScorer: its data, licence, synthetic labels."""
    import json

    from .hub.cards import dataset_name, lite_data_card

    metrics = json.loads((scorer_dir / "metrics.json").read_text(encoding="utf-8"))
    trainings = [entry["training"] for entry in metrics["configs"].values()]
    synthetic = [t for t in trainings if t.get("labels_are_synthetic")]
    return {
        "trained_on": dataset_name(metrics["dataset"]),
        "data_license": lite_data_card(metrics["dataset"]).license,
        "synthetic": bool(synthetic),
        "synthetic_note": (synthetic[0].get("label_note") or "") if synthetic else "",
    }


def bundle_space(
    out: str | os.PathLike,
    scorer: str = "lite",
    *,
    torch_index: str = TORCH_CPU_INDEX,
    overwrite: bool = False,
) -> list[Path]:
    """Assemble the Space folder ``out`` (see the module docstring) scoring with the scorer
    spec ``scorer``; returns its files, relative to ``out``. The folder appears complete or not
    at all (built beside it, then swapped in).

    Raises:
        BundleError: ``out`` may not be replaced (only an empty folder or an earlier bundle,
            with ``overwrite``, ever is; never the checkout), or the scorer is a
            local DRAME-Eval folder (push it to the Hub and bundle ``drame-eval:ORG/NAME``).
        FileNotFoundError: not a source checkout, or the LiteScorer is not trained.
    """
    from .scorers.lite.model import default_scorer_dir
    from .scorers.lite.publish import stage_lite_scorer
    from .scorers.lite.scorer import resolve_scorer_path
    from .scorers.specs import parse_spec

    out = _check_out(out, overwrite)
    parsed = parse_spec(scorer)
    extras = SPACE_EXTRAS + (("train",) if parsed.kind == "drame-eval" else ())
    if parsed.kind == "drame-eval" and Path(parsed.target).exists():
        raise BundleError(
            f"{parsed.target}: a local DRAME-Eval evaluator is not copied into a Space (several "
            "GB); push it (train.py --push_to_hub ORG/NAME) and bundle drame-eval:ORG/NAME"
        )
    root = checkout_root()
    stage = staging_dir(out)
    try:
        _copy_space_folder(root, stage)
        wheel = build_wheel(stage).name
        folder, info, hub_model, spec = None, {}, None, scorer
        if parsed.kind == "lite":  # copied in: the Space names it by its folder, not this path
            source = resolve_scorer_path(parsed.target) or default_scorer_dir()
            folder, spec = SCORER_FOLDER, f"lite:{SCORER_FOLDER}"
            if parsed.target and not Path(parsed.target).exists():
                hub_model = parsed.target.split("@")[0]
            stage_lite_scorer(source, stage / folder, hub_model or SCORER_FOLDER)
            info = _lite_info(source)
        elif parsed.kind == "drame-eval":
            hub_model = parsed.target.split("@")[0]
        write_text(stage / SPEC_FILE, spec + "\n")
        pins = pinned_requirements(extras, root)
        requirements = requirements_text(f"./{wheel}", extras, pins, root, torch_index)
        write_text(stage / "requirements.txt", requirements)
        card = _space_card(spec, folder, info, torch_index, hub_model, pins, extras, wheel)
        write_text(stage / "README.md", card)
        files = bundle_files(stage)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    replace_dir(stage, out)
    return files


def _copy_space_folder(root: Path, stage: Path) -> None:
    """The checkout's ``space/`` into the new folder ``stage``, without the files a bundle
    renders for itself (:data:`RENDERED`)."""
    source = root / SPACE_FOLDER
    if not (source / "app.py").is_file():
        raise FileNotFoundError(f"{source}: the Space folder of the checkout is missing")
    ignore = shutil.ignore_patterns("__pycache__", *RENDERED, SPEC_FILE, SCORER_FOLDER)
    shutil.copytree(source, stage, ignore=ignore, dirs_exist_ok=True)


def checked_in_files(root: Path | None = None) -> dict[str, str]:
    """What the checkout's ``space/README.md`` and ``space/requirements.txt`` hold: the bundle's
    files rendered for the checkout (scorer ``lite``, the package from :data:`CHECKOUT_PACKAGE`,
    torch from :data:`TORCH_CPU_INDEX`). ``tests/test_space_bundle.py`` fails when they drift;
    write them again with ``python -c "from speech_drame.space_bundle import write_checked_in;
    write_checked_in()"``."""
    root = root or checkout_root()
    pins = pinned_requirements(SPACE_EXTRAS, root)
    return {
        "README.md": _space_card(
            "lite", None, {}, TORCH_CPU_INDEX, None, pins, SPACE_EXTRAS, None
        ),  # fmt: skip
        "requirements.txt": requirements_text(
            CHECKOUT_PACKAGE, SPACE_EXTRAS, pins, root, TORCH_CPU_INDEX
        ),
    }


def write_checked_in(root: Path | None = None) -> None:
    """Write :func:`checked_in_files` into the checkout's ``space/``."""
    root = root or checkout_root()
    for name, text in checked_in_files(root).items():
        write_text(root / SPACE_FOLDER / name, text)


def _check_out(out: str | os.PathLike, overwrite: bool) -> Path:
    """The folder a bundle may replace: missing, empty, or an earlier bundle with ``overwrite``
    (:func:`~speech_drame.atomic_io.replaceable_folder`); not the checkout it is built from."""
    from .atomic_io import FolderRefused, replaceable_folder

    def is_bundle(folder: Path) -> bool:
        try:
            bundle_files(folder)
        except FileNotFoundError:
            return False
        return True

    try:
        return replaceable_folder(out, "Space bundle", is_bundle, overwrite=overwrite,
                                  holds=[("the checkout", checkout_root())])  # fmt: skip
    except FolderRefused as exc:
        raise BundleError(str(exc)) from None


def bundle_files(folder: str | os.PathLike) -> list[Path]:
    """Every file of a Space bundle, relative to it and sorted.

    Raises:
        FileNotFoundError: ``folder`` lacks a file every bundle has, or the wheel.
    """
    root = Path(folder)
    missing = [name for name in BUNDLE_FILES if not (root / name).is_file()]
    if not list(root.glob("speech_drame-*.whl")):
        missing.append("speech_drame-*.whl")
    if missing:
        raise FileNotFoundError(
            f"{root}: not a Space bundle (missing {', '.join(missing)}); make one with "
            "speech-drame space bundle --out DIR"
        )
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())
