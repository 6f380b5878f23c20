"""DRAME-Eval decodings (expectation; official: generation-config processors, then top-k/top-p,
checked against ``generate``) and label-mass flags."""

import numpy as np
import pytest
import torch
from conftest import tone

from speech_drame.audio_llm.tiny import build_tiny
from speech_drame.scorers.base import ClipScores
from speech_drame.scorers.drame_eval import Clip, DrameEvalScorer
from speech_drame.scorers.official_decoding import official_filter

QUESTION = "You are a firefighter. Smoke fills the hall and you find a trapped child. You say:"
RATED = ("audio_quality", "human_likeness", "appropriateness")


@pytest.fixture(scope="module")
def tiny():
    return build_tiny(seed=0)


def label_ids(processor) -> dict[str, int]:
    return {t: processor.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in "012345"}


@pytest.fixture
def restore_head(tiny):
    """Put the tiny model's own output layer back after a test that replaced it."""
    model, _ = tiny
    original = model.lm_head
    yield
    model.lm_head = original


def set_head(model, weight, bias) -> None:
    """Give the model an output layer with a bias."""
    head = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=True)
    with torch.no_grad():
        head.weight.copy_(weight)
        head.bias.copy_(torch.as_tensor(bias, dtype=torch.float32))
    model.lm_head = head


def fixed_logits(model, logits) -> None:
    """Every answer position of every clip gets exactly ``logits``."""
    logits = torch.as_tensor(logits, dtype=torch.float32)
    set_head(model, torch.zeros(len(logits), model.lm_head.in_features), logits)


def clips(n: int = 2) -> list[Clip]:
    return [Clip(f"c{i}", tone(1.0 + i, freq=150 + 60 * i, seed=i), {"question": QUESTION})
            for i in range(n)]  # fmt: skip


def reference_keep(logits, top_k: int = 50, top_p: float = 0.95) -> np.ndarray:
    """Independent numpy reference of the sampling filters: top-k keeps every logit at least
    the k-th largest; of those, a token stays when the probability (renormalised over them)
    of the tokens ranked above it is still below ``top_p``."""
    x = np.asarray(logits, dtype=np.float64)
    keep = x >= np.sort(x)[::-1][min(top_k, x.size) - 1]
    probs = np.where(keep, np.exp(x - x.max()), 0.0)
    probs /= probs.sum()
    order = np.argsort(-probs, kind="stable")
    above = np.cumsum(probs[order]) - probs[order]
    kept = np.zeros(x.size, dtype=bool)
    kept[order] = keep[order] & (above < top_p)
    return kept


def reference_scores(logits, ids: list[int], values, official: bool) -> tuple[float, float]:
    """(expected value, label mass) from a full logit vector, by numpy."""
    x = np.asarray(logits, dtype=np.float64)
    p = np.exp(x - x.max())
    p /= p.sum()
    mass = p[ids] * (reference_keep(x)[ids] if official else 1.0)
    return float(np.dot(values, mass / mass.sum())), float(mass.sum())


def top_k_case(vocab: int, ids: dict[str, int]) -> np.ndarray:
    """Labels 1-4 on top; 55 other tokens above label 5, which only top-k removes."""
    x = np.zeros(vocab)
    others = [i for i in range(vocab) if i not in ids.values()][:55]
    x[others] = 3.0 - 0.01 * np.arange(55)
    x[[ids[t] for t in "01234"]] = [5.0, 5.5, 5.0, 4.5, 4.0]
    x[ids["5"]] = 2.0
    return x


def test_official_filter_matches_an_independent_reference(tiny):
    model, processor = tiny
    ids = label_ids(processor)
    prompt = torch.tensor([[1, 2, 3]])  # the tiny model's generation_config adds no processor

    def keep(x, **sampling):
        return official_filter(torch.tensor(x, dtype=torch.float32), model, prompt, **sampling)

    rng = np.random.default_rng(0)
    cases = [rng.normal(0, s, 1024) for s in (0.5, 2.0, 4.0, 8.0)] + [top_k_case(1024, ids)]
    for x in cases:
        np.testing.assert_array_equal(keep(x).numpy(), reference_keep(x))
    assert 1 < reference_keep(cases[2]).sum() < 50  # the nucleus, not only top-k, cut it
    x = cases[-1]
    kept = keep(x)
    assert [bool(kept[ids[t]]) for t in "12345"] == [True, True, True, True, False]
    # label 5 is lost to top-k alone: with every token in the top-k it survives the nucleus
    assert bool(keep(x, top_k=1024)[ids["5"]])


