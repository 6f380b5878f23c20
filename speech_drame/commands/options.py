"""Option groups shared by the commands: the config, context texts, the feature cache, the chat
endpoint, the scorer (``--scorer SPEC`` with the settings of each kind) and a push to the Hub."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..labels import DEFAULT_LABEL_POLICY, LABEL_POLICIES
from ..schema import CONFIGS, CONTEXTS, Config


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option, accepted for one release and left out of the help: it
    stores into the new option's ``dest`` after one line on stderr (``OLD is deprecated; use
    NEW``)."""

    def __init__(self, option_strings, dest, *, new: str, **kwargs) -> None:
        self.new = new
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"{option_string} is deprecated; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed_option(
    parser: Any, new: str, old: str, *, required: bool = False, **kwargs: Any
) -> None:
    """Option ``new`` (``kwargs`` as for ``add_argument``) with its old spelling ``old`` still
    accepted (:class:`DeprecatedAlias`); ``required``: one of the two must be given."""
    dest = kwargs.pop("dest", new.lstrip("-").replace("-", "_"))
    group = parser.add_mutually_exclusive_group(required=required) if required else parser
    group.add_argument(new, dest=dest, **kwargs)
    alias = {k: v for k, v in kwargs.items() if k in ("choices", "type", "metavar")}
    group.add_argument(old, dest=dest, action=DeprecatedAlias, new=new, **alias)


def add_config_option(
    parser: Any,
    *,
    required: bool = True,
    default: str | None = None,
    choices: Sequence[str] = CONFIGS,
    help: str | None = None,
    old: str | None = None,
) -> None:
    """``--config archetype|realism``, the one name of the config on every command (``old``: a
    spelling it replaced, still accepted with a deprecation line)."""
    kwargs: dict[str, Any] = {"choices": tuple(choices), "default": default, "help": help}
    if old is None:
        parser.add_argument("--config", required=required, **kwargs)
    else:
        add_renamed_option(parser, "--config", old, required=required, **kwargs)


CONTEXT_HELP = {
    "question": "archetype: the role-play prompt (role and scene)",
    "profile": "realism: the character's global profile",
    "scene": "realism: the local scene",
    "traits": "realism: the character's style traits",
}


GIVEN = "scorer_settings_given"  # Namespace attribute: each scorer setting given -> its kind


class KindSetting(argparse.Action):
    """A setting of one scorer kind: stored as ``store`` (``store_true`` when ``flag``) does,
    and noted in ``args.scorer_settings_given`` so that :func:`scorer_from_args` refuses it
    for a scorer of another kind."""

    def __init__(self, option_strings, dest, *, kind: str, flag: bool = False, **kwargs) -> None:
        self.kind = kind
        if flag:
            kwargs.update(nargs=0, const=True, default=kwargs.get("default", False))
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)
        given = getattr(namespace, GIVEN, None) or {}
        setattr(namespace, GIVEN, {**given, self.option_strings[0]: self.kind})


class _KindGroup:
    """An argument group whose options are :class:`KindSetting` of one scorer ``kind``."""

    def __init__(self, group: Any, kind: str) -> None:
        self.group, self.kind = group, kind

    def add_argument(self, *flags: str, action: str | None = None, **kwargs: Any) -> Any:
        if action not in (None, "store_true"):
            raise TypeError(f"a scorer setting is stored or a flag, not action={action!r}")
        return self.group.add_argument(
            *flags, action=KindSetting, kind=self.kind, flag=action == "store_true", **kwargs
        )


def _option_group(parser: Any, title: str, kind: str | None) -> Any:
    """The argument group ``title``; for a scorer ``kind``, titled ``KIND: title`` and holding
    :class:`KindSetting` options."""
    if kind is None:
        return parser.add_argument_group(title)
    return _KindGroup(parser.add_argument_group(f"{kind}: {title}"), kind)


def check_scorer_settings(args: argparse.Namespace, spec: Any) -> None:
    """Refuse a setting of another kind than the scorer ``spec``
    (:class:`~speech_drame.scorers.specs.ScorerSpec`) in use.

    Raises:
        UsageError: naming the option, its kind and the scorer in use.
    """
    for option, kind in (getattr(args, GIVEN, None) or {}).items():
        if kind != spec.kind:
            raise UsageError(f"{option} is a {kind}: option; the scorer in use is {spec}")


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
        raise ValueError(f"--config {config} needs {' '.join(missing)}")
    return {c: getattr(args, c) for c in CONTEXTS[config]}


