"""RoleBench (Speech-DRAME Sec. 6): rate systems' spoken responses to a scenario set with any
scorer and rank the systems.

- :mod:`.scenarios`: scenario sets (JSONL files, EvalBench configs, multi-turn dialogues);
- :mod:`.run`: the plan, shards, scoring through the scorer contract, resume and merge;
- :mod:`.results_log`: the append-only results file that survives being killed;
- :mod:`.report`: the leaderboard (Markdown, CSV, JSON, plots) and the rule it follows;
- :mod:`.multiturn`: dialogue-level aggregation of turn scores;
- :mod:`.demo`: the offline-TTS demo systems ``make demo`` benchmarks.
"""

from speech_drame._lazy import lazy_attributes

_LAZY = {
    "RULES": ".report",
    "system_table": ".report",
    "write_reports": ".report",
    "KEY_FIELDS": ".run",
    "Plan": ".run",
    "WorkItem": ".run",
    "merge_shards": ".run",
    "pending": ".run",
    "plan_work": ".run",
    "read_results": ".run",
    "run_shard": ".run",
    "shard": ".run",
    "Scenario": ".scenarios",
    "ScenarioSet": ".scenarios",
    "context_hash": ".scenarios",
    "load_dataset_scenarios": ".scenarios",
    "load_scenario_file": ".scenarios",
}
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)
