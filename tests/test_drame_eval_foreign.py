"""A checkpoint trained elsewhere: a plain PEFT adapter over the tiny random Qwen2-Audio, queried
with a prompt profile in the test's own wording, scored through `score`, `bench` and the Space,
equals a forward pass built from that profile by hand."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from conftest import populate_hub_cache, tone

from speech_drame.audio_llm.qwen2_audio import AUDIO_PLACEHOLDER, LORA_TARGET_NAMES
from speech_drame.audio_llm.tiny import build_tiny
from speech_drame.cli import main
from speech_drame.prompt_profile import FORMAT_VERSION, load_profile
from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QUESTION = "You are a lighthouse keeper. A storm cuts the power. You say:"
DIMS = ["content_pass", "audio_quality", "human_likeness", "appropriateness"]
ORDERS = {  # every placement of the context and the preamble around the instruction
    "mine": "Listen: {audio}\n[{context}]\n{preamble}\n{instruction}\nRate it.",
    "after": "{preamble}\nListen: {audio}\n{instruction}\n\nSituation: {context}",
    "tail_preamble": "{audio}\n{instruction}\n{preamble}\n{context}",
}


def write_profile(
    path: Path, default_order: str = "mine", system: str | None = "Be a judge."
) -> Path:
    """A profile in the test's own wording: another system turn, order and answer prefix."""
    path.write_text(json.dumps({
        "format_version": FORMAT_VERSION,
        "name": "test-wording",
        "system": system,
        "orders": ORDERS,
        "default_order": default_order,
        "preamble": {"archetype": "Grade a voice clip."},
        "instructions": {"archetype": {
            "content_pass": "Usable at all? 1 yes, 0 no.",
            "audio_quality": "How clean is the sound? {rubric_question} 1 to 5.",
            "human_likeness": "How human does it sound? 1 to 5.",
            "appropriateness": "Does the tone fit? 1 to 5.",
        }},
        "questions": {"archetype": {"audio_quality": "Ignore the words."}},
        "context": {"archetype": "prompt = {question}"},
        "answer_prefix": "Score=",
        "answer_suffix": "",
        "labels": {"score": ["1", "2", "3", "4", "5"], "content_pass": ["0", "1"]},
    }))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def adapter(tmp_path_factory) -> Path:
    """A plain PEFT adapter folder (no project file, no processor): LoRA on every projection
    of the tiny model (seed 0), with non-zero weights, base named ``tiny``."""
    from peft import LoraConfig, get_peft_model

    folder = tmp_path_factory.mktemp("adapter")
    model, _ = build_tiny(seed=0)
    lora = LoraConfig(r=4, target_modules=list(LORA_TARGET_NAMES), init_lora_weights=False)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        peft = get_peft_model(model, lora)
    peft.peft_config["default"].base_model_name_or_path = "tiny"
    peft.save_pretrained(folder)
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md", "adapter_config.json", "adapter_model.safetensors"
    ]  # fmt: skip
    write_profile(folder.parent / "profile.json")
    return folder


def by_hand(adapter: Path, samples: np.ndarray, order: str = "mine") -> dict[str, list[float]]:
    """Label distributions of each dimension from one full forward pass per dimension, the
    query written out here from the profile's pieces."""
    from peft import PeftModel

    base, processor = build_tiny(seed=0)
    model = PeftModel.from_pretrained(base, str(adapter)).eval()
    tok = processor.tokenizer
    head, tail = ORDERS[order].split("{instruction}")
    values = {"audio": AUDIO_PLACEHOLDER, "preamble": "Grade a voice clip.",
              "context": f"prompt = {QUESTION}"}  # fmt: skip
    fill = lambda t: t.format(**values)  # noqa: E731
    prefix = f"<|im_start|>system\nBe a judge.<|im_end|>\n<|im_start|>user\n{fill(head)}"
    instructions = {
        "content_pass": "Usable at all? 1 yes, 0 no.",
        "audio_quality": "How clean is the sound? Ignore the words. 1 to 5.",
        "human_likeness": "How human does it sound? 1 to 5.",
        "appropriateness": "Does the tone fit? 1 to 5.",
    }
    enc = processor(text=[prefix], audio=[samples.astype(np.float32)], sampling_rate=16_000,
                    return_tensors="pt")  # fmt: skip
    out = {}
    for dim, text in instructions.items():
        body = f"{text}{fill(tail)}<|im_end|>\n<|im_start|>assistant\n"
        ids = enc["input_ids"][0].tolist() + tok(body, add_special_tokens=False)["input_ids"]
        ids += tok("Score=", add_special_tokens=False)["input_ids"]
        labels = ["0", "1"] if dim == "content_pass" else ["1", "2", "3", "4", "5"]
        label_ids = [tok(x, add_special_tokens=False)["input_ids"][0] for x in labels]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]),
                           input_features=enc["input_features"],
                           feature_attention_mask=enc["feature_attention_mask"]).logits[0, -1]  # fmt: skip
        out[dim] = torch.softmax(logits[label_ids].double(), -1).tolist()
    return out


