"""The README's commands and code blocks run as written (see ``readme_blocks`` for the markers).

The blocks run top to bottom in one folder that looks like the repository root after `make demo`
(the demo dataset and scorer are hard-linked copies, so nothing here changes the checkout), with
the virtual environment on PATH as after `source .venv/bin/activate`. Placeholders are real
files: `clip.wav` and `clips/` are LibriVox speech, `responses/` holds two systems' answers to
every realism test scenario (demo clips, so their features are cached), `evalbench_raw/` is a release
shaped like the public EvalBench on the Hub (JSON arrays of demo records, the authors' `wav_path` prefix,
no audio) whose clips are in `my_audio/`, and the judge endpoint is a small OpenAI-compatible server on
127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import DEMO_DATASET, DEMO_RELEASE, LIBRIVOX, REPO, write_json_release
from judge_server import JudgeServer, chat_body, reply, running
from readme_blocks import Block, blocks, commands

from speech_drame.official_formats import OFFICIAL_NAMES
from speech_drame.schema import ARCHETYPE_DIMENSIONS, CONTENT_PASS, REALISM_DIMENSIONS

README = REPO / "README.md"
BLOCKS = blocks(README)
VENV_BIN = Path(sys.executable).parent
ENDPOINT = "http://127.0.0.1:8000/v1"  # as the README writes it; replaced by the test server
HELP_PROGRAMS = {"speech-drame", "python", "hf", "accelerate", "torchrun"}
# what the README's blocks leave behind, checked after they ran
OUTPUTS = [
    "agreement.json",
    "evalbench_agreement.json",
    "preds/evalbench_finetuned.jsonl",
    "artifacts/evalbench_scorer/metrics.json",
    "samples_built/build_report.json",
    "my-ratings/build_report.json",
    "artifacts/my_scorer/metrics.json",
    "archetype_scenarios.jsonl",
    "artifacts/lite_scorer/metrics.json",
    "artifacts/lite_finetuned/metrics.json",
    "artifacts/drame-eval-smoke/evaluator/drame_eval_config.json",
    ".judge-cache",
    "runs/realism/leaderboard.md",
    "runs/realism-sharded/leaderboard.md",
    "build/paraling_demo/queries.jsonl",
    "build/trace_demo/pairs.jsonl",
    "build/animescore_ranker/config.json",
]


def _env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(VENV_BIN.parent),
        HF_HUB_OFFLINE="1",
        SPEECH_DRAME_LITE_SCORER=str(folder / "artifacts" / "lite_scorer"),
    )
    # SPEECH_DRAME_CACHE stays the test session's private copy of the user's feature cache
    return env


def _link_tree(src: Path, dst: Path) -> None:
    """A hard-linked copy: outputs are replaced whole (atomic writes), never edited in place."""
    shutil.copytree(src, dst, copy_function=os.link)


def _repository_like(folder: Path) -> Path:
    """``folder`` set up like the checkout after `make demo`, plus the README's placeholders."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("configs", "dataset_scripts", "evaluate_metric", "official_samples", "train.py",
                 "benchmarks", ".venv"):  # fmt: skip
        (folder / name).symlink_to(REPO / name)
    _link_tree(DEMO_DATASET, folder / "speech-drame")
    _link_tree(REPO / "artifacts" / "lite_scorer", folder / "artifacts" / "lite_scorer")
    (folder / "build").mkdir()
    (folder / "build" / "demo_release").symlink_to(DEMO_RELEASE)
    speech = sorted(LIBRIVOX.glob("*.wav"))
    shutil.copy(speech[0], folder / "clip.wav")
    (folder / "clips").mkdir()
    for i, name in enumerate(("clip1.wav", "clip2.wav")):
        shutil.copy(speech[i + 1], folder / name)
        shutil.copy(speech[i + 1], folder / "clips" / name)
    _responses(folder)
    _official_outputs(folder / "official_outputs")
    _public_release(folder)
    return folder


PUBLIC_SHARE = {"train": 30, "test": 12, "test_real": 8}  # records per split of the test's release


