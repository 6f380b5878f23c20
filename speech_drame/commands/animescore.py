"""`speech-drame animescore`: AnimeScore-style pairwise ranker (train, score, baseline, demo pairs).

Relative audio paths in a pair CSV (or a ``--list`` file) are relative to that file's folder,
so the commands work from any current folder; ``demo-pairs`` writes them that way. A clip that
cannot be read is reported and the rest goes on: ``score`` scores the other files, ``train``
and ``baseline`` leave out the pairs of that clip; the exit status is then 1.

``train --preset`` takes a preset name or YAML file (default ``released``, the AnimeScore
release's settings); single options override it and the model folder records both.
``--pair-convention`` (default ``released``) is stated in every printed and saved result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..atomic_io import write_json, write_text
from .options import add_feature_cache_options, add_renamed_option, feature_cache


def _pairs(csv_path: str, args: argparse.Namespace):
    from ..protocols.animescore.pairs import load_pairs

    pairs = load_pairs(csv_path, args.audio_root, args.pair_convention)
    print(
        f"{csv_path}: {pairs.n_judgements} judgement(s) -> {len(pairs.pairs)} pair(s), "
        f"{len(pairs.ties)} tie(s) excluded (pair convention {pairs.convention})",
        file=sys.stderr,
    )
    return pairs


def _metrics_line(name: str, m: dict) -> str:
    return (
        f"{name}: {m['count']} pairs, accuracy {m['accuracy']:.4f}, NLL {m['nll']:.4f}, "
        f"ROC-AUC {m['roc_auc']:.4f} (pair convention {m['pair_convention']})"
    )


def _convention_line(name: str) -> str:
    from ..protocols.animescore.config import PAIR_CONVENTIONS

    return f"pair convention {name}: {PAIR_CONVENTIONS[name]}"


# `train` options that override a setting of the --config file: option dest -> config field
OVERRIDES = {
    "lstm_hidden": "lstm_hidden",
    "mlp_hidden": "mlp_hidden",
    "layer_norm": "layer_norm",
    "frame_standardise": "frame_standardise",
    "learning_rate": "learning_rate",
    "batch_pairs": "batch_pairs",
    "epochs": "max_epochs",
    "patience": "patience",
    "val_fraction": "val_fraction",
    "seed": "seed",
}


def _report_unreadable(what: str, unreadable: dict[str, str], left_out: int) -> int:
    """Print the unreadable clips of a pair set to stderr; the number of clips."""
    for reason in unreadable.values():
        print(f"not readable: {reason}", file=sys.stderr)
    if unreadable:
        print(
            f"{what}: {left_out} pair(s) left out: {len(unreadable)} clip(s) could not be read",
            file=sys.stderr,
        )
    return len(unreadable)


def _train(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..protocols.animescore.config import load_config
    from ..protocols.animescore.encoders import WHISPER, build_encoder
    from ..protocols.animescore.ranker import train_ranker

    overrides = {
        field: getattr(args, dest)
        for dest, field in OVERRIDES.items()
        if getattr(args, dest) is not None
    }
    config = replace(load_config(args.preset), **overrides)
    if (
        args.val_pairs
        and args.test_pairs
        and Path(args.val_pairs).resolve() == Path(args.test_pairs).resolve()
    ):
        raise ValueError(
            f"--val-pairs and --test-pairs are the same file ({args.test_pairs}): the test pairs "
            "would choose the epoch; hold out validation pairs from the training data instead"
        )
    if args.encoder == WHISPER:
        encoder = build_encoder({"kind": "whisper"})
    else:
        encoder = build_encoder({"kind": "hf", "name": args.encoder, "layer": args.layer})
    pairs = _pairs(args.pairs, args)
    val_pairs = _pairs(args.val_pairs, args) if args.val_pairs else None
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    ranker = train_ranker(
        pairs, encoder, config, feature_cache(args), log, not args.quiet, val_pairs
    )
    s = ranker.summary
    s["config_source"], s["config_overrides"] = args.preset, overrides
    problems = _report_unreadable("train", s["unreadable"], s["pairs_left_out"])
    out = ranker.save(args.out)
    metrics = {}
    for name, csv_path in (("test", args.test_pairs), ("ood", args.ood_pairs)):
        if csv_path:
            eval_pairs = _pairs(csv_path, args)
            m = metrics[name] = ranker.evaluate(eval_pairs, feature_cache(args), not args.quiet)
            print(_metrics_line(name, m))
            problems += _report_unreadable(name, m["unreadable"], m["pairs_left_out"])
    write_json(out / "metrics.json", metrics)
    changed = ", ".join(f"{k}={v}" for k, v in overrides.items()) or "none"
    print(f"config {config.name} ({args.preset}; overridden: {changed})")
    print(_convention_line(pairs.convention))
    print(
        f"saved {out} (best epoch {s['best_epoch']} of {s['epochs_run']}, "
        f"val NLL {s['best_val_nll']:.4f}, {s['train_pairs']} train / {s['val_pairs']} val pairs; "
        f"epoch chosen by {s['selection']})"
    )
    return 1 if problems else 0


def _list_file(path: str) -> list[str]:
    """Audio paths of a ``--list`` file; relative ones are relative to the list's folder."""
    folder = Path(path).parent
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [os.path.normpath(folder / line.strip()) for line in lines if line.strip()]