def add_feature_cache_options(parser: argparse.ArgumentParser, kind: str | None = None) -> None:
    """``--feature-cache DIR`` and ``--no-feature-cache`` (settings of scorer ``kind``, if
    given)."""
    group = _option_group(parser, "feature cache", kind)
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
    parser: argparse.ArgumentParser,
    temperature: float = 0.0,
    endpoint: bool = True,
    kind: str | None = None,
) -> None:
    """Options of a chat endpoint: ``--endpoint`` and ``--model`` (unless ``endpoint`` is
    false: a scorer spec ``judge:MODEL@URL`` names them), retries, the response cache
    (settings of scorer ``kind``, if given)."""
    group = _option_group(parser, "chat endpoint", kind)
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


def add_judge_options(
    parser: argparse.ArgumentParser, failed_as: bool = True, kind: str | None = None
) -> None:
    """How a chat judge asks and counts (rubric, JSON runs or logprobs, few-shot exemplars and
    their gold labels, unusable answers; ``failed_as=False`` for a command whose own
    ``--failed-as`` decides; settings of scorer ``kind``, if given)."""
    group = _option_group(parser, "chat judge", kind)
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


def _scorer_settings(workers: bool) -> list[tuple[str, str, dict[str, Any]]]:
    """``(kind, option, add_argument keywords)`` of the settings of the LiteScorer
    (``--workers``, unless ``workers`` is false) and DRAME-Eval."""
    from ..scorers.drame_eval import DECODINGS

    lite = [
        (
            "--workers",
            {"type": int, "help": "LiteScorer: clips analysed at once (default: one per core)"},
        )
    ]
    drame = [
        ("--batch-size", {"type": int, "default": 4, "help": "DRAME-Eval: clips per forward"}),
        ("--device", {"help": "DRAME-Eval: torch device, e.g. cuda:0 (default: CPU)"}),
        ("--decoding", {"choices": list(DECODINGS),
                        "help": "DRAME-Eval: how a score is read from the answer's next-token "
                        "distribution (default: expectation): "
                        + "; ".join(f"{k}: {v}" for k, v in DECODINGS.items())}),
        ("--prompt-profile", {"metavar": "FILE",
                              "help": "DRAME-Eval: the prompt profile (JSON/YAML) a checkpoint was "
                              "trained with; required for a plain PEFT adapter or model folder, "
                              "replaces an exported evaluator's own (see speech-drame "
                              "prompt-profile show)"}),
    ]  # fmt: skip
    return [("lite", *o) for o in lite if workers] + [("drame-eval", *o) for o in drame]


def add_scorer_settings(group: Any, workers: bool = True) -> None:
    """The settings of the scorer kinds that have them, in one ``group``: ``--workers``
    (LiteScorer), ``--batch-size``, ``--device`` and ``--decoding`` (DRAME-Eval)."""
    for _, option, kwargs in _scorer_settings(workers):
        group.add_argument(option, **kwargs)


def add_scorer_options(
    parser: argparse.ArgumentParser, workers: bool = True, shared: tuple[str, ...] = ()
) -> None:
    """``--scorer SPEC`` and the settings of each scorer kind, in a group per kind (feature
    cache and workers for a LiteScorer, batch size, device and decoding for DRAME-Eval, the
    judge options for a chat judge); :func:`scorer_from_args` refuses a setting of another
    kind than the scorer's. The options in ``shared`` are the command's own for every kind
    (bench: ``--batch-size`` and ``--workers`` also size its chunks): in the scorer group."""
    from ..scorers.specs import SPEC_HELP

    group = parser.add_argument_group("scorer")
    group.add_argument("--scorer", metavar="SPEC", default="lite", help=SPEC_HELP)
    kinds = {
        kind: _option_group(parser, "scorer settings", kind) for kind in ("lite", "drame-eval")
    }
    for kind, option, kwargs in _scorer_settings(workers):
        target = group if option in shared else kinds[kind]
        if option == "--decoding":  # load_scorer refuses it for another kind, in its own words
            target = getattr(target, "group", target)
        target.add_argument(option, **kwargs)
    add_feature_cache_options(parser, kind="lite")
    add_judge_options(parser, kind="judge")
    add_chat_options(parser, temperature=1.0, endpoint=False, kind="judge")


def scorer_from_args(args: argparse.Namespace, config: Config, on_retry=None):
    """The scorer ``--scorer`` names for ``config``, with the settings given.

    Raises:
        UsageError: a setting of another scorer kind (:func:`check_scorer_settings`).
    """
    from ..scorers.specs import load_scorer, parse_spec

    check_scorer_settings(args, parse_spec(args.scorer))
    return load_scorer(
        args.scorer, config, cache=feature_cache(args), workers=getattr(args, "workers", None),
        batch_size=args.batch_size, device=args.device, decoding=args.decoding,
        prompt_profile=getattr(args, "prompt_profile", None),
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