def _public_release(folder: Path) -> None:
    """``evalbench_raw/``: demo records in the public EvalBench's shape (JSON arrays, a card
    with the licence, as `hf download` fetches it; no audio); ``my_audio/``: their clips (demo
    audio, whose features are cached; half of ``test_real`` left without), the archetype ones in
    a zip; and, in ``official_outputs``,
    a fine-tuning result folder (with ``ground_truth_ratings``) and a zero-shot trial file for
    its realism test split."""
    records: dict[str, list[dict]] = {}
    for path in sorted(DEMO_RELEASE.glob("*_data/*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()[: PUBLIC_SHARE[path.stem]]
        records[f"{path.parent.name}/{path.stem}.json"] = [json.loads(line) for line in lines]
    write_json_release(folder / "evalbench_raw", records)
    audio = folder / "my_audio"
    audio.mkdir()
    with zipfile.ZipFile(audio / "archetype_clips.zip", "w") as zf:
        for rel, rows in records.items():
            for row in rows:
                wav = DEMO_RELEASE / rel.split("/")[0] / row["wav_path"].rsplit("/", 1)[1]
                if rel.startswith("archetype"):
                    zf.write(wav, f"clips/{wav.name}")
                elif not (rel.endswith("test_real.json") and rows.index(row) % 2):
                    os.link(wav, audio / wav.name)
    rng = np.random.default_rng(1)
    test = records["realism_data/test.json"]
    results = folder / "official_outputs" / "finetune_evalbench_realism"
    results.mkdir()
    for dim in REALISM_DIMENSIONS:
        rows = []
        for row in test:
            p = rng.dirichlet(np.ones(5))
            truth = {d: row["annotations"][d] for d in REALISM_DIMENSIONS}
            rows.append({"id": row["id"], "specific_dimension": OFFICIAL_NAMES[dim],
                         "model_score": int(np.argmax(p)) + 1,
                         "probability_score": float(p @ np.arange(1, 6)),
                         "ground_truth_ratings": truth})  # fmt: skip
        (results / f"{OFFICIAL_NAMES[dim]}.json").write_text(json.dumps(rows, indent=2))
    lines = [{"id": row["id"], "model_name": "judge", "audio_path": f"/data/{row['id']}.wav",
              "response": json.dumps({OFFICIAL_NAMES[d]: int(rng.integers(1, 6))
                                      for d in REALISM_DIMENSIONS})} for row in test]  # fmt: skip
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "official_outputs" / "fewshot_evalbench.jsonl").write_text(text)


def _realism_test_ids() -> list[str]:
    import pyarrow.parquet as pq

    return [
        i
        for shard in sorted((DEMO_DATASET / "realism").glob("test-*.parquet"))
        for i in pq.read_table(shard, columns=["id"]).column("id").to_pylist()
    ]


def _official_outputs(folder: Path) -> None:
    """The official pipelines' outputs for the demo realism test split, in their formats: two
    zero/few-shot trial files (one unusable answer) and a fine-tuning result folder."""
    rng = np.random.default_rng(0)
    names = [OFFICIAL_NAMES[d] for d in REALISM_DIMENSIONS]
    ids = _realism_test_ids()
    folder.mkdir()
    for trial in (1, 2):
        lines = []
        for i, clip in enumerate(ids):
            answer = {n: int(rng.integers(1, 6)) for n in names}
            response = "sorry" if (trial, i) == (2, 0) else json.dumps(answer)
            lines.append({"id": clip, "model_name": "judge", "response": response,
                          "audio_path": f"/data/realism/{clip}.wav"})  # fmt: skip
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / f"fewshot_trial{trial}.jsonl").write_text(text)
    (folder / "finetune_realism").mkdir()
    for name in names:
        records = []
        for clip in ids:
            p = rng.dirichlet(np.ones(5))
            records.append({"id": clip, "specific_dimension": name,
                            "model_score": int(np.argmax(p)) + 1,
                            "probability_score": float(p @ np.arange(1, 6)),
                            "ground_truth_ratings": {}})  # fmt: skip
        (folder / "finetune_realism" / f"{name}.json").write_text(json.dumps(records, indent=2))


def _responses(folder: Path) -> None:
    """Two systems answering every realism test scenario: ``sys_a`` with each scenario's own
    demo clip, ``sys_b`` with the next scenario's (a mismatched performance)."""
    ids = _realism_test_ids()
    for system, sources in (("sys_a", ids), ("sys_b", ids[1:] + ids[:1])):
        (folder / "responses" / system).mkdir(parents=True)
        for scenario, source in zip(ids, sources, strict=True):
            wav = DEMO_RELEASE / "realism_data" / f"{source}.wav"
            os.link(wav, folder / "responses" / system / f"{scenario}.wav")
    (folder / "human.json").write_text(json.dumps({"sys_a": 3.5, "sys_b": 2.0}))


