"""`python train.py` as a user runs it, in a subprocess on this CPU-only machine: the README's smoke
command, a full run without a GPU, re-runs, resuming, and Hub pushes against a fake Hub on
127.0.0.1 (tests/fake_hub.py). The dataset is a small Hub-ready folder made in code."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, archetype_record, write_release
from fake_hub import FakeHub

from speech_drame.data.build import build_dataset
from speech_drame.scorers.drame_eval import DrameEvalScorer
from speech_drame.training.arguments import bf16_accelerator_available, parse_args

pytestmark = pytest.mark.slow
CONFIG = str(REPO / "configs" / "drame_eval_archetype.yaml")
REPO_ID = "someone/drame-eval-tiny"
CPU_FLAGS = ("--use_cpu", "--bf16", "false", "--model_dtype", "float32")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Six training and three test archetype clips, built into a Hub-ready folder."""
    root = tmp_path_factory.mktemp("data")
    files = {
        "archetype_data/train.jsonl": [archetype_record(f"en_train_{i}") for i in range(6)],
        "archetype_data/test.jsonl": [archetype_record(f"en_test_{i}") for i in range(3)],
    }
    write_release(root / "release", files)
    build_dataset(root / "release", root / "speech-drame", progress=False)
    return root / "speech-drame"


@pytest.fixture
def hub():
    server = FakeHub()
    yield server
    server.close()


def smoke_args(dataset: Path, out: Path, steps: int = 4) -> list[str]:
    """The README's smoke command (+ the test dataset and small batches for speed)."""
    return [
        "--config", CONFIG, "--tiny", "--max_steps", str(steps), "--output_dir", str(out),
        "--dataset", str(dataset), "--save_steps", "2", "--logging_steps", "1",
        "--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "1",
        "--dataloader_num_workers", "0",
    ]  # fmt: skip


