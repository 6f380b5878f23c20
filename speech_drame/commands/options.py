"""Option groups shared by the commands: context texts, the feature cache, the chat endpoint,
the scorer (``--scorer SPEC`` with the settings of each kind) and a push to the Hub."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..labels import DEFAULT_LABEL_POLICY, LABEL_POLICIES
from ..schema import CONTEXTS, Config

CONTEXT_HELP = {
    "question": "archetype: the role-play prompt (role and scene)",
    "profile": "realism: the character's global profile",
    "scene": "realism: the local scene",
    "traits": "realism: the character's style traits",
}


def add_context_options(parser: argparse.ArgumentParser) -> None:
    """``--question`` (archetype) and ``--profile/--scene/--traits`` (realism)."""
    group = parser.add_argument_group("context texts")
    for name, text in CONTEXT_HELP.items():
        group.add_argument(f"--{name}", help=text)


def context_from_args(args: argparse.Namespace, config: Config) -> dict[str, str]:
    """The context texts ``config`` needs, by short name.

    Raises:
        ValueError: naming the options that are missing or empty.
    """
    missing = [f"--{c}" for c in CONTEXTS[config] if not (getattr(args, c) or "").strip()]
    if missing:
        raise ValueError(f"--mode {config} needs {' '.join(missing)}")
    return {c: getattr(args, c) for c in CONTEXTS[config]}


def add_feature_cache_options(parser: argparse.ArgumentParser) -> None:
    """``--feature-cache DIR`` and ``--no-feature-cache``."""
    group = parser.add_argument_group("feature cache")
    group.add_argument(
        "--feature-cache",
        help="feature cache folder (default: $SPEECH_DRAME_CACHE or ~/.cache/speech-drame/features)",
    )
    group.add_argument(
        "--no-feature-cache", action="store_true", help="do not read or write the feature cache"
    )


def feature_cache(args: argparse.Namespace) -> Any:
    """The ``cache`` argument of the feature extractors for the options above."""
    return None if args.no_feature_cache else (args.feature_cache or "default")


def add_chat_options(
    parser: argparse.ArgumentParser, temperature: float = 0.0, endpoint: bool = True
) -> None:
    """Options of a chat endpoint: ``--endpoint`` and ``--model`` (unless ``endpoint`` is
    false: a scorer spec ``judge:MODEL@URL`` names them), retries, the response cache."""
    group = parser.add_argument_group("chat endpoint")
    if endpoint:
        group.add_argument(
            "--endpoint",
            help="base URL, e.g. http://127.0.0.1:8000/v1 (default: $SPEECH_DRAME_JUDGE_BASE_URL)",
        )
        group.add_argument("--model", help="model name (default: $SPEECH_DRAME_JUDGE_MODEL)")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    group.add_argument("--max-retries", type=int, default=5, help="retries on 429/5xx/timeouts")
    group.add_argument(
        "--response-cache", type=Path, help="folder of the response cache (reruns send nothing)"
    )
    group.add_argument(
        "--temperature", type=float, default=temperature, help="sampling temperature"
    )


def chat_client(args: argparse.Namespace, on_retry=None):
    """A :class:`~speech_drame.judges.ChatClient` for the options of :func:`add_chat_options`."""
    from ..judges import ChatClient

    return ChatClient(args.endpoint, args.model, timeout=args.timeout,
                      max_retries=args.max_retries, cache_dir=args.response_cache,
                      on_retry=on_retry)  # fmt: skip


def add_label_policy_option(group: Any, where: str) -> None:
    """``--label-policy paper|skip``: what a null or "N/A" rating counts as ``where``."""
    group.add_argument(
        "--label-policy",
        choices=tuple(LABEL_POLICIES),
        default=DEFAULT_LABEL_POLICY,
        help=f"what a null or N/A rating counts as {where}: "
        + "; ".join(f"{k}: {v}" for k, v in LABEL_POLICIES.items()),
    )


def add_judge_options(parser: argparse.ArgumentParser, failed_as: bool = True) -> None:
    """How a chat judge asks and counts (rubric, JSON runs or logprobs, few-shot exemplars and
    their gold labels, unusable answers; ``failed_as=False`` for a command whose own
    ``--failed-as`` decides)."""
    group = parser.add_argument_group("chat judge")
    group.add_argument(
        "--rubric",
        metavar="FILE|none",
        help="text file whose rubric replaces the built-in one; 'none': no rubric (default: the "
        "built-in rubric of every dimension with the rules for unusable clips)",
    )
    group.add_argument("--runs", type=int, default=5, help="requests averaged per clip (JSON mode)")
    group.add_argument("--max-tokens", type=int, help="JSON mode answer length limit")
    group.add_argument(
        "--logprobs",
        action="store_true",
        help="one request per dimension (archetype: Content Pass too); the score is read from "
        "the label tokens' probabilities (open models)",
    )
    group.add_argument("--top-logprobs", type=int, default=20, help="logprob mode: top_logprobs")
    group.add_argument(
        "--shots", type=int, default=0, help="few-shot exemplars (needs --train-dataset)"
    )
    group.add_argument("--train-dataset", type=Path, help="built dataset folder with a train split")
    group.add_argument(
        "--exemplars",
        choices=("random", "agreement"),
        default="random",
        help="random: drawn anew for every clip and run; agreement: one set whose annotators "
        "agree best with their rounded mean",
    )
    group.add_argument("--exemplar-seed", type=int, default=0, help="seed of the exemplar draws")
    add_label_policy_option(group, "in the exemplars' gold answers")
    if failed_as:
        group.add_argument(
            "--failed-as",
            choices=("skip", "1"),
            default="skip",
            help="skip: an unusable answer is a counted failure with no score; 1: an unusable "
            "answer, or a key missing from one, counts as 1 (the official scoring of the paper's "
            "zero/few-shot tables)",
        )


def _rubric_text(value: str | None) -> str | None:
    """``--rubric``: ``None`` (built-in), ``""`` (``none``) or the file's text."""
    if value is None:
        return None
    if value == "none":
        return ""
    try:
        text = Path(value).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--rubric {value}: cannot read it ({exc})") from None
    if not text.strip():
        raise ValueError(f"--rubric {value} is empty; pass '--rubric none' for no rubric")
    return text


