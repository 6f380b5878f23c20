import numpy as np
import pytest
import torch
from conftest import tone

from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX, PromptEncoder
from speech_drame.audio_llm.tiny import build_tiny
from speech_drame.prompts import scored_dimensions
from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer

FIELDS = {
    "question": "You are a firefighter. Smoke fills the hall and you find a trapped child. You say:",
    "char_profile": "Ann is a patient older sister who speaks softly and never rushes.",
    "local_scene": "Ann calms her brother after a storm knocked the power out.",
    "char_style": "Calm, Warm",
}


@pytest.fixture(scope="module")
def tiny():
    return build_tiny(seed=0)


def clips(seconds=(1.0, 30.0, 2.5)) -> list[Clip]:
    # Different lengths (so different audio-token counts and left padding), one full 30 s.
    return [
        Clip(
            f"c{i}",
            tone(s, freq=150 + 60 * i, seed=i),
            {**FIELDS, "char_style": "Calm" + ", Warm" * i},
        )
        for i, s in enumerate(seconds)
    ]


def max_difference(a, b) -> float:
    """Largest difference of any number two lists of results hold."""
    diff = 0.0
    for x, y in zip(a, b, strict=True):
        assert x.ok and y.ok and x.scores.keys() == y.scores.keys()
        assert x.label_mass.keys() == y.label_mass.keys()
        assert (x.content_pass is None) == (y.content_pass is None)
        if x.content_pass is not None:
            diff = max(diff, abs(x.content_pass - y.content_pass))
        for d in x.label_mass:
            diff = max(diff, abs(x.label_mass[d] - y.label_mass[d]))
        for d in x.scores:
            pairs = zip(x.distributions[d], y.distributions[d], strict=True)
            diff = max(diff, abs(x.scores[d] - y.scores[d]), *(abs(u - v) for u, v in pairs))
    return diff


@pytest.mark.parametrize("order", ["instruction_first", "context_first"])
@pytest.mark.parametrize("config", ["archetype", "realism"])
def test_shared_prefix_equals_one_full_forward_per_dimension(tiny, config, order):
    model, processor = tiny
    scorer = DrameEvalScorer(model, processor, config, batch_size=2, prompt_order=order)
    assert scorer.prompt_order == order
    # The 30-s clip only with archetype's 4 dimensions: the reference path is slow.
    seconds = (1.0, 30.0, 2.5) if config == "archetype" else (1.0, 0.5, 2.5)
    shared = scorer.score_clips(clips(seconds), shared_prefix=True)
    full = scorer.score_clips(clips(seconds), shared_prefix=False)
    assert [r.id for r in shared] == ["c0", "c1", "c2"]
    assert max_difference(shared, full) < 1e-4
    rated = tuple(d for d in scored_dimensions(config) if d != "content_pass")
    assert scorer.dimensions == rated and scorer.content_pass == (config == "archetype")
    for result in shared:
        assert tuple(result.scores) == rated
        assert tuple(result.label_mass) == scored_dimensions(config)
        assert all(0 < m < 1 for m in result.label_mass.values())
        assert (result.content_pass is not None) == (config == "archetype")
        if result.content_pass is not None:
            assert 0 < result.content_pass < 1
        for dim, score in result.scores.items():
            dist = result.distributions[dim]
            assert len(dist) == 5 and sum(dist) == pytest.approx(1.0, abs=1e-6)
            assert 1 <= score <= 5 and score == pytest.approx(np.dot([1, 2, 3, 4, 5], dist))
    # The random model is not uniform, so the comparison above is not trivially satisfied,
    # and clips differ from each other.
    probs = shared[0].distributions[rated[-1]]
    assert max(probs) - min(probs) > 1e-3
    assert max_difference(shared[:1], shared[2:3]) > 1e-4


def test_failures_are_recorded_never_scored(tiny):
    model, processor = tiny
    scorer = DrameEvalScorer(model, processor, "realism", batch_size=2)
    bad = Clip("no-scene", tone(1.0), {**FIELDS, "local_scene": ""})
    results = scorer.score_clips([clips()[0], bad, clips()[2]])
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].scores == {} and "'local_scene'" in results[1].error
    assert "no-scene" in results[1].error and results[1].error_kind == "input"

    broken, _ = build_tiny(seed=0)
    with torch.no_grad():
        broken.lm_head.weight[0, 0] = float("nan")
    nan_results = DrameEvalScorer(broken, processor, "realism").score_clips(clips()[:1])
    assert not nan_results[0].ok and nan_results[0].scores == {}
    assert "non-finite model output" in nan_results[0].error
    assert nan_results[0].error_kind == "model" and nan_results[0].label_mass == {}