def train(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """Run train.py with a clean Hugging Face environment: offline, no GPU, no stored token."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    clean.update(
        HF_HUB_OFFLINE="1",
        HF_HOME=str(cwd / "hf-home"),
        CUDA_VISIBLE_DEVICES="",
        TOKENIZERS_PARALLELISM="false",
    )
    clean.update(env)
    return subprocess.run(
        [sys.executable, str(REPO / "train.py"), *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=600,
    )


def online(hub: FakeHub, **env: str) -> dict[str, str]:
    return {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token, **env}


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


def exported(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def smoke(dataset, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("smoke")
    out = cwd / "drame-eval-smoke"
    return out, train(*smoke_args(dataset, out), cwd=cwd)


def test_tiny_run_without_a_gpu_picks_cpu_settings_itself(smoke):
    out, proc = smoke
    assert proc.returncode == 0, proc.stderr[-3000:]
    chosen = [line for line in proc.stderr.splitlines() if "--tiny" in line and "CPU" in line]
    assert len(chosen) == 1, proc.stderr[-3000:]
    assert all(flag in chosen[0] for flag in ("--use_cpu", "--bf16 false", "--model_dtype float32"))
    # the batch is said at the start, and that it is not the paper's 32
    assert "effective batch 2 = 2 per device x 1 accumulation steps x 1 process(es)" in proc.stderr
    assert "effective batch 2 differs from the paper's 32" in proc.stderr
    assert "--gradient_accumulation_steps 16 gives it" in proc.stderr
    evaluator = out / "evaluator"
    assert json.loads((evaluator / "drame_eval_config.json").read_text())["dtype"] == "float32"
    assert "| precision | fp32 |" in (evaluator / "README.md").read_text()
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]
    assert not list(out.glob(".evaluator.*"))  # no staging leftovers
    scorer = DrameEvalScorer.from_pretrained(out)  # a run folder loads its evaluator/
    assert scorer.config == "archetype"


@pytest.mark.skipif(bf16_accelerator_available(), reason="--tiny keeps bf16 on a GPU")
def test_explicit_options_win_over_what_tiny_picks(dataset, tmp_path):
    base = ["--config", CONFIG, "--tiny", "--output_dir", str(tmp_path / "o")]
    model, _, _, args = parse_args([*base, "--model_dtype", "bfloat16"])
    assert (model.model_dtype, args.use_cpu, args.bf16) == ("bfloat16", True, False)
    model, _, _, args = parse_args([*base, "--use_cpu", "--bf16", "true"])
    assert (model.model_dtype, args.use_cpu, args.bf16) == ("float32", True, True)


def test_a_full_run_without_a_gpu_stops_before_loading_anything(tmp_path):
    out = tmp_path / "full"
    # A dataset that does not exist: any loading would fail with another message.
    proc = train("--config", CONFIG, "--output_dir", str(out), "--dataset", "nowhere", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [
        "error: no GPU with bf16 support: add --bf16 false --model_dtype float32 --use_cpu "
        "(slow), or run on a GPU"
    ]
    assert not out.exists()


def test_rerunning_the_smoke_command_says_how_to_go_on(smoke, dataset):
    out, first = smoke
    assert first.returncode == 0
    proc = train(*smoke_args(dataset, out), cwd=out.parent)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    (line,) = error_lines(proc)
    assert "--resume" in line and "--overwrite_output_dir" in line and str(out) in line
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]


def test_overwrite_output_dir_starts_over(smoke, dataset, tmp_path):
    src, first = smoke
    assert first.returncode == 0
    out = tmp_path / "run"
    shutil.copytree(src, out)
    proc = train(*smoke_args(dataset, out, steps=2), "--overwrite_output_dir", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [p.name for p in out.glob("checkpoint-*")] == ["checkpoint-2"]
    metrics = json.loads((out / "evaluator" / "metrics.json").read_text())
    assert metrics["train"]["global_step"] == 2


def test_resumed_run_replaces_the_export_and_pushes_exactly_it(smoke, dataset, hub, tmp_path):
    src, first = smoke
    assert first.returncode == 0
    out = tmp_path / "run"
    shutil.copytree(src, out)
    stale = out / "evaluator" / "predictions" / "old.jsonl"  # a split of an earlier run
    stale.write_text('{"id": "old"}\n')
    hub.repos[REPO_ID] = {".gitattributes": b"", "predictions/old.jsonl": b"{}\n"}
    args = [
        *smoke_args(dataset, out, steps=6),
        "--resume",
        "--push_to_hub",
        "--hub_model_id",
        REPO_ID,
        "--hub_token",  # given on the command line: it must not reach any file or the output
        hub.token,
    ]
    env = {k: v for k, v in online(hub).items() if k != "HF_TOKEN"}
    proc = train(*args, cwd=tmp_path, **env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"resuming from {out / 'checkpoint-4'}" in proc.stderr
    # the Trainer pickles its arguments into every checkpoint (training_args.bin)
    assert (out / "checkpoint-6" / "training_args.bin").is_file()
    secret = hub.token.encode()
    assert [p for p in tmp_path.rglob("*") if p.is_file() and secret in p.read_bytes()] == []
    assert hub.token not in proc.stdout + proc.stderr
    evaluator = out / "evaluator"
    files = exported(evaluator)
    assert not stale.exists() and "predictions/test.jsonl" in files
    assert json.loads((evaluator / "metrics.json").read_text())["train"]["global_step"] == 6
    (commit,) = hub.commits
    assert sorted(commit["added"]) == sorted(files)
    assert commit["deleted"] == ["predictions/old.jsonl"]
    remote = hub.repos[REPO_ID]
    assert set(remote) == files | {".gitattributes"}
    assert all(remote[name] == (evaluator / name).read_bytes() for name in files)
    assert not [name for name, data in remote.items() if secret in data]


def test_a_failed_export_leaves_the_previous_one_whole(smoke, dataset, tmp_path):
    from speech_drame.prompt_profile import default_profile
    from speech_drame.scorers.drame_eval import EvaluatorInfo
    from speech_drame.training.export import export_evaluator
    from speech_drame.training.run import build_model

    src, first = smoke
    assert first.returncode == 0
    out = tmp_path / "run"
    shutil.copytree(src, out)
    before = {name: (out / name).read_bytes() for name in exported(out)}
    model_args, data_args, lora_args, args = parse_args(
        ["--config", CONFIG, "--tiny", "--output_dir", str(out), "--dataset", str(dataset)]
    )
    model, processor = build_model(model_args, lora_args)  # fresh LoRA weights: a new adapter
    info = EvaluatorInfo("archetype", ["content_pass", "audio_quality"], "tiny", "float32")
    metrics = {"train": {"global_step": np.int64(3)}, "eval": {}}  # numpy ints are not JSON
    with pytest.raises(TypeError, match="int64"):
        export_evaluator(
            out, model=model, processor=processor, info=info, metrics=metrics, predictions={},
            data_args=data_args, lora_args=lora_args, args=args, hub_model_id=None,
            profile=default_profile(),
        )  # fmt: skip
    assert {name: (out / name).read_bytes() for name in exported(out)} == before
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no staging left


def test_push_dry_run_never_uploads_even_with_push_to_hub(dataset, hub, tmp_path):
    out = tmp_path / "run"
    args = [*smoke_args(dataset, out, steps=1), *CPU_FLAGS, "--max_eval_samples", "1"]
    proc = train(
        *args,
        "--push_to_hub",
        "--push_dry_run",
        "--hub_model_id",
        REPO_ID,
        cwd=tmp_path,
        **online(hub),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"push dry run\ntarget: {hub.url}/{REPO_ID} (model repo)" in proc.stdout
    assert hub.uploads() == [] and hub.repos == {} and hub.commits == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "case, expected",
    [
        ("no token", "needs a Hugging Face token"),
        ("rejected token", "rejected"),
        ("unreachable", "cannot reach"),
        ("read-only token", "read-only"),
        ("other namespace", "cannot push to"),
        ("offline", "HF_HUB_OFFLINE"),
    ],
)
def test_push_problems_stop_the_run_before_training(case, expected, dataset, hub, tmp_path):
    env = online(hub)
    repo = REPO_ID
    if case == "no token":
        del env["HF_TOKEN"]
    elif case == "rejected token":
        env["HF_TOKEN"] = "hf_not_the_right_one"
    elif case == "unreachable":
        env["HF_ENDPOINT"] = f"http://127.0.0.1:{_closed_port()}"
    elif case == "read-only token":
        hub.role = "read"
    elif case == "other namespace":
        repo = "someone-else/drame-eval-tiny"
    elif case == "offline":
        env["HF_HUB_OFFLINE"] = "1"
    out = tmp_path / "run"
    args = [*smoke_args(dataset, out, steps=1), *CPU_FLAGS, "--push_to_hub", "--hub_model_id", repo]
    proc = train(*args, cwd=tmp_path, **env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    (line,) = error_lines(proc)
    assert expected in line
    assert not out.exists()  # nothing trained
    assert hub.uploads() == []


def test_help_lists_the_recipe_switches_with_their_defaults(tmp_path):
    proc = train("--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = " ".join(proc.stdout.split())
    for option, choices, default in (
        ("label_policy", "{paper,skip}", "paper"),
        ("prompt_variation", "[PROMPT_VARIATION]", "True"),
        ("prompt_order", "{instruction_first,context_first}", "instruction_first"),
        ("loss_on", "{answer_span,label_token}", "answer_span"),
        ("lora_scope", "{all,language}", "all"),
        ("lora_target_modules", "LORA_TARGET_MODULES", "None"),
    ):
        alias = f"--{option.replace('_', '-')} {choices}"  # only in the help entry
        entry = text[text.index(alias) :]
        assert entry.index(f"(default: {default})") == entry.index("(default:"), option
    bad = train("--tiny", "--output_dir", str(tmp_path / "o"), "--prompt_order", "x", cwd=tmp_path)
    assert bad.returncode == 2 and "--prompt_order" in bad.stderr and "invalid choice" in bad.stderr


def test_train_with_a_prompt_profile_exports_it_and_scoring_uses_it(dataset, tmp_path):
    """`train.py --prompt_profile FILE`: the evaluator carries the profile, records it, and
    reloads it; its predictions are what scoring with it gives."""
    from speech_drame.prompt_profile import default_profile, load_profile

    data = default_profile().to_dict()
    data.update(
        name="train-test-wording", system=None, answer_prefix="Verdict:", answer_suffix=".",
        orders={"instruction_first": "{audio}\n{preamble}\n{instruction}\nGiven: {context}",
                "context_first": "{audio}\nGiven: {context}\n{preamble}\n{instruction}"},
        default_order="context_first",
    )  # fmt: skip
    data.pop("paraphrases")
    profile_file = tmp_path / "mine.json"
    profile_file.write_text(json.dumps(data))
    out = tmp_path / "run"
    proc = train(*smoke_args(dataset, out, steps=2), "--prompt_profile", str(profile_file),
                 "--prompt_variation", "false", "--prompt_order", "context_first",
                 cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    evaluator = out / "evaluator"
    info = json.loads((evaluator / "drame_eval_config.json").read_text())
    mine = load_profile(profile_file)
    carried = load_profile(evaluator / "prompt_profile.json")
    assert carried.digest == mine.digest == info["prompt_profile_digest"]
    assert info["prompt_order"] == "context_first"
    scorer = DrameEvalScorer.from_pretrained(out, announce=False)
    assert scorer.profile.digest == mine.digest and scorer.prompt_order == "context_first"
    assert f"prompt profile {mine.label}" in scorer.description
    card = (evaluator / "README.md").read_text()  # the card describes this profile's query
    assert "opened with `Verdict:`" in card and "`Verdict:k.`" in card
    assert "share one encoding of the audio, preamble and context (KV cache)" in card
    saved = [json.loads(x) for x in (evaluator / "predictions" / "test.jsonl").open()]
    from datasets import load_dataset

    again = scorer.score_rows(load_dataset(str(dataset), "archetype")["test"])
    for before, after in zip(saved, again, strict=True):
        for dim, value in before["scores"].items():
            assert after.scores[dim] == pytest.approx(value, abs=1e-6)
    # a profile without paraphrases cannot train with prompt variation: said, not ignored
    proc = train(*smoke_args(dataset, tmp_path / "r2", steps=1), "--prompt_profile",
                 str(profile_file), cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2
    (line,) = error_lines(proc)
    assert "no archetype paraphrases for --prompt_variation" in line


def test_a_tiny_run_with_the_official_code_recipe(dataset, tmp_path):
    """--recipe official-code on the tiny model: the recipe line, one example per clip per
    epoch (the official sampler), drop_last, the canonical prompt, and the card and metrics
    saying which recipe it was; the explicit per-device batch of the smoke command wins."""
    out = tmp_path / "official"
    proc = train(*smoke_args(dataset, out, steps=2), "--recipe", "official-code", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [x for x in proc.stderr.splitlines() if "recipe official-code:" in x]
    assert "kept as given: per_device_train_batch_size 2;" in line
    assert "changed: warmup_steps 1000, dataloader_drop_last true, prompt_variation false, " \
           "sampler random_dimension;" in line  # fmt: skip
    assert "sampler random_dimension: 6 examples per epoch" in proc.stderr  # six clips
    evaluator = out / "evaluator"
    metrics = json.loads((evaluator / "metrics.json").read_text())
    choices = metrics["training_choices"]
    assert (choices["recipe"], choices["sampler"]) == ("official-code", "random_dimension")
    assert choices["dataloader_drop_last"] is True and choices["prompt_variation"] is False
    assert metrics["train"]["examples_per_epoch"] == 6
    assert metrics["train"]["training_pairs"] > 6  # every pair is still a candidate
    card = (evaluator / "README.md").read_text()
    assert "| recipe | `official-code`: per_device_train_batch_size 8 (sft_lora.yaml);" in card
    assert "| sampler | `random_dimension`: every clip once per epoch" in card
    assert "| warm-up steps | 1000 |" in card
    info = json.loads((evaluator / "drame_eval_config.json").read_text())
    assert info["prompt_variation"] is False