def check_row(row, expected) -> None:
    """A result dict (``scores``, ``distributions``, ``content_pass``) against :func:`by_hand`."""
    assert row["content_pass"] == pytest.approx(expected["content_pass"][1], abs=1e-5)
    for dim in DIMS[1:]:
        assert row["distributions"][dim] == pytest.approx(expected[dim], abs=1e-5)
        score = sum((k + 1) * p for k, p in enumerate(expected[dim]))
        assert row["scores"][dim] == pytest.approx(score, abs=1e-5)


def test_score_cli_scores_a_plain_adapter_with_its_profile(adapter, tmp_path, capsys):
    samples = tone(1.0, seed=4, freq=210)
    sf.write(tmp_path / "c.wav", samples, 16_000)
    profile = adapter.parent / "profile.json"
    status = main(["score", str(tmp_path / "c.wav"), "--config", "archetype", "--question",
                   QUESTION, "--scorer", f"drame-eval:{adapter}", "--prompt-profile",
                   str(profile), "--json"])  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    (row,) = json.loads(out.out)
    check_row(row, by_hand(adapter, samples))
    label = load_profile(profile).label
    assert f"prompt profile {label}" in row["scorer_description"]
    assert row["scorer"].startswith("drame-eval-")
    # every setting is said once, and is part of the description
    (said,) = [line for line in out.err.splitlines() if line.startswith("drame-eval ")]
    for setting in (f"prompt profile {label}", "prompt order mine", "lora scope all",
                    "label policy not recorded", "dtype float32", "decoding expectation"):  # fmt: skip
        assert setting in said
    described = out.err.split("scorer: ", 1)[1]
    for setting in (f"prompt profile {label}", "prompt order mine", "lora scope all",
                    "label policy not recorded", "dtype float32", "expectation decoding"):  # fmt: skip
        assert setting in described