def _judge_answer(payload, n):
    """A valid answer in either mode (the judge reads the dimensions of its own mode)."""
    answer = {CONTENT_PASS: True, **dict.fromkeys(ARCHETYPE_DIMENSIONS, 4)}
    answer.update(dict.fromkeys(REALISM_DIMENSIONS, 3))
    return reply(chat_body(json.dumps(answer)))


@pytest.fixture(scope="module")
def judge_server():
    server = JudgeServer()
    server.routes["NAME"] = _judge_answer
    with running(server):
        yield server


@pytest.fixture(scope="module")
def checkout(tmp_path_factory, demo_dataset_dir) -> Path:
    return _repository_like(tmp_path_factory.mktemp("readme") / "checkout")


def _script(block: Block, endpoint: str) -> str:
    if block.lang == "python":
        return block.code
    lines = [c.text for c in commands(block) if c.runs]
    return "\n".join(lines).replace(ENDPOINT, endpoint) + "\n"


def _run(block: Block, folder: Path, endpoint: str) -> subprocess.CompletedProcess:
    script = folder / f"readme_{block.line}.{'py' if block.lang == 'python' else 'sh'}"
    script.write_text(_script(block, endpoint), encoding="utf-8")
    argv = (
        [str(VENV_BIN / "python"), script.name]
        if block.lang == "python"
        else ["bash", "-eo", "pipefail", script.name]
    )
    return subprocess.run(
        argv, cwd=folder, env=_env(folder), capture_output=True, text=True, timeout=900
    )


RUNNABLE = [b for b in BLOCKS if b.lang in ("bash", "python") and b.skip is None]


def _rate_campaign(db: Path, seed: int = 0) -> int:
    """Every invited rater rates every task the campaign hands them (answers drawn around a
    per-clip level, as tests/campaign_standin.py draws them); returns the ratings stored."""
    import numpy as np
    from campaign_standin import random_answers

    from speech_drame.campaign.forms import validate_answers
    from speech_drame.campaign.store import open_campaign

    campaign = open_campaign(str(db))
    rng = np.random.default_rng(seed)
    level = {c.id: rng.uniform(1.5, 4.5) for c in campaign.clips()}
    stored = 0
    for rater in campaign.raters():
        while (task := campaign.current_task(rater.name)) is not None:
            answers = random_answers(campaign.config, rng, level.get(task.clip.id, 3.0))
            answers = validate_answers(campaign.config, answers)
            campaign.submit(rater.name, task.task_id, f"{rater.name}-{task.task_id}", answers)
            stored += 1
    campaign.close()
    return stored


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=[b.name for b in RUNNABLE])
def test_readme_block_runs_as_written(block, checkout, judge_server, tmp_path):
    folder = _repository_like(tmp_path / "checkout") if block.fresh else checkout
    if block.rated:
        assert _rate_campaign(folder / "ratings.db") > 0, "the README's campaign has no task"
    done = _run(block, folder, judge_server.url)
    assert done.returncode == 0, (
        f"{block.name} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
        f"\n--- stderr\n{done.stderr[-3000:]}"
    )


@pytest.mark.slow
def test_the_readme_blocks_leave_their_outputs(checkout):
    """Runs after the blocks (file order): what they write exists, a shard run included."""
    missing = [p for p in OUTPUTS if not (checkout / p).exists()]
    assert not missing, f"not written by the README's blocks: {missing}"
    board = (checkout / "runs" / "realism-sharded" / "leaderboard.md").read_text()
    assert "sys_a" in board and "sys_b" in board
    # the public-release walk-through: the audio attached later is used, what lacks it counted
    realism = json.loads((checkout / "artifacts/evalbench_scorer/metrics.json").read_text())
    real = realism["configs"]["realism"]["splits"]["test_real"]
    assert real["clips_without_audio"] == PUBLIC_SHARE["test_real"] // 2
    assert real["clips_scored"] + real["clips_failed"] == PUBLIC_SHARE["test_real"] // 2