def _score(args: argparse.Namespace) -> int:
    from ..protocols.animescore.ranker import Ranker

    paths = list(args.files) + (_list_file(args.list) if args.list else [])
    if not paths:
        raise ValueError("no audio files given (positional FILES or --list)")
    scores, errors = Ranker.load(args.model).score_files(
        paths, feature_cache(args), args.batch_size
    )
    if args.json:
        rows = [
            {"file": p, "score": scores[i]} if i in scores else {"file": p, "error": errors[i]}
            for i, p in enumerate(paths)
        ]
        print(json.dumps(rows))
    else:
        for i in sorted(scores):
            print(f"{scores[i]:.6f}\t{paths[i]}")
    for reason in errors.values():
        print(f"not scored: {reason}", file=sys.stderr)
    if errors:
        print(f"{len(errors)} of {len(paths)} file(s) could not be scored", file=sys.stderr)
        return 1
    return 0


def _baseline(args: argparse.Namespace) -> int:
    from ..protocols.animescore.baseline import run_baseline

    result = run_baseline(_pairs(args.pairs, args), feature_cache(args), args.folds, args.seed)
    print(_metrics_line(f"baseline ({args.folds}-fold CV)", result))
    print(_convention_line(result["pair_convention"]))
    top = ", ".join(f"{k} {v:+.3f}" for k, v in list(result["coefficients"].items())[:4])
    print(f"largest standardised coefficients: {top}")
    if args.json_out:
        print(f"wrote {write_json(args.json_out, result)}")
    problems = _report_unreadable("baseline", result["unreadable"], result["pairs_left_out"])
    return 1 if problems else 0


def _demo_pairs(args: argparse.Namespace) -> int:
    from ..protocols.animescore.pairs import SYNTHETIC_NOTE, demo_pairs, write_pairs

    sets = demo_pairs(args.release, args.seed)
    out = Path(args.out)
    for split, pairs in sorted(sets.items()):
        path = write_pairs(pairs.pairs, out / f"pairs_{split}.csv")
        print(f"wrote {path} ({len(pairs.pairs)} pairs)")
    write_text(
        out / "README.md",
        f"# Demo AnimeScore-style pairs\n\n{SYNTHETIC_NOTE}.\n\n"
        "Audio paths are relative to this folder.\n",
    )
    print(f"note: {SYNTHETIC_NOTE}")
    return 0


def run(args: argparse.Namespace) -> int:
    return args.action(args)


def _common(sub: argparse.ArgumentParser) -> None:
    add_feature_cache_options(sub)
    sub.set_defaults(func=run)


def _pair_args(sub: argparse.ArgumentParser, seed: int | None = 0) -> None:
    from ..protocols.animescore.config import DEFAULT_PAIR_CONVENTION, PAIR_CONVENTIONS

    sub.add_argument(
        "--pairs",
        required=True,
        help="pair CSV: file_a,file_b,choice(+1/-1) (aliases audio_a/wav_a, label/preference); "
        "relative audio paths are relative to the CSV's folder",
    )
    sub.add_argument(
        "--audio-root",
        help="resolve the CSVs' relative audio paths against this folder instead of each "
        "CSV's own folder",
    )
    sub.add_argument(
        "--pair-convention",
        choices=sorted(PAIR_CONVENTIONS),
        default=DEFAULT_PAIR_CONVENTION,
        help="how pair CSVs are read and accuracy is counted: released = every row its own "
        "pair, a score difference of 0 predicts B (the AnimeScore release); majority = repeated "
        "judgements of two clips merged by majority vote, 1-1 ties left out, 0 counts half",
    )
    sub.add_argument(
        "--seed",
        type=int,
        default=seed,
        help="seed" if seed is not None else "seed (default: the config's)",
    )