def test_a_model_crash_fails_its_batch_as_retryable_and_the_next_batch_is_scored(tiny, monkeypatch):
    model, processor = tiny
    scorer = DrameEvalScorer(model, processor, "archetype", batch_size=2)
    real = scorer._shared_prefix_logprobs
    calls = []

    def out_of_memory_once(prefixes):
        calls.append(len(prefixes))
        if len(calls) == 1:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(prefixes)

    monkeypatch.setattr(scorer, "_shared_prefix_logprobs", out_of_memory_once)
    results = scorer.score_clips(clips((1.0, 0.5, 2.5)))
    assert calls == [2, 1]
    assert [(r.ok, r.error_kind) for r in results] == [(False, "model")] * 2 + [(True, None)]
    assert "out of memory" in results[0].error and results[0].scores == {}


def test_batch_of_eight_equals_batch_of_one(tiny, tmp_path):
    """The contract's entry point: eight clips of different lengths in one padded batch give
    the outputs of eight batches of one."""
    import soundfile as sf

    from speech_drame.scorers.base import ClipInput, Scorer

    model, processor = tiny
    inputs = []
    for i in range(8):
        path = tmp_path / f"c{i}.wav"
        sf.write(path, tone(0.4 + 0.3 * i, freq=140 + 25 * i, seed=i), 16_000)
        inputs.append(ClipInput(f"c{i}", str(path), {"question": FIELDS["question"]}))
    one = DrameEvalScorer(model, processor, "archetype", batch_size=1)
    eight = DrameEvalScorer(model, processor, "archetype", batch_size=8)
    assert isinstance(one, Scorer) and one.id == eight.id and one.id.startswith("drame-eval-")
    a, b = one.score(inputs), eight.score(inputs)
    assert [r.id for r in b] == [c.id for c in inputs]
    assert max_difference(a, b) < 1e-5
    assert all(r.audio is not None and r.audio.gain == 1.0 for r in b)