def judge_options(args: argparse.Namespace):
    """:class:`~speech_drame.scorers.judge.JudgeOptions` from the chat endpoint and judge
    options."""
    from ..scorers.judge import JudgeOptions

    return JudgeOptions(
        runs=args.runs, temperature=args.temperature, max_tokens=args.max_tokens,
        logprobs=args.logprobs, top_logprobs=args.top_logprobs, rubric=_rubric_text(args.rubric),
        shots=args.shots, exemplars=args.exemplars,
        train_dataset=str(args.train_dataset) if args.train_dataset else None,
        exemplar_seed=args.exemplar_seed, label_policy=args.label_policy,
        failed_as=args.failed_as, timeout=args.timeout, max_retries=args.max_retries,
        response_cache=str(args.response_cache) if args.response_cache else None,
    )  # fmt: skip


def add_scorer_settings(group: Any, workers: bool = True) -> None:
    """The settings of the scorer kinds that have them: ``--workers`` (LiteScorer),
    ``--batch-size``, ``--device`` and ``--decoding`` (DRAME-Eval)."""
    from ..scorers.drame_eval import DECODINGS

    if workers:
        group.add_argument(
            "--workers", type=int, help="LiteScorer: clips analysed at once (default: one per core)"
        )
    group.add_argument("--batch-size", type=int, default=4, help="DRAME-Eval: clips per forward")
    group.add_argument("--device", help="DRAME-Eval: torch device, e.g. cuda:0 (default: CPU)")
    group.add_argument(
        "--decoding",
        choices=list(DECODINGS),
        help="DRAME-Eval: how a score is read from the answer's next-token distribution "
        "(default: expectation): " + "; ".join(f"{k}: {v}" for k, v in DECODINGS.items()),
    )


