"""What `train-lite` prints after each config, now that the library only returns it."""

from __future__ import annotations

from pathlib import Path

from speech_drame.commands.lite_report import format_table, print_config_run, print_run_end
from speech_drame.scorers.evaluation import SplitReport
from speech_drame.scorers.lite.training import ConfigRun, TrainingReport
from speech_drame.stats import alignment_table


def _report() -> SplitReport:
    table = alignment_table(
        [[4.0, 3.0, 0.9], [2.0, 2.5, 0.2], [3.0, 4.0, 0.8]],
        [[[4, 5], [3], [1, 1]], [[2], [2, 3], [0, 0]], [[3, 3], [5], [1, 0, 1]]],
        ["audio_quality", "human_likeness", "content_pass"],
    )
    return SplitReport("test", table, 3, {"c1": "no speech", "c2": "unreadable"})


def test_print_config_run_prints_the_table_then_what_was_left_out(capsys, tmp_path) -> None:
    report = _report()
    training = TrainingReport("ds", "train", False, None, 10, {"t1": "silent"})
    plot = tmp_path / "reliability_test.png"
    run = ConfigRun("archetype", [report], training, {"dev": "not in the dataset"}, [plot],
                    tmp_path / "archetype")  # fmt: skip
    print_config_run(run)
    printed = capsys.readouterr().out
    assert printed == "\n".join([
        format_table("archetype", [report]),
        "1 train clip(s) skipped: t1: silent",
        "2 test clip(s) not scored: c1: no speech; c2: unreadable",
        "archetype/dev not evaluated: not in the dataset",
        f"reliability diagram: {plot}",
        f"saved {tmp_path / 'archetype'}",
        "",
        "",
    ])  # fmt: skip
    assert "Content Pass (accuracy)" in printed.splitlines()[2]


def test_print_run_end_names_the_file_and_the_cache_counts(capsys) -> None:
    class Cache:
        root, hits, misses = Path("/c"), 5, 1

    print_run_end(Path("out/metrics.json"), Cache())
    print_run_end(Path("out/metrics.json"), None)
    assert capsys.readouterr().out == (
        "evaluation: out/metrics.json\nfeature cache /c: 5 hits, 1 misses\n"
        "evaluation: out/metrics.json\n"
    )