def register(subparsers) -> None:
    from ..protocols.animescore.config import DEFAULT_CONFIG, PRESETS

    parser = subparsers.add_parser("animescore", help=__doc__.split("\n", 1)[0].split(": ", 1)[1])
    actions = parser.add_subparsers(dest="animescore_action", required=True, metavar="ACTION")

    train = actions.add_parser("train", help="train the BiLSTM ranker on preference pairs")
    _pair_args(train, seed=None)
    train.add_argument("--out", required=True, help="folder for model.safetensors + config.json")
    add_renamed_option(
        train,
        "--preset",
        "--config",
        default=DEFAULT_CONFIG,
        help="ranker settings: a YAML file (configs/animescore_released.yaml, "
        "configs/animescore_compact.yaml) or a preset name: released (the AnimeScore release's "
        "head and optimiser) or compact (this package's earlier small head); the options "
        "below override single settings",
    )
    train.add_argument(
        "--encoder",
        default="whisper-base",
        help="whisper-base (offline default: the multilingual Whisper base encoder of the ASR) or a transformers SSL model name/folder",
    )
    train.add_argument("--layer", type=int, default=-1, help="hidden layer of an SSL encoder")
    train.add_argument(
        "--val-pairs",
        help="pair CSV that chooses the epoch (lowest NLL); default: a seeded share "
        "(--val-fraction) of the training pairs. Never pass the test pairs here",
    )
    train.add_argument("--test-pairs", help="pair CSV evaluated after training")
    train.add_argument("--ood-pairs", help="out-of-distribution pair CSV evaluated after training")

    def setting(field: str) -> str:
        values = ", ".join(f"{n} {getattr(c, field)}" for n, c in PRESETS.items())
        return f"(default: the config's; {values})"

    train.add_argument("--epochs", type=int, help="maximum epochs " + setting("max_epochs"))
    train.add_argument(
        "--patience",
        type=int,
        help="stop after this many epochs without a better validation NLL, 0 = never "
        + setting("patience"),
    )
    train.add_argument("--batch-pairs", type=int, help="pairs per step " + setting("batch_pairs"))
    train.add_argument("--learning-rate", type=float, help=setting("learning_rate"))
    train.add_argument("--lstm-hidden", type=int, help=setting("lstm_hidden"))
    train.add_argument("--mlp-hidden", type=int, help=setting("mlp_hidden"))
    train.add_argument(
        "--layer-norm",
        action=argparse.BooleanOptionalAction,
        help="LayerNorm and dropout before the MLP " + setting("layer_norm"),
    )
    train.add_argument(
        "--frame-standardise",
        action=argparse.BooleanOptionalAction,
        help="standardise encoder frames with the training clips' statistics "
        + setting("frame_standardise"),
    )
    train.add_argument(
        "--val-fraction",
        type=float,
        help="share of the training pairs that chooses the epoch when --val-pairs is not given "
        + setting("val_fraction"),
    )
    train.add_argument("--quiet", action="store_true", help="no progress bars or per-epoch lines")
    _common(train)
    train.set_defaults(action=_train)

    score = actions.add_parser("score", help="score audio files with a trained ranker")
    score.add_argument("--model", required=True, help="folder written by `animescore train`")
    score.add_argument("files", nargs="*", help="audio files")
    score.add_argument(
        "--list", help="text file with one audio path per line (relative to the file's folder)"
    )
    score.add_argument("--batch-size", type=int, default=32)
    score.add_argument("--json", action="store_true", help="print a JSON list")
    _common(score)
    score.set_defaults(action=_score)

    baseline = actions.add_parser(
        "baseline", help="handcrafted features + logistic regression, k-fold CV"
    )
    _pair_args(baseline)
    baseline.add_argument("--folds", type=int, default=5)
    baseline.add_argument("--json-out", metavar="PATH", help="write the full result as JSON here")
    _common(baseline)
    baseline.set_defaults(action=_baseline)

    demo = actions.add_parser(
        "demo-pairs", help="synthetic pairs from a demo release (less degraded preferred)"
    )
    demo.add_argument("--release", default="build/demo_release", help="demo release folder")
    demo.add_argument(
        "--out",
        required=True,
        help="folder for pairs_<split>.csv (audio paths written relative to it)",
    )
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=run, action=_demo_pairs)
