"""Fine-tuning the demo LiteScorer (``train-lite --init``) against training from scratch, on a
small rating campaign whose raters disagree with it in a known way.

For each config, the demo dataset's held-out ``test`` clips are rated by three simulated raters
(tests/lite_finetune_data.py): ``shifted`` raters agree with the demo scorer except that they
mark the Mandarin voices 1.5 points down; ``inverted`` raters rank every clip the other way
round. The campaign is exported with ``--test-share 0.3`` and built; then, in the same run, the
demo scorer as it is (the baseline), a scorer trained from scratch on the campaign's ``train``
split, and fine-tuned ones (several ``--anchor`` and epoch settings) are evaluated on its
``test`` split: average Pearson with the mean rating and average NLL of the ratings under the
scorer's distributions. Figures are printed, never asserted. Needs ``make demo-scorer``.

    python benchmarks/bench_lite_finetune.py [--configs archetype realism] [--scenarios shifted inverted]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from lite_finetune_data import SCENARIOS, planted_dataset  # noqa: E402

from speech_drame.scorers.lite.finetune import DEFAULT_ANCHOR, DEFAULT_EPOCHS  # noqa: E402
from speech_drame.scorers.lite.model import TrainingOptions  # noqa: E402
from speech_drame.scorers.lite.training import train_and_evaluate  # noqa: E402
from speech_drame.scorers.specs import load_scorer  # noqa: E402

SCRATCH_EPOCHS = TrainingOptions.epochs
RUNS = (  # (label, init?, epochs, anchor)
    ("init, anchor 0", True, DEFAULT_EPOCHS, 0.0),
    (f"init, anchor {DEFAULT_ANCHOR:g} (default)", True, DEFAULT_EPOCHS, DEFAULT_ANCHOR),
    ("init, anchor 0.1", True, DEFAULT_EPOCHS, 0.1),
    (f"init, {SCRATCH_EPOCHS} epochs, anchor {DEFAULT_ANCHOR:g}", True, SCRATCH_EPOCHS,
     DEFAULT_ANCHOR),
    (f"scratch ({SCRATCH_EPOCHS} epochs)", False, SCRATCH_EPOCHS, None),
)  # fmt: skip


def _figures(entry: dict) -> tuple[float, float, int]:
    return (
        entry["table"]["avg_pearson"],
        entry["distribution_fit"]["avg_nll"],
        entry["clips_scored"],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=["archetype", "realism"])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--scorer", default=str(ROOT / "artifacts" / "lite_scorer"))
    parser.add_argument("--dataset", default=str(ROOT / "speech-drame"))
    args = parser.parse_args()
    print(f"initial scorer {args.scorer}; held-out figures on each campaign's test split\n")
    print(f"{'config':<10}{'raters':<10}{'scorer':<34}{'avg Pearson':>12}{'avg NLL':>9}"
          f"{'train':>7}{'test':>6}{'seconds':>9}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-finetune-") as tmp:
        for config in args.configs:
            parent = load_scorer(args.scorer, config)
            for scenario in args.scenarios:
                work = Path(tmp, f"{config}-{scenario}")
                built = planted_dataset(Path(args.dataset), config, "test", parent, scenario, work)
                first = True
                for label, init, epochs, anchor in RUNS:
                    out = work / f"run{len(list(work.glob('run*')))}"
                    started = time.perf_counter()
                    train_and_evaluate(
                        built, out, [config], TrainingOptions(epochs=epochs), progress=False,
                        init=args.scorer if init else None,
                        **({"anchor": anchor} if anchor is not None else {}),
                    )  # fmt: skip
                    seconds = time.perf_counter() - started
                    entry = json.loads((out / "metrics.json").read_text())["configs"][config]
                    n_train = entry["training"]["clips_used"]
                    if first and init:
                        r, nll, n = _figures(entry["parent_splits"]["test"])
                        print(f"{config:<10}{scenario:<10}{'initial scorer (baseline)':<34}"
                              f"{r:>12.3f}{nll:>9.3f}{'':>7}{n:>6}{'':>9}")  # fmt: skip
                        first = False
                    r, nll, n = _figures(entry["splits"]["test"])
                    print(f"{config:<10}{scenario:<10}{label:<34}{r:>12.3f}{nll:>9.3f}"
                          f"{n_train:>7}{n:>6}{seconds:>9.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