def test_every_readme_block_is_run_or_says_why_not():
    assert RUNNABLE, "no README block is run"
    for block in BLOCKS:
        # another language (a server configuration) cannot run: it must say so
        assert block.lang in ("bash", "python", "") or block.skip is not None, (
            f"{block.name}: a {block.lang} block is not run; say why"
        )
        if block.skip is not None:
            assert len(block.skip) > 10, f"{block.name}: say why the block is not run"


def _help_argv(words: list[str]) -> list[str] | None:
    """The command's own ``--help``: its words up to the first option, then ``--help``."""
    words = [w for w in words if w != "&"]
    if not words or words[0] not in HELP_PROGRAMS:
        return None
    head = []
    for word in words:
        if word.startswith("-"):
            break
        head.append(word)
    return [*head, "--help"]


SHOWN = sorted(
    {
        tuple(argv)
        for block in BLOCKS
        if block.lang == "bash"
        for command in commands(block)
        if (argv := _help_argv(command.words))
    }
)


@pytest.mark.parametrize("argv", SHOWN, ids=[" ".join(a) for a in SHOWN])
def test_every_command_the_readme_shows_is_installed_and_answers_help(argv, tmp_path):
    """Even the commands a block does not run (GPU, Hub) exist after `make setup`."""
    done = subprocess.run(
        list(argv), cwd=REPO, env=_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{' '.join(argv)}: {done.stderr[-2000:]}"
    assert "usage" in (done.stdout + done.stderr).lower()


def test_the_readme_apt_lines_are_the_makefile_lists():
    """One apt line for `make demo` (APT_PACKAGES), one for what `make test` adds."""
    makefile = (REPO / "Makefile").read_text()
    wanted = [
        sorted(re.search(rf"^{name} := (.+)$", makefile, re.M).group(1).split())
        for name in ("APT_PACKAGES", "APT_TEST_PACKAGES")
    ]
    shown = [
        c.words
        for b in BLOCKS
        for c in commands(b)
        if c.words[:3] == ["sudo", "apt-get", "install"]
    ]
    assert sorted(sorted(w[3:]) for w in shown) == sorted(wanted), (shown, wanted)
    pins = makefile + "".join(
        (REPO / name).read_text()
        for name in ("requirements.txt", "requirements-test.txt", "constraints.txt")
    )
    for pinned in re.findall(r"pip install [^\n]*?(\S+==[\w.]+)", README.read_text()):
        assert pinned in pins, f"README installs {pinned}; make setup does not"


@pytest.mark.slow
def test_the_agreement_block_from_another_folder_never_reads_a_stale_cache(checkout, tmp_path):
    """Run from a folder other than the repository root, with a `datasets` cache holding a
    stale 10-row `speech-drame` (as an earlier load of some other folder of that name leaves):
    `--dataset speech-drame` is an error naming it; the folder's path works."""
    from conftest import realism_record, write_release
    from datasets import load_dataset

    from speech_drame.data.build import build_dataset
    from speech_drame.data.reader import open_split

    cache = tmp_path / "datasets-cache"
    release = write_release(tmp_path / "release", {
        "realism_data/test.jsonl": [realism_record(f"stale{i}") for i in range(10)]})  # fmt: skip
    stale = tmp_path / "elsewhere" / "speech-drame"
    build_dataset(release, stale, progress=False)
    assert load_dataset(str(stale), "realism", split="test", cache_dir=str(cache)).num_rows == 10
    (block,) = [b for b in RUNNABLE if "speech-drame agreement --dataset speech-drame" in b.code]
    other = tmp_path / "other"
    other.mkdir()
    env = {**_env(checkout), "HF_DATASETS_CACHE": str(cache)}
    for command in commands(block):
        done = subprocess.run(["bash", "-c", command.text], cwd=other, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 2, done.stdout
        assert "error: --dataset 'speech-drame': no such folder" in done.stderr
        fixed = command.text.replace(
            "--dataset speech-drame", f"--dataset {checkout / 'speech-drame'}"
        )
        done = subprocess.run(["bash", "-c", fixed], cwd=other, env=env, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        rows = open_split(checkout / "speech-drame", "realism", "test").n_rows
        assert f"realism/test of {checkout / 'speech-drame'}: {rows} samples" in done.stdout