def test_scores_follow_the_reference_when_top_k_removes_a_label(tiny, restore_head):
    model, processor = tiny
    ids = label_ids(processor)
    x = top_k_case(model.lm_head.out_features, ids)
    fixed_logits(model, x)
    rated = [ids[t] for t in "12345"]
    for decoding in ("expectation", "official"):
        (result,) = DrameEvalScorer(model, processor, "archetype", decoding=decoding).score_clips(
            clips(1)
        )
        assert result.ok and result.decoding == decoding
        official = decoding == "official"
        score, mass = reference_scores(x, rated, [1, 2, 3, 4, 5], official)
        for dim in RATED:
            assert result.scores[dim] == pytest.approx(score, abs=1e-5)
            assert result.label_mass[dim] == pytest.approx(mass, rel=1e-4)
            assert (result.distributions[dim][4] == 0.0) == official
        passed, pass_mass = reference_scores(x, [ids["0"], ids["1"]], [0, 1], official)
        assert result.content_pass == pytest.approx(passed, abs=1e-5)
        assert result.label_mass["content_pass"] == pytest.approx(pass_mass, rel=1e-4)


def test_no_surviving_label_is_a_model_failure_not_a_score(tiny, restore_head):
    model, processor = tiny
    ids = label_ids(processor)
    x = np.zeros(model.lm_head.out_features)
    others = [i for i in range(len(x)) if i not in ids.values()][:60]
    x[others] = 5.0  # 60 tokens far above every label: top-k 50 keeps none of them
    assert not reference_keep(x)[list(ids.values())].any()
    fixed_logits(model, x)
    official = DrameEvalScorer(model, processor, "archetype", decoding="official")
    results = official.score_clips(clips(2))
    for clip, result in zip(clips(2), results, strict=True):
        assert not result.ok and result.error_kind == "model"
        assert result.scores == {} and result.label_mass == {} and result.content_pass is None
        assert repr(clip.id) in result.error and "content_pass" in result.error
        assert "official decoding" in result.error
        assert "scores" not in result.to_dict()
    # the same output under expectation decoding: scored, with a tiny (flagged) label mass
    (expected,) = DrameEvalScorer(model, processor, "archetype").score_clips(clips(1))
    assert expected.ok and expected.unreliable() == list(expected.label_mass)


def test_official_and_expectation_differ_on_the_tiny_model_and_expectation_is_default(
    tiny, restore_head
):
    """A tiny model whose labels 1-3 stand out: official decoding drops label 4 (top-p) and 5
    (top-k), so its scores differ from the expectation's, which keeps every label."""
    model, processor = tiny
    ids = label_ids(processor)
    bias = torch.zeros(model.lm_head.out_features)
    for t, b in zip("012345", (8.0, 8.0, 8.0, 8.0, 5.5, 0.0), strict=True):
        bias[ids[t]] = b
    set_head(model, model.lm_head.weight.detach(), bias)
    default = DrameEvalScorer(model, processor, "archetype")
    explicit = DrameEvalScorer(model, processor, "archetype", decoding="expectation")
    official = DrameEvalScorer(model, processor, "archetype", decoding="official")
    assert default.decoding == "expectation" and default.id == explicit.id != official.id
    assert "expectation decoding" in default.description
    assert "official decoding" in official.description
    a, b = default.score_clips(clips(2)), official.score_clips(clips(2))
    for e, o in zip(a, b, strict=True):
        assert e.ok and o.ok and (e.decoding, o.decoding) == ("expectation", "official")
        assert e.to_dict()["decoding"] == "expectation" and o.to_dict()["decoding"] == "official"
        for dim in RATED:
            assert abs(e.scores[dim] - o.scores[dim]) > 1e-2
            pe, po = np.array(e.distributions[dim]), np.array(o.distributions[dim])
            assert (pe > 0).all() and po[3] == po[4] == 0.0
            kept = po > 0
            # official = the expectation's distribution on the surviving labels, renormalised
            np.testing.assert_allclose(po[kept], pe[kept] / pe[kept].sum(), rtol=1e-4)
            assert o.label_mass[dim] == pytest.approx(e.label_mass[dim] * pe[kept].sum(), 1e-4)
    with pytest.raises(ValueError, match="decoding must be one of expectation, official"):
        DrameEvalScorer(model, processor, "archetype", decoding="greedy")