def add_scorer_options(parser: argparse.ArgumentParser, workers: bool = True) -> None:
    """``--scorer SPEC`` and the settings of each scorer kind (feature cache and workers for a
    LiteScorer, batch size and device for DRAME-Eval, the judge options for a chat judge)."""
    from ..scorers.specs import SPEC_HELP

    group = parser.add_argument_group("scorer")
    group.add_argument("--scorer", metavar="SPEC", default="lite", help=SPEC_HELP)
    add_scorer_settings(group, workers)
    add_feature_cache_options(parser)
    add_judge_options(parser)
    add_chat_options(parser, temperature=1.0, endpoint=False)


def scorer_from_args(args: argparse.Namespace, config: Config, on_retry=None):
    """The scorer ``--scorer`` names for ``config``, with the settings given."""
    from ..scorers.specs import load_scorer

    return load_scorer(
        args.scorer, config, cache=feature_cache(args), workers=getattr(args, "workers", None),
        batch_size=args.batch_size, device=args.device, decoding=args.decoding,
        judge_options=judge_options(args), on_retry=on_retry,
    )  # fmt: skip


def add_shard_options(parser: argparse.ArgumentParser, last: str = "") -> None:
    """``--rank R --world-size N``: one shard per process started by hand; ``last`` says what
    happens after the shards."""
    parser.add_argument("--rank", type=int, default=0, help="this process's shard, 0..world-size-1")
    parser.add_argument(
        "--world-size",
        type=int,
        help=f"number of shards, each run as its own process with its --rank{last} (default: "
        "the torchrun/accelerate process group, or 1)",
    )


def add_push_options(parser: argparse.ArgumentParser, uploads: str, dry_run: str) -> None:
    """``--push-to-hub ORG/NAME``, ``--private``, ``--dry-run`` of a command whose result is
    pushed: ``uploads`` says what goes where, ``dry_run`` what a dry run does instead."""
    parser.add_argument("--push-to-hub", metavar="ORG/NAME", help=uploads)
    parser.add_argument(
        "--private", action="store_true", help="create the Hub repo private (with --push-to-hub)"
    )
    parser.add_argument("--dry-run", action="store_true", help=f"with --push-to-hub: {dry_run}")


def add_upload_options(parser: argparse.ArgumentParser, repo: str, dry_run: str) -> None:
    """``--private`` and ``--dry-run`` of a command that uploads a folder to a Hub ``repo``
    (what is created private); ``dry_run`` says what a dry run does instead."""
    parser.add_argument("--private", action="store_true", help=f"create the {repo} private")
    parser.add_argument("--dry-run", action="store_true", help=dry_run)


def add_folder_push_command(subparsers, name: str, doc: str, folder: str, repo: str, run) -> None:
    """Register ``speech-drame NAME FOLDER ORG/NAME [--private] [--dry-run]``, a command that
    uploads one output ``folder`` to a Hub ``repo``; its help is ``doc``'s first line."""
    parser = subparsers.add_parser(name, help=doc.split("\n")[0].split(": ", 1)[1])
    parser.add_argument("folder", help=folder)
    parser.add_argument("repo_id", metavar="ORG/NAME", help=f"the Hub {repo} to create or update")
    add_upload_options(
        parser, repo, "list the files and their sizes; send nothing (no token needed)"
    )
    parser.set_defaults(func=run)


def push_token(args: argparse.Namespace) -> str | None:
    """Check the options of :func:`add_push_options` before the long work; the token of a real
    push (else ``None``)."""
    from ..hub.access import cli_push_token

    if args.push_to_hub is None:
        if args.dry_run or args.private:
            raise ValueError("--dry-run and --private need --push-to-hub ORG/NAME")
        return None
    return cli_push_token(args.push_to_hub, "--push-to-hub", args.dry_run)
