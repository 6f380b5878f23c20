"""`speech-drame trace`: TRACE pairwise judging with typed ties, and evaluation against HCoT."""

from __future__ import annotations

import argparse
import json
import sys

from ..atomic_io import write_json
from .options import add_chat_options, add_feature_cache_options, chat_client, feature_cache


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _summary(ev) -> str:
    m = ev.missing_content
    effect = (
        "excluded"
        if m["rule"] == "exclude"
        else f"overall set to both_bad ({len(m['changed'])} changed)"
    )
    lines = [
        f"pairs evaluated: {ev.n_evaluated}/{ev.n_gold} (missing: {len(ev.missing)})",
        f"missing content: {m['rule']} ({m['definition']}); {m['n']} prediction(s) {effect}",
    ]
    for name, acc in ev.accuracy.items():
        lines.append(f"{name:<16s} accuracy {acc:.3f}  kappa {ev.kappa[name]:.3f}")
    lines.append(
        f"winner-on-bad {ev.winner_on_bad['rate']:.3f} (n={ev.winner_on_bad['n']}); "
        f"winner-slice accuracy {ev.winner_slice['accuracy']:.3f} (n={ev.winner_slice['n']}); "
        f"content ties resolved {ev.content_tie_resolution['rate']:.3f} "
        f"(n={ev.content_tie_resolution['n']})"
    )
    if ev.mcnemar:
        m = ev.mcnemar
        lines.append(
            f"McNemar vs other judge (n={m['n']}): accuracy {m['accuracy']:.3f} vs "
            f"{m['other_accuracy']:.3f}, exact p={m['exact']['pvalue']:.4g}, "
            f"chi2 p={m['chi2']['pvalue']:.4g}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.action == "demo":
        from ..protocols.trace.demo import build_demo, next_steps

        build_demo(args.out)
        print(next_steps(args.out))
        return 0
    if args.action == "run":
        return _run_trace(args)
    return _evaluate(args)


def _evaluate(args: argparse.Namespace) -> int:
    from ..atomic_io import strict_json
    from ..protocols.trace import hcot

    predictions = hcot.load_labels(args.predictions, require_dimensions=False)
    gold = hcot.load_labels(args.hcot)
    other = hcot.load_labels(args.other, require_dimensions=False) if args.other else None
    ev = hcot.evaluate(predictions, gold, other, args.missing_content)
    out = ev.to_dict()
    if args.reconstruct:
        out["reconstruction"] = hcot.reconstruct_overall(gold)
    written = write_json(args.json_out, out) if args.json_out else None  # first: nothing lost
    if args.json:
        print(json.dumps(strict_json(out), indent=2))
    else:
        print(_summary(ev))
        if args.reconstruct:
            rec = out["reconstruction"]
            cv = "n/a" if rec["cv_accuracy"] is None else f"{rec['cv_accuracy']:.3f}"
            print(f"logistic reconstruction of overall: train {rec['train_accuracy']:.3f}, "
                  f"{rec['folds']}-fold cv {cv}")  # fmt: skip
    if written:
        print(f"wrote {written}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _run_trace(args: argparse.Namespace) -> int:
    from ..protocols.trace.affect import AudioClassifier
    from ..protocols.trace.hcot import write_labels
    from ..protocols.trace.judges import ChatTraceJudge, RuleJudge
    from ..protocols.trace.labels import MISSING_CONTENT, MISSING_OTHER, POLICY_DEFINITIONS
    from ..protocols.trace.protocol import load_pairs, run_trace

    pairs = load_pairs(args.pairs)
    classifiers = [
        AudioClassifier.from_folder(folder, kind)
        for kind, folder in (("emotion", args.emotion_model), ("accent", args.accent_model))
        if folder
    ]
    judge = (
        ChatTraceJudge(chat_client(args, on_retry=_say), temperature=args.temperature)
        if args.judge == "chat"
        else RuleJudge()
    )
    result = run_trace(
        pairs,
        judge,
        args.policy,
        cache=feature_cache(args),
        missing_content=args.missing_content,
        classifiers=classifiers,
        missing_other=args.missing_other,
        dnsmos=args.dnsmos,
    )
    print(f"wrote {write_labels(result.labels, args.out)}: {len(result.labels)} pairs labelled")
    print(f"judge {result.judge}: {result.judge_description}")
    print(f"fusion {args.policy}: {POLICY_DEFINITIONS[args.policy]}")
    effect = "labelled both_bad" if args.missing_content == "both_bad" else "left out as failures"
    print(
        f"missing content {args.missing_content}: {MISSING_CONTENT[args.missing_content]} "
        f"({len(result.missing_content)} pair(s) without a content decision {effect})"
    )
    effect = "fused without a winner there" if args.missing_other == "no-winner" else "failed"
    print(
        f"missing other {args.missing_other}: {MISSING_OTHER[args.missing_other]} "
        f"({len(result.missing_other)} pair(s) without a voice-quality or paralinguistics "
        f"decision {effect})"
    )
    for kind, source in result.cues.items():
        print(f"blueprint {kind}: {source}")
    for pid, reason in result.failures.items():
        print(f"failed {pid}: {reason}", file=sys.stderr)
    if args.json_out:
        print(f"wrote {write_json(args.json_out, result.to_dict())}")
    return 1 if result.failures else 0


def register(subparsers) -> None:
    from ..features.quality import VARIANTS
    from ..protocols.trace.blueprint import RELEASED_DNSMOS
    from ..protocols.trace.labels import MISSING_CONTENT, MISSING_OTHER, POLICIES

    parser = subparsers.add_parser("trace", help=__doc__.split(": ", 1)[1])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    demo = actions.add_parser("demo", help="write the demo pairs and their proxy HCoT labels")
    demo.add_argument("--out", required=True, help="folder for pairs.jsonl, hcot.jsonl, audio/")

    run_ = actions.add_parser("run", help="judge pairs per dimension and fuse to overall")
    run_.add_argument("pairs", help="JSONL of id, instruction, audio_1, audio_2")
    run_.add_argument("--judge", choices=("rule", "chat"), default="rule")
    run_.add_argument(
        "--policy",
        choices=POLICIES,
        default="content_first",
        help="fusion of the dimension labels: content_first and acceptability_cap are the "
        "released SpeakBench and S2S-Arena rules; content_first_gated is this package's "
        "earlier rule (both_bad content or paralinguistics gives both_bad)",
    )
    run_.add_argument(
        "--dnsmos",
        choices=VARIANTS,
        default=RELEASED_DNSMOS,
        help="DNSMOS P.835 model of the blueprint's voice quality: personalised (released "
        "TRACE; computed once per clip and cached) or plain (the feature cache's, this "
        "package's earlier blueprint)",
    )
    run_.add_argument(
        "--missing-other",
        choices=tuple(MISSING_OTHER),
        default="no-winner",
        help="a verdict without a voice-quality or paralinguistics label: no winner on that "
        "dimension (released TRACE) or a failure (this package's earlier behaviour)",
    )
    run_.add_argument(
        "--emotion-model",
        metavar="FOLDER",
        help="local transformers audio-classification model with emotion classes (id2label); "
        "without it the blueprint says emotion scores were not measured",
    )
    run_.add_argument(
        "--accent-model",
        metavar="FOLDER",
        help="local transformers audio-classification model with accent classes (id2label)",
    )
    run_.add_argument("--out", required=True, help="predicted labels (HCoT JSONL format)")
    run_.add_argument(
        "--json-out",
        metavar="PATH",
        help="JSON file with reasons, blueprints, raw answers, failures",
    )
    add_feature_cache_options(run_)
    add_chat_options(run_)

    ev = actions.add_parser("evaluate", help="agreement of predicted labels with HCoT labels")
    ev.add_argument("predictions", help="predicted labels (JSONL; overall-only allowed)")
    ev.add_argument("--hcot", required=True, help="human HCoT labels (JSONL or JSON list)")
    ev.add_argument("--other", help="another judge's labels, for McNemar's test")
    ev.add_argument("--reconstruct", action="store_true",
                    help="fit the logistic model of overall from the dimension labels")  # fmt: skip
    ev.add_argument("--json-out", metavar="PATH", help="JSON file for every number")
    ev.add_argument(
        "--json", action="store_true", help="print every number as JSON instead of a summary"
    )
    for sub in (run_, ev):
        sub.add_argument(
            "--missing-content",
            choices=tuple(MISSING_CONTENT),
            default="both_bad",
            help="a pair whose content label is missing: both_bad overall (released TRACE) or "
            "exclude it as a failure (this package's earlier behaviour)",
        )
    for sub in (demo, run_, ev):
        sub.set_defaults(func=run)