def test_labels_are_single_tokens_and_suffixes_per_dimension(tiny):
    _, processor = tiny
    enc = PromptEncoder(processor, "archetype", scored_dimensions("archetype"))
    assert enc.label_ids["content_pass"] == [
        processor.tokenizer.convert_tokens_to_ids(t) for t in ("0", "1")
    ]
    prefix = enc.encode_prefix(tone(30.0), FIELDS)
    assert len(set(map(tuple, prefix.suffix_ids.values()))) == 4
    assert all(s[-2:] == enc.answer_open_ids for s in prefix.suffix_ids.values())
    mel_frames = int(prefix.feature_attention_mask.sum())
    n_audio = prefix.input_ids.count(processor.audio_token_id)
    assert mel_frames == 3000 and n_audio == ((mel_frames - 1) // 2 + 1 - 2) // 2 + 1 == 750


def test_lora_regex_hits_only_the_language_model(tiny):
    import re

    model, _ = tiny
    hits = [n for n, _ in model.named_modules() if re.fullmatch(LORA_TARGET_REGEX, n)]
    assert hits and all(".language_model." in n for n in hits)
    kinds = {n.rsplit(".", 1)[1] for n in hits}
    assert kinds == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    audio_attention = [
        n for n, _ in model.named_modules() if "audio_tower" in n and n.endswith("q_proj")
    ]
    assert audio_attention  # the encoder has q_proj too, and the regex leaves it alone


def test_score_rows_streams_batches_and_records_unusable_audio(tiny, tmp_path):
    import soundfile as sf
    from datasets import Audio, Dataset

    model, processor = tiny
    signals = {"a": tone(1.0, seed=1), "silent": tone(1.0) * 0, "b": tone(0.7, seed=2)}
    for name, x in signals.items():
        sf.write(tmp_path / f"{name}.wav", x, 16_000, subtype="FLOAT")
    rows = Dataset.from_dict(
        {
            "id": list(signals),
            "audio": [str(tmp_path / f"{name}.wav") for name in signals],
            "question": [FIELDS["question"]] * 3,
        }
    ).cast_column("audio", Audio(sampling_rate=16_000))
    scorer = DrameEvalScorer(model, processor, "archetype", batch_size=1)
    results = scorer.score_rows(rows)
    assert [r.id for r in results] == ["a", "silent", "b"]
    assert [r.ok for r in results] == [True, False, True]
    assert "'silent'" in results[1].error and "digital silence" in results[1].error
    direct = scorer.score_clips([Clip("b", tone(0.7, seed=2), {"question": FIELDS["question"]})])
    assert max_difference(results[2:], direct) < 1e-6


def test_score_decodes_files_inside_the_loop_one_batch_at_a_time(tmp_path, monkeypatch):
    """``score`` (the scorer contract, as `score --scorer drame-eval:...` calls it) reads and
    decodes each batch inside the scoring loop: at most ``batch_size`` decoded clips are alive
    at once, an unusable file is an input failure in its place, and the scores equal one batch
    of every clip. The id changes with the adapter's weights."""
    import inspect
    import weakref

    import soundfile as sf
    from peft import LoraConfig, get_peft_model

    from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX
    from speech_drame.scorers import drame_eval
    from speech_drame.scorers.base import ClipInput
    from speech_drame.scorers.drame_eval import EvaluatorInfo, clip_from_input
    from speech_drame.scorers.specs import load_scorer

    folder = tmp_path / "evaluator"
    model, processor = build_tiny(seed=0)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(folder)
    processor.save_pretrained(folder)
    EvaluatorInfo("archetype", list(scored_dimensions("archetype")), "tiny").save(folder)
    paths = []
    for i in range(9):
        paths.append(str(tmp_path / f"c{i}.wav"))
        sf.write(paths[-1], tone(0.4, freq=150 + 20 * i, seed=i) * (i != 4), 16_000)
    inputs = [ClipInput(p, p, {"question": FIELDS["question"]}) for p in paths]

    decoded: list[weakref.ref] = []
    peak = 0

    def counting(clip):
        nonlocal peak
        loaded = clip_from_input(clip)
        decoded.append(weakref.ref(loaded))
        peak = max(peak, sum(r() is not None for r in decoded))
        return loaded

    scorer = load_scorer(f"drame-eval:{folder}", "archetype")
    monkeypatch.setattr(drame_eval, "clip_from_input", counting)
    results = scorer.score(inputs)
    monkeypatch.undo()
    batch_size = inspect.signature(DrameEvalScorer.from_pretrained).parameters["batch_size"]
    assert len(decoded) == 8 and peak <= batch_size.default, peak  # c4 is digital silence
    assert [r.ok for r in results] == [i != 4 for i in range(9)]
    assert "c4.wav: digital silence" in results[4].error and results[4].error_kind == "input"

    whole = DrameEvalScorer.from_pretrained(folder, batch_size=len(paths))
    reference = whole.score_clips([clip_from_input(c) for i, c in enumerate(inputs) if i != 4])
    kept = [r for r in results if r.ok]
    assert [r.id for r in kept] == [r.id for r in reference] == paths[:4] + paths[5:]
    assert max_difference(kept, reference) < 1e-5
    assert whole.id == scorer.id

    with torch.no_grad():  # another adapter: another id
        next(p for n, p in whole.model.named_parameters() if "lora_B" in n).add_(0.01)
    whole._id = None
    assert whole.id != scorer.id


def test_prompt_orders_put_the_instruction_before_or_after_the_context(tiny):
    """``instruction_first`` (the official order) shares only system turn, audio and preamble;
    ``context_first`` also shares the context. The same tokens are in both, rearranged."""
    from speech_drame.audio_llm.qwen2_audio import prefix_text, suffix_text
    from speech_drame.prompt_profile import default_profile
    from speech_drame.prompts import instruction, rubric

    _, processor = tiny
    context = default_profile().context_text("realism", FIELDS)
    rule = instruction(rubric("realism", "trait_embodiment"))
    queries = {}
    for order in ("instruction_first", "context_first"):
        prefix = prefix_text("realism", FIELDS, order)
        suffix = suffix_text("realism", "trait_embodiment", FIELDS, order)
        assert (context in prefix) == (order == "context_first")
        query = prefix + suffix
        assert (query.index(rule) < query.index(context)) == (order == "instruction_first")
        queries[order] = query
        enc = PromptEncoder(processor, "realism", ["trait_embodiment"], order)
        ids = enc.encode_prefix(tone(1.0), FIELDS).suffix_ids["trait_embodiment"]
        assert processor.tokenizer.decode(ids) == suffix
    assert sorted(queries["instruction_first"]) == sorted(queries["context_first"])
    with pytest.raises(ValueError, match="prompt_order: unknown value 'sideways'"):
        PromptEncoder(processor, "realism", ["trait_embodiment"], "sideways")


def test_scorer_uses_the_prompt_order_the_evaluator_was_trained_with(tmp_path):
    """A folder records its order; one saved before the field existed was trained with
    ``context_first`` and is scored that way."""
    import json

    from peft import LoraConfig, get_peft_model

    from speech_drame.scorers.drame_eval import EVALUATOR_CONFIG, EvaluatorInfo

    model, processor = build_tiny(seed=0)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(
        tmp_path
    )
    processor.save_pretrained(tmp_path)
    dims = list(scored_dimensions("archetype"))
    EvaluatorInfo("archetype", dims, "tiny", prompt_order="instruction_first").save(tmp_path)
    assert DrameEvalScorer.from_pretrained(tmp_path).prompt_order == "instruction_first"
    old = json.loads((tmp_path / EVALUATOR_CONFIG).read_text())
    for key in ("prompt_order", "lora_scope", "loss_on", "prompt_variation", "label_policy"):
        del old[key]
    (tmp_path / EVALUATOR_CONFIG).write_text(json.dumps(old))
    info = EvaluatorInfo.load(tmp_path)
    assert (info.prompt_order, info.lora_scope, info.loss_on) == (
        "context_first",
        "language",
        "label_token",
    )
    assert (info.prompt_variation, info.label_policy) == (False, "skip")
    assert DrameEvalScorer.from_pretrained(tmp_path).prompt_order == "context_first"
    (tmp_path / EVALUATOR_CONFIG).write_text(json.dumps({**old, "prompt_order": "sideways"}))
    with pytest.raises(ValueError, match=f"{EVALUATOR_CONFIG}: prompt_order: unknown value"):
        EvaluatorInfo.load(tmp_path)