def peak_labels(model, processor) -> None:
    """Labels 1-3 stand out (label 4 survives top-k only, 5 neither): official decoding keeps some."""
    ids = label_ids(processor)
    bias = torch.zeros(model.lm_head.out_features)
    for t, b in zip("012345", (8.0, 8.0, 8.0, 8.0, 5.5, 0.0), strict=True):
        bias[ids[t]] = b
    set_head(model, model.lm_head.weight.detach(), bias)


@pytest.fixture(scope="module")
def penalised_checkpoint(tmp_path_factory):
    """A saved tiny checkpoint whose generation_config.json sets a repetition penalty, loaded
    back as a checkpoint is (its output layer then peaked on the labels)."""
    from speech_drame.audio_llm.qwen2_audio import load_base

    folder = tmp_path_factory.mktemp("penalised")
    model, processor = build_tiny(seed=2)
    model.generation_config.repetition_penalty = 1.3
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    model, processor = load_base(str(folder))
    assert model.generation_config.repetition_penalty == 1.3
    peak_labels(model, processor)
    return model, processor


def generate_scores(model, scorer, clip, dim):
    """``generate``'s own first-token scores (after every processor) and raw logits for the
    whole prompt of ``dim``, sampling as the official pipeline does."""
    prefix = scorer.encoder.encode_prefix(clip.samples, clip.fields)
    ids = torch.tensor([prefix.input_ids + prefix.suffix_ids[dim]])
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                         input_features=prefix.input_features[None],
                         feature_attention_mask=prefix.feature_attention_mask[None],
                         do_sample=True, temperature=1.0, top_k=50, top_p=0.95, max_new_tokens=1,
                         output_scores=True, output_logits=True,
                         return_dict_in_generate=True)  # fmt: skip
    return ids, out.scores[0][0], out.logits[0][0]


@pytest.mark.parametrize("order", ["instruction_first", "context_first"])
def test_official_decoding_equals_generate_with_a_repetition_penalty(penalised_checkpoint, order):
    """The label distribution of official decoding is the one ``generate`` samples from, with
    the checkpoint's repetition penalty on the whole prompt (whose rubric holds the digits), in
    the shared-prefix path and the full-forward path alike."""
    from transformers import RepetitionPenaltyLogitsProcessor

    model, processor = penalised_checkpoint
    ids = label_ids(processor)
    scorer = DrameEvalScorer(model, processor, "archetype", decoding="official", prompt_order=order)
    assert "official decoding [RepetitionPenalty(1.3), TopK(50), TopP(0.95)]" in scorer.description
    batch = clips(2)
    shared = scorer.score_clips(batch)
    full = scorer.score_clips(batch, shared_prefix=False)
    for clip, fast, slow in zip(batch, shared, full, strict=True):
        assert fast.ok and slow.ok
        for dim in ("content_pass", *RATED):
            labels = [ids[t] for t in ("01" if dim == "content_pass" else "12345")]
            prompt, scores, raw = generate_scores(model, scorer, clip, dim)
            assert set(labels) <= set(prompt[0].tolist())  # the penalty reaches every label
            want = torch.softmax(scores[labels], -1).numpy()  # pruned labels: 0
            penalised = RepetitionPenaltyLogitsProcessor(1.3)(prompt, raw[None].float())[0]
            mass = torch.softmax(penalised, -1)[labels][torch.isfinite(scores[labels])].sum()
            for result in (fast, slow):
                if dim == "content_pass":
                    assert result.content_pass == pytest.approx(want[1], abs=1e-5)
                else:
                    np.testing.assert_allclose(result.distributions[dim], want, atol=1e-5)
                assert result.label_mass[dim] == pytest.approx(float(mass), rel=1e-4)
            # the penalty changed the distribution: without it generate samples otherwise
            plain = torch.softmax(raw[labels].float(), -1).numpy()
            assert np.abs(plain - want).max() > 1e-3


