"""Assignment rules side by side: ratings to a confidence-interval width, planted failures found.

Simulated raters from the demo annotators: a campaign (the real store, SQLite) of the demo
release's clips (build/demo_release, `make demo-data`; train and test records whose first K
annotators the rating page can reproduce), rater j answering as the clip's annotator j (the
demo corpus's simulated annotators, synthetic proxy labels). Two scorers are attached through
the scorer contract (tests/campaign_scorers.py): the one measured, whose scores follow the mean
of all the clip's annotators (plus noise) except on a known random subset, the planted failures
(--failures of the clips), where it is confidently wrong (the far end of the scale; on half of
them its 1..5 distribution is also wide, as a model unsure of itself), and an honest second
scorer (its own noise), as a lab attaches more than one. For each rule (balanced, uncertain,
disagreement) a fresh campaign of the same clips gets the same scorers; the raters take turns
through the store (claim, submit) until every clip has K ratings. Every --step ratings the
measured scorer's average Pearson over the dimensions and its 95 % bootstrap interval are
computed as `campaign status` computes them (--bootstrap resamples), and the planted failures
with at least one rating are counted.

Printed, side by side in one table: per rule the ratings after which the interval stays no
wider than each --widths target (with the ratio to balanced, the baseline of the same run), and the
planted failures rated within each number of ratings (a quarter, a half and all of the first
pass over the clips). Figures are printed, never asserted.

    python benchmarks/bench_campaign_assign.py [--config archetype] [--raters-per-clip 3]
        [--failures 0.1] [--step 15] [--bootstrap 300] [--widths 0.4 0.3 0.2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from campaign_scorers import PlantedScorer  # noqa: E402

from speech_drame.campaign.assign import ASSIGN_RULES  # noqa: E402
from speech_drame.campaign.attach import attach_scorer  # noqa: E402
from speech_drame.campaign.evaluator_agreement import annotations_by_clip, compared  # noqa: E402
from speech_drame.campaign.export import release_ratings  # noqa: E402
from speech_drame.campaign.forms import FormError, validate_answers  # noqa: E402
from speech_drame.campaign.records import CampaignClip  # noqa: E402
from speech_drame.campaign.store import create_campaign  # noqa: E402
from speech_drame.labels import apply_label_policy  # noqa: E402
from speech_drame.schema import CONTENT_PASS, DATA_DIRS, context_from_row, dimensions  # noqa: E402
from speech_drame.stats import alignment_table  # noqa: E402

RELEASE = ROOT / "build" / "demo_release"
CONFIDENCE = {"archetype": "confidence", "realism": "annotator_confidence_rating"}


def page_answers(config: str, annotations: dict, j: int) -> dict:
    """Annotator ``j``'s ratings as the rating page sends them."""
    value = {k: v[j] for k, v in annotations.items()}
    out: dict = {}
    if config == "archetype":
        out[CONTENT_PASS] = value[CONTENT_PASS]
        if not value[CONTENT_PASS]:
            return out
    out.update({d: value[d] for d in dimensions(config) if isinstance(value[d], int)})
    if isinstance(value[CONFIDENCE[config]], int):
        out["confidence"] = value[CONFIDENCE[config]]
    return out


def demo_clips(config: str, k: int) -> tuple[list[CampaignClip], dict, dict]:
    """The demo clips whose first ``k`` annotators the page can reproduce, their answers by
    annotator, and each clip's true score per dimension (the mean of all its annotators)."""
    clips, answers, truth = [], {}, {}
    for split in ("train", "test"):
        path = RELEASE / DATA_DIRS[config] / f"{split}.jsonl"
        if not path.is_file():
            sys.exit(f"{path} is missing: run `make demo-data` first")
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            ann = record["annotations"]
            if len(next(iter(ann.values()))) < k:
                continue
            try:
                given = [validate_answers(config, page_answers(config, ann, j)) for j in range(k)]
            except FormError:
                continue
            means = {}
            for d in dimensions(config):
                values = [v for v in apply_label_policy(ann[d], d, "paper") if v is not None]
                means[d] = float(np.mean(values))
            clip_id = record["id"]
            context = context_from_row(record, config, clip_id)
            clips.append(CampaignClip(clip_id, len(clips), record["wav_path"], context))
            answers[clip_id], truth[clip_id] = given, means
    return clips, answers, truth