def test_a_plain_adapter_without_a_profile_is_refused_naming_the_option(adapter, tmp_path, capsys):
    sf.write(tmp_path / "c.wav", tone(1.0), 16_000)
    status = main(["score", str(tmp_path / "c.wav"), "--config", "archetype", "--question",
                   QUESTION, "--scorer", f"drame-eval:{adapter}"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert "PEFT adapter without drame_eval_config.json" in line and "--prompt-profile FILE" in line
    # the option belongs to DRAME-Eval: another kind refuses it
    status = main(["score", str(tmp_path / "c.wav"), "--config", "archetype", "--question",
                   QUESTION, "--prompt-profile", str(adapter.parent / "profile.json")])  # fmt: skip
    assert status == 2 and "--prompt-profile is a drame-eval: option" in capsys.readouterr().err


def test_profile_and_order_are_part_of_the_id(adapter, tmp_path):
    one = DrameEvalScorer.from_pretrained(adapter, config="archetype", announce=False,
                                          prompt_profile=adapter.parent / "profile.json")  # fmt: skip
    other = write_profile(tmp_path / "p.json", default_order="after")
    two = DrameEvalScorer.from_pretrained(adapter, config="archetype", announce=False,
                                          prompt_profile=other)  # fmt: skip
    assert one.id != two.id and "prompt order after" in two.description


@pytest.mark.parametrize("order", list(ORDERS))
def test_shared_prefix_holds_for_every_order_a_profile_can_express(adapter, tmp_path, order):
    profile = write_profile(tmp_path / "p.json", default_order=order)
    scorer = DrameEvalScorer.from_pretrained(adapter, config="archetype", announce=False,
                                             prompt_profile=profile, batch_size=2)  # fmt: skip
    clips = [Clip(f"c{i}", tone(s, seed=i, freq=160 + 50 * i), {"question": QUESTION})
             for i, s in enumerate((1.0, 2.5, 0.5))]  # fmt: skip
    fast = scorer.score_clips(clips, shared_prefix=True)
    slow = scorer.score_clips(clips, shared_prefix=False)
    for a, b in zip(fast, slow, strict=True):
        assert a.ok and b.ok
        assert a.content_pass == pytest.approx(b.content_pass, abs=1e-5)
        for d in DIMS[1:]:
            assert a.distributions[d] == pytest.approx(b.distributions[d], abs=1e-5)
    check_row(fast[0].to_dict(), by_hand(adapter, clips[0].samples, order))


def test_bench_scores_a_plain_adapter_with_its_profile(adapter, tmp_path, capsys):
    from speech_drame.rolebench.results_log import read_rows

    (tmp_path / "scenarios.jsonl").write_text(json.dumps({"id": "q0", "question": QUESTION}) + "\n")
    (tmp_path / "systems" / "a").mkdir(parents=True)
    samples = tone(0.8, seed=7, freq=190)
    sf.write(tmp_path / "systems" / "a" / "q0.wav", samples, 16_000)
    status = main(["bench", "--scenarios", str(tmp_path / "scenarios.jsonl"), "--systems-dir",
                   str(tmp_path / "systems"), "--out", str(tmp_path / "run"), "--scorer",
                   f"drame-eval:{adapter}", "--prompt-profile", str(adapter.parent / "profile.json"),
                   "--no-plots", "--resamples", "20", "--quiet"])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    doc = json.loads((tmp_path / "run" / "leaderboard.json").read_text())
    assert "prompt profile test-wording@" in doc["scorer_description"]
    (row,) = read_rows(tmp_path / "run" / "results.jsonl")
    assert row["scorer"] == doc["scorer"]
    assert row["scorer_description"] == doc["scorer_description"]  # a row says how it was scored
    check_row(row, by_hand(adapter, samples))


def test_the_space_scores_a_plain_adapter_with_its_profile(adapter, tmp_path, monkeypatch):
    from speech_drame import space_app

    monkeypatch.setenv(space_app.PROFILE_ENV, str(adapter.parent / "profile.json"))
    samples = tone(1.2, seed=8, freq=230)
    sf.write(tmp_path / "up.wav", samples, 16_000)
    spec = f"drame-eval:{adapter}"
    result = space_app.score_clip(tmp_path / "up.wav", "archetype", QUESTION, scorer=spec)
    check_row(result.to_dict(), by_hand(adapter, samples))
    assert "prompt profile test-wording@" in space_app.scorer_card("archetype", spec)


def test_a_full_model_folder_scores_with_its_profile(adapter, tmp_path, capsys):
    """The adapter merged into its base and saved whole (model + processor, no adapter file):
    ``drame-eval:FOLDER`` loads it as a model folder and gives the adapter's distributions."""
    from peft import PeftModel

    base, processor = build_tiny(seed=0)
    merged = PeftModel.from_pretrained(base, str(adapter)).merge_and_unload()
    folder = tmp_path / "merged"
    merged.save_pretrained(folder)
    processor.save_pretrained(folder)
    assert not (folder / "adapter_config.json").exists()
    samples = tone(1.1, seed=5, freq=240)
    sf.write(tmp_path / "c.wav", samples, 16_000)
    profile = adapter.parent / "profile.json"
    status = main(["score", str(tmp_path / "c.wav"), "--config", "archetype", "--question",
                   QUESTION, "--scorer", f"drame-eval:{folder}", "--prompt-profile",
                   str(profile), "--json"])  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    (row,) = json.loads(out.out)
    check_row(row, by_hand(adapter, samples))
    for setting in (f"base {folder}", "lora scope no adapter", "label policy not recorded"):
        assert setting in row["scorer_description"]
    # without the profile it is refused like an adapter
    status = main(["score", str(tmp_path / "c.wav"), "--config", "archetype", "--question",
                   QUESTION, "--scorer", f"drame-eval:{folder}"])  # fmt: skip
    assert status == 2 and "--prompt-profile FILE" in capsys.readouterr().err


def test_a_plain_adapter_by_hub_id_loads_offline_from_the_cache(adapter, offline_cache, tmp_path):
    """``drame-eval:ORG/NAME`` of a plain adapter (no project file) read from a Hub cache:
    the same distributions as the folder, and the description names the Hub id."""
    files = ["adapter_config.json", "adapter_model.safetensors"]
    populate_hub_cache(offline_cache, "someone/foreign-adapter", adapter, "ab" * 20, files)
    profile = adapter.parent / "profile.json"
    scorer = DrameEvalScorer.from_pretrained("someone/foreign-adapter", config="archetype",
                                             announce=False, prompt_profile=profile)  # fmt: skip
    assert "someone/foreign-adapter" in scorer.description and "base tiny" in scorer.description
    samples = tone(0.9, seed=6, freq=200)
    (result,) = scorer.score_clips([Clip("c", samples, {"question": QUESTION})])
    check_row(result.to_dict(), by_hand(adapter, samples))
    with pytest.raises(FileNotFoundError, match="someone/absent"):
        DrameEvalScorer.from_pretrained("someone/absent", config="archetype", announce=False,
                                        prompt_profile=profile)  # fmt: skip