def test_official_decoding_without_processors_states_and_hashes_its_filters(tiny, restore_head):
    model, processor = tiny
    peak_labels(model, processor)
    official = DrameEvalScorer(model, processor, "archetype", decoding="official")
    assert official.processors == ["TopK(50)", "TopP(0.95)"]
    assert "official decoding [TopK(50), TopP(0.95)]) with prompt profile" in official.description
    before = official.id
    (b,) = official.score_clips(clips(1))
    model.generation_config.repetition_penalty = 1.3  # what generate reads: the model's config
    try:
        penalised = DrameEvalScorer(model, processor, "archetype", decoding="official")
        assert penalised.processors == ["RepetitionPenalty(1.3)", "TopK(50)", "TopP(0.95)"]
        assert penalised.id != before  # a checkpoint's processors are part of the scorer
        expectation = DrameEvalScorer(model, processor, "archetype")
        assert expectation.processors == [] and "[" not in expectation.description
        (a,) = penalised.score_clips(clips(1))
        assert a.scores != b.scores
    finally:
        model.generation_config.repetition_penalty = None


def test_label_mass_threshold_flips_the_flag_and_the_counts(tiny, restore_head):
    model, processor = tiny
    ids = label_ids(processor)
    x = np.zeros(model.lm_head.out_features)
    x[[ids[t] for t in "12345"]] = [6.0, 6.5, 6.0, 5.0, 4.0]
    fixed_logits(model, x)
    _, mass = reference_scores(x, [ids[t] for t in "12345"], [1, 2, 3, 4, 5], False)
    _, pass_mass = reference_scores(x, [ids["0"], ids["1"]], [0, 1], False)
    assert pass_mass < mass  # label "0" has no boost
    results = DrameEvalScorer(model, processor, "archetype").score_clips(clips(2))
    for result in results:
        assert result.label_mass["audio_quality"] == pytest.approx(mass, rel=1e-4)
        assert result.unreliable(mass + 0.01) == ["content_pass", *RATED]
        assert result.unreliable((mass + pass_mass) / 2) == ["content_pass"]
        assert result.unreliable(pass_mass - 0.01) == []
        row = result.to_dict(min_label_mass=mass + 0.01)
        assert row["unreliable"] == ["content_pass", *RATED] and row["label_mass"]
        assert result.to_dict(min_label_mass=pass_mass - 0.01)["unreliable"] == []
        assert "unreliable" not in result.to_dict()
    # a scorer without label mass has no flags
    assert ClipScores("x", scores={"audio_quality": 3.0}).unreliable(1.0) == []
    assert "unreliable" not in ClipScores("x", scores={"audio_quality": 3.0}).to_dict(0.5)


def test_split_report_counts_unreliable_scores(tiny, restore_head, official_dataset_dir):
    from speech_drame.scorers.evaluation import evaluate_scorer

    model, processor = tiny
    ids = label_ids(processor)
    x = np.zeros(model.lm_head.out_features)
    x[[ids[t] for t in "012345"]] = 6.0
    fixed_logits(model, x)
    scorer = DrameEvalScorer(model, processor, "archetype")
    _, mass = reference_scores(x, [ids[t] for t in "12345"], [1, 2, 3, 4, 5], False)
    low = evaluate_scorer(scorer, official_dataset_dir, "test", min_label_mass=mass + 0.01)
    assert low.n_scored >= 1 and low.min_label_mass == mass + 0.01
    assert set(low.label_mass) == set(low.unreliable)
    assert low.n_unreliable == 4 * low.n_scored  # content pass and the three rated dims
    high = evaluate_scorer(scorer, official_dataset_dir, "test", min_label_mass=mass - 0.01)
    assert all(dims == ["content_pass"] for dims in high.unreliable.values())
    assert high.n_unreliable == high.n_scored
    with pytest.raises(ValueError, match=r"min_label_mass must be in \[0, 1\], got 1.5"):
        evaluate_scorer(scorer, official_dataset_dir, "test", min_label_mass=1.5)


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    """An (untrained) DRAME-Eval folder (tiny base, seed 1, fresh LoRA adapter) and a clip."""
    import soundfile as sf
    from peft import LoraConfig, get_peft_model

    from speech_drame.audio_llm.qwen2_audio import LORA_TARGET_REGEX
    from speech_drame.scorers.drame_eval import EvaluatorInfo

    folder = tmp_path_factory.mktemp("drame_eval")
    model, processor = build_tiny(seed=1)
    get_peft_model(model, LoraConfig(r=4, target_modules=LORA_TARGET_REGEX)).save_pretrained(folder)
    processor.save_pretrained(folder)
    info = EvaluatorInfo("archetype", ["content_pass", *RATED], "tiny", "float32", tiny_seed=1)
    info.save(folder)
    sf.write(folder / "clip.wav", tone(1.5, seed=4), 16_000)
    return folder