def run_rule(rule: str, folder: Path, config: str, k: int, clips: list[CampaignClip],
             answers: dict, scorers: list[PlantedScorer], args: argparse.Namespace) -> dict:  # fmt: skip
    """One campaign dealt by ``rule``: the interval width and failures rated per checkpoint."""
    campaign, _ = create_campaign(str(folder / f"{rule}.db"), config, clips, [], k, assign=rule)
    for s in scorers:
        attach_scorer(campaign, s, s.name, s.name)
    measured = next(s for s in campaign.attached_scorers() if s.name == scorers[0].name)
    results = campaign.scorer_results(measured.scorer_id)
    raters = [f"annotator{j}" for j in range(k)]
    for name in raters:
        campaign.add_rater(name)
    planted = scorers[0].failures
    curve, found, rated_ids = [], [], set()
    n, active, started = 0, list(raters), time.perf_counter()
    while active:
        for name in list(active):
            task = campaign.current_task(name)
            if task is None:
                active.remove(name)
                continue
            j = raters.index(name)
            campaign.submit(name, task.task_id, uuid.uuid4().hex, answers[task.clip.id][j])
            n += 1
            rated_ids.add(task.clip.id)
            found.append(len(planted & rated_ids))
            if n % args.step == 0:
                rated = annotations_by_clip(config, release_ratings(campaign.ratings()))
                _, joined = compared(config, measured, clips, rated, results)
                table = alignment_table(joined.predictions, joined.references, joined.dimensions,
                                        bootstrap=args.bootstrap, seed=0)  # fmt: skip
                lo, hi = table.get("avg_pearson_ci", [float("nan")] * 2)
                curve.append((n, table["avg_pearson"], hi - lo))
    elapsed = time.perf_counter() - started
    campaign.close()
    return {"curve": curve, "found": found, "ratings": n, "seconds": elapsed}


def needed(curve: list[tuple[int, float, float]], width: float) -> int | None:
    """The rating count from which on the interval stays no wider than ``width`` (a narrow
    interval early on, around a few clips, does not count if it widens again)."""
    out = None
    for n, _, w in curve:
        narrow = bool(np.isfinite(w) and w <= width)
        out = (n if out is None else out) if narrow else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", choices=("archetype", "realism"), default="archetype")
    parser.add_argument("--raters-per-clip", type=int, default=3, metavar="K")
    parser.add_argument("--failures", type=float, default=0.1, help="share of planted failures")
    parser.add_argument("--step", type=int, default=15, help="ratings between two checkpoints")
    parser.add_argument("--bootstrap", type=int, default=300, help="resamples of the interval")
    parser.add_argument("--widths", type=float, nargs="+", default=[0.4, 0.3, 0.2])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config, k = args.config, args.raters_per_clip
    clips, answers, truth = demo_clips(config, k)
    rng = np.random.default_rng(args.seed)
    ids = [c.id for c in clips]
    failures = frozenset(rng.choice(ids, size=max(1, round(args.failures * len(ids))),
                                    replace=False).tolist())  # fmt: skip
    wide = frozenset(sorted(failures)[::2])
    scorers = [
        PlantedScorer(config, truth, failures, wide, noise=0.3, seed=1, name="measured"),
        PlantedScorer(config, truth, noise=0.5, seed=2, name="second"),
    ]
    print(f"{config}: {len(clips)} demo clips (annotators 0..{k - 1} reproducible by the page), "
          f"K={k}, {k} raters (rater j = annotator j), {len(failures)} planted failures "
          f"({len(wide)} of them with wide distributions); interval: 95 % percentile bootstrap "
          f"of the average Pearson, {args.bootstrap} resamples, every {args.step} ratings")  # fmt: skip
    runs = {}
    with tempfile.TemporaryDirectory(prefix="bench-assign-") as work:
        for rule in ASSIGN_RULES:
            runs[rule] = run_rule(rule, Path(work), config, k, clips, answers, scorers, args)
    marks = [round(len(clips) * f) for f in (0.25, 0.5, 1.0)]
    head = f"{'rule':14s}" + "".join(f"{f'width<={w:g}':>18}" for w in args.widths) + "".join(
        f"{f'found in {m}':>13}" for m in marks) + f"{'final r':>9}{'seconds':>9}"  # fmt: skip
    print(head)
    print("-" * len(head))
    base = {w: needed(runs["balanced"]["curve"], w) for w in args.widths}
    for rule, run in runs.items():
        cells = ""
        for w in args.widths:
            got = needed(run["curve"], w)
            ratio = f" ({got / base[w]:.2f}x)" if got and base[w] else ""
            cells += f"{(str(got) + ratio) if got else 'not reached':>18}"
        cells += "".join(f"{str(run['found'][m - 1]) + '/' + str(len(failures)):>13}"
                         for m in marks)  # fmt: skip
        final = run["curve"][-1][1] if run["curve"] else float("nan")
        print(f"{rule:14s}{cells}{final:>9.3f}{run['seconds']:>9.1f}")
    print(f"widths: ratings after which the interval stays no wider (ratio to balanced); found in "
          f"N: planted failures with a rating within the first N ratings; final r: average "
          f"Pearson once all {runs['balanced']['ratings']} ratings are in; seconds: the "
          "campaign's claims, submits and checkpoints")  # fmt: skip


if __name__ == "__main__":
    main()