def peaked_base(monkeypatch) -> None:
    """Loaded evaluators get the label-peaked output layer of the test above (labels 1-3 on
    top), so that official decoding keeps some labels."""
    from speech_drame.audio_llm import qwen2_audio

    real = qwen2_audio.load_base

    def load_base(*args, **kwargs):
        model, processor = real(*args, **kwargs)
        ids = label_ids(processor)
        bias = torch.zeros(model.lm_head.out_features)
        for t, b in zip("012345", (8.0, 8.0, 8.0, 8.0, 5.5, 0.0), strict=True):
            bias[ids[t]] = b
        set_head(model, model.lm_head.weight.detach(), bias)
        return model, processor

    monkeypatch.setattr(qwen2_audio, "load_base", load_base)


def score_cli(evaluator, capsys, *extra: str):
    from speech_drame.cli import main

    status = main(["score", str(evaluator / "clip.wav"), "--config", "archetype", "--question",
                   QUESTION, "--scorer", f"drame-eval:{evaluator}", *extra])  # fmt: skip
    return status, capsys.readouterr()


def test_score_cli_states_the_decoding_and_the_label_mass(evaluator, capsys, monkeypatch):
    import json

    peaked_base(monkeypatch)
    status, out = score_cli(evaluator, capsys, "--decoding", "official", "--json")
    assert status == 0, out.err
    (row,) = json.loads(out.out)
    assert row["decoding"] == "official" and "official decoding" in out.err  # the scorer line
    assert set(row["label_mass"]) == {"content_pass", *RATED} and set(row["scores"]) == {*RATED}
    assert all(0 < m < 1 for m in row["label_mass"].values())
    assert row["unreliable"] == [d for d, m in row["label_mass"].items() if m < 0.5]
    assert all(dist[4] == 0.0 for dist in row["distributions"].values())  # label 5: top-k

    expectation = score_cli(evaluator, capsys, "--json")[1]
    (plain,) = json.loads(expectation.out)
    assert plain["decoding"] == "expectation" and plain["scores"] != row["scores"]

    # the threshold flips the flags and the footer's count
    status, out = score_cli(evaluator, capsys, "--decoding", "official", "--min-label-mass", "0.99")
    assert status == 0 and "decoding: official" in out.out and "    mass" in out.out
    assert out.out.count(" !\n") == 4 and "! label mass below 0.99: unreliable" in out.out
    assert "4 (clip, dimension) score(s) with label mass below 0.99" in out.err
    status, out = score_cli(evaluator, capsys, "--decoding", "official", "--min-label-mass", "0")
    assert status == 0 and " !" not in out.out and "label mass below" not in out.err


def test_score_cli_official_failure_and_bad_settings(evaluator, capsys):
    # the plain tiny model spreads its mass over 1024 tokens: no label is in the top 50
    status, out = score_cli(evaluator, capsys, "--decoding", "official")
    assert status == 1 and "not scored (model error)" in out.err
    assert "no label of content_pass survives official decoding" in out.err
    status, out = score_cli(evaluator, capsys, "--min-label-mass", "1.5")
    assert status == 2 and "min_label_mass must be in [0, 1], got 1.5" in out.err
    with pytest.raises(SystemExit):
        score_cli(evaluator, capsys, "--decoding", "greedy")
    assert "invalid choice: 'greedy'" in capsys.readouterr().err
    from speech_drame.cli import main

    status = main(["score", str(evaluator / "clip.wav"), "--config", "archetype", "--question",
                   QUESTION, "--scorer", "judge:m@http://127.0.0.1:9/v1", "--decoding", "official"])  # fmt: skip
    assert status == 2
    assert "decoding 'official' applies to drame-eval scorers only" in capsys.readouterr().err
