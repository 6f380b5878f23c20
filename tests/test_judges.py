"""Audio-LLM judges against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
import math
import re
import time

import numpy as np
import pytest
import soundfile as sf
from conftest import archetype_record, free_port, realism_record, tone, write_release
from judge_server import Handler, JudgeServer, chat_body, reply, running

from speech_drame.data.build import build_dataset
from speech_drame.judges import (
    ChatClient,
    ChatJudge,
    ExemplarPool,
    LogprobJudge,
    gold_answer,
    select_exemplars,
    wav_base64,
)
from speech_drame.prompts import RUBRICS
from speech_drame.schema import ARCHETYPE_DIMENSIONS, REALISM_DIMENSIONS, dimensions

QUESTION = "You are a lighthouse keeper. A ship is heading for the rocks at night. You shout:"
GOOD = {"content_pass": True, "audio_quality": 4, "human_likeness": 3, "appropriateness": 5}


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("clips") / "clip.wav"
    sf.write(path, tone(1.0, sr=22_050), 22_050)
    return path


def client_for(server, model, **kwargs) -> ChatClient:
    kwargs = {"timeout": 5.0, "max_retries": 2, "backoff": 0.01, **kwargs}
    return ChatClient(server.url, model, **kwargs)


def audio_parts(payload) -> list[dict]:
    return [p for p in payload["messages"][1]["content"] if p["type"] == "input_audio"]


def texts(payload) -> str:
    return "".join(p["text"] for p in payload["messages"][1]["content"] if p["type"] == "text")


def decode_wav(part) -> tuple[np.ndarray, int]:
    assert part["input_audio"]["format"] == "wav"
    data, sr = sf.read(io.BytesIO(base64.b64decode(part["input_audio"]["data"])))
    return data, sr


# --- JSON mode --------------------------------------------------------------------------


def test_runs_are_separate_requests_and_are_averaged(server, clip):
    answers = [
        {**GOOD, "audio_quality": 3},
        {**GOOD, "audio_quality": 4, "content_pass": False},
        {**GOOD, "audio_quality": 5},
        {**GOOD, "audio_quality": 4, "human_likeness": 1},
        GOOD,
    ]
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(answers[n])))
    judge = ChatJudge(client_for(server, "good"), "archetype", "RUBRIC-TEXT", temperature=0.7)
    result = judge.judge(clip, question=QUESTION, clip_id="c1")

    assert server.count("good") == 5
    assert result.ok and result.n_failures == 0 and result.clip == "c1"
    assert result.scores == pytest.approx(
        {"audio_quality": 4.0, "human_likeness": 2.6, "appropriateness": 5.0}
    )
    assert result.content_pass == pytest.approx(0.8)
    assert [r.raw for r in result.runs] == [json.dumps(a) for a in answers]
    payload = server.requests[0]
    assert payload["model"] == "good" and payload["temperature"] == 0.7
    assert payload["messages"][0]["role"] == "system"
    text = texts(payload)
    assert text.startswith("RUBRIC-TEXT")
    assert QUESTION in text and '"human_likeness"' in text and "minified JSON" in text
    (part,) = audio_parts(payload)
    samples, sr = decode_wav(part)
    assert sr == 16_000 and samples.ndim == 1 and len(samples) == 16_000


def test_only_the_first_30_seconds_are_sent(server, tmp_path):
    long_clip = tmp_path / "long.wav"
    sf.write(long_clip, np.stack([tone(31.0, sr=8_000)] * 2, axis=1), 8_000)
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    ChatJudge(client_for(server, "good"), "archetype", runs=1).judge(long_clip, question=QUESTION)
    samples, sr = decode_wav(audio_parts(server.requests[0])[0])
    assert sr == 16_000 and len(samples) == 30 * 16_000


BAD_ANSWERS = {
    "malformed": (chat_body('{"content_pass": true, "audio_quality": 4,'), r"not valid JSON"),
    "out_of_range": (chat_body(json.dumps({**GOOD, "appropriateness": 6})), r"outside 1\.\.5"),
    "zero": (chat_body(json.dumps({**GOOD, "audio_quality": 0})), r"outside 1\.\.5"),
    "missing": (
        chat_body(json.dumps({k: v for k, v in GOOD.items() if k != "human_likeness"})),
        r"missing dimension 'human_likeness'",
    ),
    "string_score": (chat_body(json.dumps({**GOOD, "audio_quality": "4"})), r"expected a number"),
    "pass_not_bool": (chat_body(json.dumps({**GOOD, "content_pass": 1})), r"expected true/false"),
    "not_object": (chat_body("[4, 3, 5]"), r"expected a JSON object"),
    "refusal_text": (chat_body("I'm sorry, I can't rate this audio."), r"not valid JSON"),
    "refusal_field": (chat_body(None, refusal="I cannot help with that."), r"refusal: I cannot"),
    "empty": (chat_body(""), r"empty answer"),
    "no_choices": ({"choices": []}, r"no choices"),
}


@pytest.mark.parametrize("kind", sorted(BAD_ANSWERS))
def test_unusable_answers_are_counted_failures_with_raw_text(server, clip, kind):
    body, reason = BAD_ANSWERS[kind]
    server.routes[kind] = lambda p, n: reply(body)
    result = ChatJudge(client_for(server, kind), "archetype", runs=2).judge(clip, question=QUESTION)
    assert server.count(kind) == 2
    assert not result.ok and result.scores == {} and result.content_pass is None
    assert result.n_failures == 2
    for run in result.runs:
        assert run.answer is None
        assert run.error is not None
        assert re.search(reason, run.error), run.error
        content = body["choices"][0]["message"]["content"] if body["choices"] else None
        assert run.raw == (content or None)


def test_partly_failed_runs_average_the_valid_ones(server, clip):
    bodies = [json.dumps({**GOOD, "audio_quality": 2}), "not json", json.dumps(GOOD)]
    server.routes["mixed"] = lambda p, n: reply(chat_body(bodies[n]))
    result = ChatJudge(client_for(server, "mixed"), "archetype", runs=3).judge(
        clip, question=QUESTION
    )
    assert result.ok and result.n_failures == 1
    assert result.scores["audio_quality"] == pytest.approx(3.0)
    assert result.reasons[0].startswith("run 1: not valid JSON")
    assert result.runs[1].raw == "not json"


def test_fenced_json_is_accepted_and_realism_needs_every_dimension(server, clip):
    answer = {d: 3 for d in REALISM_DIMENSIONS}
    server.routes["fenced"] = lambda p, n: reply(
        chat_body("```json\n" + json.dumps(answer) + "\n```")
    )
    judge = ChatJudge(client_for(server, "fenced"), "realism", runs=1)
    result = judge.judge(clip, profile="A calm sister.", scene="After the storm.", traits="Calm")
    assert result.ok and result.scores == {d: 3.0 for d in REALISM_DIMENSIONS}
    assert "Character traits: Calm" in texts(server.requests[0])
    with pytest.raises(ValueError, match="profile and the local scene"):
        judge.judge(clip, profile="A calm sister.")


# --- transport: retries, timeouts, cache, configuration ------------------------------


def test_429_retry_after_is_respected_then_success(server, clip):
    def route(p, n):
        if n < 2:
            return reply({"error": "rate limited"}, 429, {"Retry-After": "0.3"})
        return reply(chat_body(json.dumps(GOOD)))

    server.routes["busy"] = route
    client = client_for(server, "busy", backoff=0.001)
    start = time.monotonic()
    result = ChatJudge(client, "archetype", runs=1).judge(clip, question=QUESTION)
    assert time.monotonic() - start >= 0.6
    assert result.ok and result.retries == 2 and result.runs[0].attempts == 3
    assert server.count("busy") == 3
    assert client.stats.retries == 2 and client.stats.waits == [0.3, 0.3]


def test_5xx_backs_off_exponentially_and_gives_up(server, clip):
    server.routes["down"] = lambda p, n: reply({"error": "overloaded"}, 503)
    client = client_for(server, "down", max_retries=3, backoff=0.01)
    result = ChatJudge(client, "archetype", runs=1).judge(clip, question=QUESTION)
    assert server.count("down") == 4
    assert client.stats.waits == pytest.approx([0.01, 0.02, 0.04])
    assert not result.ok and result.n_failures == 1
    assert "gave up after 4 attempt(s)" in result.runs[0].error
    assert "HTTP 503" in result.runs[0].error


def test_client_errors_are_not_retried(server, clip):
    server.routes["bad"] = lambda p, n: reply({"error": "unknown model"}, 400)
    result = ChatJudge(client_for(server, "bad"), "archetype", runs=2).judge(
        clip, question=QUESTION
    )
    assert server.count("bad") == 2  # one attempt per run
    assert all("HTTP 400" in r.error for r in result.runs)


def test_slow_response_times_out_and_is_retried(server, clip):
    server.routes["slow"] = lambda p, n: reply(chat_body(json.dumps(GOOD)), delay=1.0)
    client = client_for(server, "slow", timeout=0.2, max_retries=1)
    start = time.monotonic()
    result = ChatJudge(client, "archetype", runs=1).judge(clip, question=QUESTION)
    assert time.monotonic() - start < 0.9
    assert server.count("slow") == 2
    assert not result.ok and "timed out after 2 attempt(s)" in result.runs[0].error


def test_cache_makes_reruns_free_and_keys_include_the_run(server, clip, tmp_path):
    server.routes["good"] = lambda p, n: reply(
        chat_body(json.dumps({**GOOD, "audio_quality": n % 5 + 1}))
    )
    cache = tmp_path / "cache"
    first = ChatJudge(client_for(server, "good", cache_dir=cache), "archetype", runs=3)
    a = first.judge(clip, question=QUESTION)
    assert server.count() == 3 and not any(r.cached for r in a.runs)

    again = ChatJudge(client_for(server, "good", cache_dir=cache), "archetype", runs=3)
    b = again.judge(clip, question=QUESTION)
    assert server.count() == 3  # nothing sent
    assert all(r.cached and r.attempts == 0 for r in b.runs)
    assert b.scores == a.scores and [r.raw for r in b.runs] == [r.raw for r in a.runs]

    more = ChatJudge(client_for(server, "good", cache_dir=cache), "archetype", runs=4)
    more.judge(clip, question=QUESTION)
    assert server.count() == 4  # only run 3 is new
    other = ChatJudge(client_for(server, "good", cache_dir=cache), "archetype", runs=1)
    other.judge(clip, question=QUESTION + " Loudly.")
    assert server.count() == 5  # a different request is a different key
    entries = list(cache.rglob("*"))
    assert len([p for p in entries if p.suffix == ".json"]) == 5
    assert not [p for p in entries if p.suffix == ".tmp"]


def test_configuration_from_environment(server, monkeypatch):
    monkeypatch.delenv("SPEECH_DRAME_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("SPEECH_DRAME_JUDGE_MODEL", raising=False)
    with pytest.raises(ValueError, match="SPEECH_DRAME_JUDGE_BASE_URL"):
        ChatClient()
    monkeypatch.setenv("SPEECH_DRAME_JUDGE_BASE_URL", server.url + "/")
    with pytest.raises(ValueError, match="SPEECH_DRAME_JUDGE_MODEL"):
        ChatClient()
    monkeypatch.setenv("SPEECH_DRAME_JUDGE_MODEL", "env-model")
    monkeypatch.setenv("SPEECH_DRAME_JUDGE_API_KEY", "sk-test")
    server.routes["env-model"] = lambda p, n: reply(chat_body("ok"))
    client = ChatClient(timeout=5.0)
    assert client.url == server.url + "/chat/completions"
    assert client.complete({"messages": []}).body["choices"][0]["message"]["content"] == "ok"
    assert server.headers_seen[0]["Authorization"] == "Bearer sk-test"


# --- logprob mode -----------------------------------------------------------------------


def top(**probs) -> list[dict]:
    return [{"token": t.replace("_", " "), "logprob": math.log(p)} for t, p in probs.items()]


PASS_TOP = {"1": 0.6, "0": 0.3, "2": 0.1}


def test_logprob_mode_scores_each_dimension_by_expectation(server, clip):
    # position 0 is "Score", position 1 is the label: {"4": .5, "3": .25, " 5": .125} + non-label
    positions = [
        {"token": "Score", "logprob": -0.1, "top_logprobs": top(Score=0.9)},
        {"token": "4", "logprob": math.log(0.5), "top_logprobs": []},
    ]
    positions[1]["top_logprobs"] = [
        {"token": "4", "logprob": math.log(0.5)},
        {"token": "3", "logprob": math.log(0.25)},
        {"token": " 5", "logprob": math.log(0.125)},
        {"token": "four", "logprob": math.log(0.125)},
    ]
    # Content Pass: "1" (pass) .6, "0" (reject) .3 and "2", not a pass label, .1 -> P(pass) = 2/3
    verdict = [{"token": "1", "logprob": math.log(0.6), "top_logprobs": top(**PASS_TOP)}]

    def route(payload, n):
        if "Decide Content Pass only" in texts(payload):
            return reply(chat_body("1", logprobs=verdict))
        return reply(chat_body("Score4", logprobs=positions))

    server.routes["open"] = route
    judge = LogprobJudge(client_for(server, "open"), "archetype", top_logprobs=5)
    result = judge.judge(clip, question=QUESTION)
    expected = (3 * 0.25 + 4 * 0.5 + 5 * 0.125) / 0.875  # = 27/7
    assert result.ok and result.scores == pytest.approx(
        {"audio_quality": expected, "human_likeness": expected, "appropriateness": expected}
    )
    assert result.content_pass == pytest.approx(2 / 3)
    assert result.runs[0].dimension == "content_pass"
    assert result.runs[0].distribution == pytest.approx({0: 1 / 3, 1: 2 / 3})
    assert result.runs[1].distribution == pytest.approx({3: 2 / 7, 4: 4 / 7, 5: 1 / 7})
    assert server.count("open") == 4
    asked = [texts(p) for p in server.requests]
    assert (
        "Decide Content Pass only. Reply 1 if the response passes, 0 if it is rejected" in asked[0]
    )
    names = ("Audio Quality", "Human Likeness", "Appropriateness")
    for payload, name in zip(server.requests[1:], names, strict=True):
        assert payload["logprobs"] is True and payload["top_logprobs"] == 5
        assert payload["temperature"] == 0.0
        assert f"Rate {name} only" in texts(payload)
    assert len(set(asked)) == 4


def test_logprob_mode_content_pass_needs_a_pass_label_and_fills_under_failed_as_1(server, clip):
    # a 1..5 answer ("4") carries no pass label: Content Pass fails, the scores stand
    four = [{"token": "4", "logprob": 0.0, "top_logprobs": top(**{"4": 1.0})}]
    server.routes["scores_only"] = lambda p, n: reply(chat_body("4", logprobs=four))
    client = client_for(server, "scores_only")
    result = LogprobJudge(client, "archetype").judge(clip, question=QUESTION)
    assert not result.ok and result.content_pass is None and result.n_failures == 1
    assert result.scores == {"audio_quality": 4.0, "human_likeness": 4.0, "appropriateness": 4.0}
    assert "no label token 0/1" in result.reasons[0] and "(content_pass)" in result.reasons[0]
    # the official scoring: the failed Content Pass request counts as 1 (passed)
    filled = LogprobJudge(client, "archetype", failed_as="1").judge(clip, question=QUESTION)
    assert filled.ok and filled.content_pass == 1.0 and filled.n_failures == 1
    assert filled.filled == ["run 0 (content_pass): content_pass"]
    assert filled.scores == result.scores


def test_logprob_mode_without_label_tokens_is_a_failure(server, clip):
    positions = [{"token": "Good", "logprob": -0.2, "top_logprobs": top(Good=0.8, Fine=0.2)}]
    server.routes["chatty"] = lambda p, n: reply(chat_body("Good", logprobs=positions))
    server.routes["nolog"] = lambda p, n: reply(chat_body("4"))
    result = LogprobJudge(client_for(server, "chatty"), "archetype").judge(clip, question=QUESTION)
    assert not result.ok and result.scores == {} and result.n_failures == 4
    assert all("no label token" in r.error and r.raw == "Good" for r in result.runs)
    result = LogprobJudge(client_for(server, "nolog"), "archetype").judge(clip, question=QUESTION)
    assert result.n_failures == 4 and "no logprobs" in result.runs[0].error


# --- few-shot exemplars -----------------------------------------------------------------


def _ann(passes, aq, hl, ap):
    return {
        **archetype_record("x")["annotations"],
        "content_pass": passes,
        "audio_quality": aq,
        "human_likeness": hl,
        "appropriateness": ap,
        "confidence": [3] * len(passes),
    }


@pytest.fixture(scope="module")
def train_dataset(tmp_path_factory):
    return _build_train_dataset(tmp_path_factory.mktemp("fewshot"))


def _build_train_dataset(root):
    records = [
        # distance 0: every annotator gave the rounded mean
        archetype_record("agree", annotations=_ann([True] * 3, [4, 4, 4], [3, 3, 3], [5, 5, 5])),
        # distance 1/9: one gap of 1 out of nine scores
        archetype_record("close", annotations=_ann([True] * 3, [2, 2, 3], [4, 4, 4], [3, 3, 3])),
        # large disagreement
        archetype_record("split", annotations=_ann([True] * 3, [1, 5, 3], [1, 5, 2], [5, 1, 4])),
        # content failed for everyone: no scores (paper: gold 1 everywhere; skip: no gold)
        archetype_record(
            "failed", annotations=_ann([False] * 3, [None] * 3, [None] * 3, [None] * 3)
        ),
    ]
    src = write_release(
        root / "rel",
        {
            "archetype_data/train.jsonl": records,
            "realism_data/train.jsonl": [realism_record("r1")],
        },
        audio=TRAIN_AUDIO,
    )
    build_dataset(src, root / "speech-drame", progress=False)
    return root / "speech-drame"


TRAIN_AUDIO = {
    "agree": tone(1.0, freq=330.0),
    "close": tone(1.0, freq=440.0),
    "split": tone(1.0, freq=550.0),
    "failed": tone(1.0, freq=660.0),
}
REJECTED_GOLD = {
    "content_pass": False,
    "audio_quality": 1,
    "human_likeness": 1,
    "appropriateness": 1,
}


def shown_exemplars(payload) -> list[str]:
    """Ids of the exemplars a request showed, read from its audio parts (the clip comes last)."""
    by_audio = {wav_base64((x, 16_000)): rid for rid, x in TRAIN_AUDIO.items()}
    return [by_audio[part["input_audio"]["data"]] for part in audio_parts(payload)[:-1]]


def test_agreement_exemplars_are_the_clips_closest_to_their_rounded_mean(
    train_dataset, server, clip
):
    # skip: the rejected clip has no rating to average, so the two most agreeing clips
    items = select_exemplars(train_dataset, "archetype", 2, label_policy="skip")
    assert [i.id for i in items] == ["agree", "close"]
    assert items[0].gold == {
        "content_pass": True,
        "audio_quality": 4,
        "human_likeness": 3,
        "appropriateness": 5,
    }
    assert items[1].gold["audio_quality"] == 2  # mean 2.33 rounds to 2
    assert items[0].question.startswith("You are a firefighter")
    with pytest.raises(
        ValueError,
        match="3 clip\\(s\\) with audio and a complete gold answer \\(0 without audio\\), 4",
    ):
        select_exemplars(train_dataset, "archetype", 4, label_policy="skip")
    # paper: its nulls count as 1, so it agrees perfectly with its gold answer of 1s
    paper = select_exemplars(train_dataset, "archetype", 2)
    assert [i.id for i in paper] == ["agree", "failed"] and paper[1].gold == REJECTED_GOLD
    with pytest.raises(
        ValueError,
        match="4 clip\\(s\\) with audio and a complete gold answer \\(0 without audio\\), 5",
    ):
        select_exemplars(train_dataset, "archetype", 5)

    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    ChatJudge(client_for(server, "good"), "archetype", "RUBRIC", items, runs=2).judge(
        clip, question=QUESTION
    )
    assert [shown_exemplars(p) for p in server.requests] == [["agree", "close"]] * 2
    payload = server.requests[0]
    parts = audio_parts(payload)
    assert len(parts) == 3  # two exemplars, then the clip
    text = texts(payload)
    gold = '{"content_pass":true,"audio_quality":4,"human_likeness":3,"appropriateness":5}'
    assert text.index("RUBRIC") < text.index(gold) < text.index(QUESTION)
    assert parts[0]["input_audio"]["data"] == items[0].audio_b64


def test_logprob_mode_shows_each_exemplar_gold_of_the_asked_dimension(train_dataset, server, clip):
    items = select_exemplars(train_dataset, "archetype", 2)  # agree, and the rejected clip
    label = [{"token": "1", "logprob": 0.0, "top_logprobs": top(**{"1": 1.0})}]
    server.routes["open"] = lambda p, n: reply(chat_body("1", logprobs=label))
    result = LogprobJudge(client_for(server, "open"), "archetype", "", items).judge(
        clip, question=QUESTION
    )
    assert result.content_pass == 1.0
    assert result.scores == {"audio_quality": 1.0, "human_likeness": 1.0, "appropriateness": 1.0}
    verdict, quality = texts(server.requests[0]), texts(server.requests[1])
    assert "Content Pass: 1" in verdict and "Content Pass: 0" in verdict
    assert "Audio Quality: 4" in quality and "Audio Quality: 1" in quality
    assert "Human Likeness" not in quality and "Content Pass" not in quality
    assert all(shown_exemplars(p) == ["agree", "failed"] for p in server.requests)


def test_realism_gold_follows_the_label_policy(train_dataset):
    (item,) = select_exemplars(train_dataset, "realism", 1)
    assert item.id == "r1" and item.profile.startswith("Ann is") and item.traits == "Calm, Warm"
    # paper: emotion_intensity_control [3, N/A, 2] -> [3, 1, 2] -> 2; dynamic_range [4, 1, 1] -> 2
    assert item.gold["emotion_intensity_control"] == 2 and item.gold["dynamic_range"] == 2
    assert item.gold["pitch_variation"] == 4 and set(item.gold) == set(REALISM_DIMENSIONS)
    # skip: [3, 2] -> 2.5 rounds up to 3; [4] -> 4
    (skip,) = select_exemplars(train_dataset, "realism", 1, label_policy="skip")
    assert skip.gold["emotion_intensity_control"] == 3 and skip.gold["dynamic_range"] == 4


def test_gold_under_the_paper_and_skip_label_policies():
    ann = _ann([True, True, False], [4, 5, None], [3, 4, None], [4, 4, None])
    paper, paper_distance = gold_answer(ann, "archetype")  # the rejecting annotator's nulls = 1
    # [4, 5, 1] 3.33 -> 3; [3, 4, 1] 2.67 -> 3; [4, 4, 1] 3 -> 3
    assert paper == {"content_pass": True, "audio_quality": 3, "human_likeness": 3,
                     "appropriateness": 3}  # fmt: skip
    # gaps 1+2+2, 0+1+2, 1+1+2 over nine ratings, plus one vote in three against the majority
    assert paper_distance == pytest.approx(12 / 9 + 1 / 3)
    skip, skip_distance = gold_answer(ann, "archetype", "skip")
    # [4, 5] 4.5 -> 5; [3, 4] 3.5 -> 4; [4, 4] -> 4
    assert skip == {"content_pass": True, "audio_quality": 5, "human_likeness": 4,
                    "appropriateness": 4}  # fmt: skip
    assert skip_distance == pytest.approx(2 / 6 + 1 / 3)
    rejected = _ann([False] * 3, [None] * 3, [None] * 3, [None] * 3)
    assert gold_answer(rejected, "archetype") == (REJECTED_GOLD, 0.0)
    assert gold_answer(rejected, "archetype", "skip") is None
    with pytest.raises(ValueError, match="unknown label policy 'zero'"):
        gold_answer(ann, "archetype", "zero")


def test_random_exemplars_differ_per_clip_and_run_and_repeat_with_the_seed(
    train_dataset, server, clip
):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))

    def shown(seed: int, clips=("c1", "c2")) -> list[list[str]]:
        first = len(server.requests)
        pool = ExemplarPool(train_dataset, "archetype", 2, seed=seed)
        judge = ChatJudge(client_for(server, "good"), "archetype", exemplars=pool.draw, runs=3)
        results = [judge.judge(clip, question=QUESTION, clip_id=c) for c in clips]
        sent = [shown_exemplars(p) for p in server.requests[first:]]
        assert sent == [r.exemplars for result in results for r in result.runs]  # as recorded
        return sent

    draws = shown(seed=0)
    assert len(draws) == 6 and all(len(set(d)) == 2 for d in draws)
    assert len({tuple(d) for d in draws[:3]}) > 1  # the runs of one clip differ
    assert draws[:3] != draws[3:]  # and so do the clips
    assert shown(seed=0) == draws  # the same seed repeats every draw
    assert shown(seed=1) != draws
    assert "failed" in {rid for d in draws for rid in d}  # rejected clips are exemplars too
    rejected = json.dumps(REJECTED_GOLD, separators=(",", ":"))
    assert any(rejected in texts(p) for p in server.requests)
    assert all("agree" not in d for d in shown(seed=0, clips=("agree",)))  # never the clip itself


def test_the_cache_keys_on_the_exemplars_sent(train_dataset, server, clip, tmp_path):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    cache = tmp_path / "cache"
    pools = {seed: ExemplarPool(train_dataset, "archetype", 2, seed=seed) for seed in (0, 1)}

    def judge(seed: int):
        client = client_for(server, "good", cache_dir=cache)
        judge = ChatJudge(client, "archetype", exemplars=pools[seed].draw, runs=3)
        return judge.judge(clip, question=QUESTION, clip_id="c1")

    judge(0)
    assert server.count() == 3
    assert all(r.cached for r in judge(0).runs) and server.count() == 3
    changed = [pools[0].draw("c1", r) != pools[1].draw("c1", r) for r in range(3)]
    again = judge(1)  # only the runs whose exemplars changed are asked again
    assert [not r.cached for r in again.runs] == changed and any(changed)
    assert server.count() == 3 + sum(changed)
    assert len(list(cache.rglob("*.json"))) == 3 + sum(changed)


def test_gold_answer_ties_and_rounding():
    tie = _ann([True, False], [3, 4], [2, 2], [5, 5])
    assert gold_answer(tie, "archetype") is None  # no majority on Content Pass
    gold, distance = gold_answer(_ann([True, True], [2, 3], [3, 4], [1, 1]), "archetype")
    assert gold["audio_quality"] == 3 and gold["human_likeness"] == 4  # 2.5 and 3.5 round up
    assert distance == pytest.approx(2 / 6)


# --- the built-in rubric and unusable answers --------------------------------------------

PROFILE = dict(profile="Ann is a patient older sister.", scene="The power is out.", traits="Calm")


def test_the_built_in_rubric_is_sent_by_default_and_can_be_left_out(server, clip):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    client = client_for(server, "good")
    ChatJudge(client, "archetype", runs=1).judge(clip, question=QUESTION)
    ChatJudge(client, "archetype", "", runs=1).judge(clip, question=QUESTION)
    ChatJudge(client, "realism", runs=1).judge(clip, **PROFILE)
    LogprobJudge(client, "realism").judge(clip, **PROFILE)  # the rubric heads every request
    archetype, bare, realism, *per_dimension = (texts(p) for p in server.requests)
    for config, text in (
        ("archetype", archetype),
        ("realism", realism),
        ("realism", per_dimension[0]),
    ):
        for key in dimensions(config):
            assert all(meaning in text for _, meaning in RUBRICS[config][key].levels), key
    assert all(text.startswith(realism[:200]) for text in per_dimension)
    # archetype: the Content Pass rejection reasons and "rejected -> every score 1"
    reasons = dict(RUBRICS["archetype"]["content_pass"].levels)["0"]
    assert reasons in archetype and "slips into another language" in archetype
    assert "the response is rejected: set every score to 1" in archetype
    # realism has no Content Pass: a wrong speaker and a gated emotion dimension get 1
    assert "the wrong speaker), give Voice Identity Matching and Trait Embodiment 1" in realism
    assert "Emotion Accuracy is 3 or more" in realism and "Content Pass" not in realism
    # rubric="" (--rubric none): no anchor, no rule; the answer format stays
    assert "set every score to 1" not in bare and reasons not in bare
    assert not any(
        m in bare for k in ARCHETYPE_DIMENSIONS for _, m in RUBRICS["archetype"][k].levels
    )
    assert bare.startswith("Answer with one minified JSON object")


def test_failed_as_skip_or_1_give_different_scores(server, clip):
    bodies = [
        json.dumps(GOOD),  # content_pass true, 4, 3, 5
        "I cannot rate this clip.",  # not JSON
        json.dumps({"content_pass": False, "audio_quality": 2, "appropriateness": 3}),
    ]
    server.routes["mixed"] = lambda p, n: reply(chat_body(bodies[n % 3]))
    client = client_for(server, "mixed")
    skip = ChatJudge(client, "archetype", runs=3).judge(clip, question=QUESTION)
    assert skip.failed_as == "skip" and skip.n_failures == 2 and skip.filled == []
    assert skip.scores == {"audio_quality": 4.0, "human_likeness": 3.0, "appropriateness": 5.0}
    assert skip.content_pass == 1.0  # only run 0 counts
    one = ChatJudge(client, "archetype", runs=3, failed_as="1").judge(clip, question=QUESTION)
    # run 1 counts as 1 everywhere (Content Pass 1 = passed), run 2's missing human_likeness as 1
    assert one.scores == pytest.approx(
        {"audio_quality": (4 + 1 + 2) / 3, "human_likeness": (3 + 1 + 1) / 3,
         "appropriateness": (5 + 1 + 3) / 3}
    )  # fmt: skip
    assert one.content_pass == pytest.approx(2 / 3)
    assert one.filled == [
        "run 1: content_pass, audio_quality, human_likeness, appropriateness",
        "run 2: human_likeness",
    ]
    assert one.n_failures == 2 and one.runs[1].raw == bodies[1]  # still failures, raw text kept
    assert "not valid JSON" in one.runs[1].error and "missing dimension" in one.runs[2].error
    assert one.to_dict()["failed_as"] == "1" and one.to_dict()["filled"] == one.filled
    with pytest.raises(ValueError, match="failed_as must be one of skip, 1, got '3'"):
        ChatJudge(client, "archetype", failed_as="3")


def test_the_scorer_fills_or_fails_a_clip_with_only_unusable_answers(server, clip):
    from speech_drame.scorers.base import ClipInput
    from speech_drame.scorers.judge import JudgeOptions, JudgeScorer

    server.routes["refuses"] = lambda p, n: reply(chat_body("No."))
    clips = [ClipInput("c1", clip, {"question": QUESTION})]

    def scorer(failed_as: str) -> JudgeScorer:
        options = JudgeOptions(runs=2, timeout=5.0, failed_as=failed_as)
        return JudgeScorer("refuses", server.url, "archetype", options)

    skip, one = scorer("skip"), scorer("1")
    (failed,) = skip.score(clips)
    assert not failed.ok and failed.error_kind == "model" and "not valid JSON" in failed.error
    (filled,) = one.score(clips)
    assert filled.ok and filled.content_pass == 1.0
    assert filled.scores == {"audio_quality": 1.0, "human_likeness": 1.0, "appropriateness": 1.0}
    assert "unusable answers skipped" in skip.description and "built-in rubric" in skip.description
    assert "unusable answers count as 1" in one.description and one.id != skip.id


# --- CLI --------------------------------------------------------------------------------


def judge_cli(argv: list[str]) -> int:
    from speech_drame.cli import main

    return main(argv)


def test_cli_judge_prints_scores_and_fails_on_failures(server, clip, tmp_path, capsys):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    server.routes["malformed"] = lambda p, n: reply(chat_body("{oops"))
    base = [
        "judge",
        str(clip),
        str(tmp_path / "missing.wav"),
        "--config",
        "archetype",
        "--question",
        QUESTION,
    ]
    base += ["--endpoint", server.url, "--runs", "2", "--timeout", "5"]
    assert judge_cli([*base, "--model", "good", "--json"]) == 1  # the missing clip
    out = json.loads(capsys.readouterr().out)
    assert out["n_failures"] == 1 and "file not found" in out["errors"][0]["reason"]
    assert out["results"][0]["scores"] == {
        "audio_quality": 4.0,
        "human_likeness": 3.0,
        "appropriateness": 5.0,
    }
    assert judge_cli([*base[:2], *base[3:], "--model", "good"]) == 0
    assert "failures: 0 of 2 requests; 0 of 1 clips" in capsys.readouterr().out
    assert judge_cli([*base, "--model", "malformed"]) == 1
    table = capsys.readouterr().out
    assert "failures: 2 of 2 requests; 2 of 2 clips without a full score" in table
    assert "run 0: not valid JSON" in table and "missing.wav: file not found" in table
    assert server.count() == 6


def test_cli_judge_is_score_with_a_judge_scorer(server, clip, capsys):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    common = [str(clip), "--config", "archetype", "--question", QUESTION, "--runs", "2", "--json"]
    assert judge_cli(["judge", *common, "--endpoint", server.url, "--model", "good"]) == 0
    judged = json.loads(capsys.readouterr().out)
    assert judge_cli(["score", *common, "--scorer", f"judge:good@{server.url}"]) == 0
    (scored,) = json.loads(capsys.readouterr().out)
    expected = {"audio_quality": 4.0, "human_likeness": 3.0, "appropriateness": 5.0}
    assert judged["results"][0]["scores"] == scored["scores"] == expected
    assert judged["results"][0]["content_pass"] == scored["content_pass"] == 1.0
    assert server.count() == 4  # two runs each, the same requests
    assert texts(server.requests[0]) == texts(server.requests[2])


def test_cli_rubric_options(server, clip, tmp_path, capsys):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    base = ["judge", str(clip), "--config", "archetype", "--question", QUESTION,
            "--endpoint", server.url, "--model", "good", "--runs", "1", "--json"]  # fmt: skip
    anchor = RUBRICS["archetype"]["human_likeness"].levels[0][1]
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("MY RUBRIC: rate harshly.", encoding="utf-8")
    shown = {}
    for name, extra in {"built-in": [], "none": ["--rubric", "none"],
                        "user": ["--rubric", str(rubric)]}.items():  # fmt: skip
        assert judge_cli([*base, *extra]) == 0
        shown[name] = (texts(server.requests[-1]), json.loads(capsys.readouterr().out)["judge"])
    assert anchor in shown["built-in"][0] and "built-in rubric" in shown["built-in"][1]
    assert anchor not in shown["none"][0] and "no rubric" in shown["none"][1]
    assert (
        shown["user"][0].startswith("MY RUBRIC: rate harshly.") and anchor not in shown["user"][0]
    )
    assert "user rubric" in shown["user"][1]
    n = server.count()
    assert judge_cli([*base, "--rubric", str(tmp_path / "absent.txt")]) == 2
    assert (
        "--rubric " + str(tmp_path / "absent.txt") + ": cannot read it" in capsys.readouterr().err
    )
    rubric.write_text("  \n", encoding="utf-8")
    assert judge_cli([*base, "--rubric", str(rubric)]) == 2
    assert "is empty; pass '--rubric none' for no rubric" in capsys.readouterr().err
    assert server.count() == n


def test_cli_few_shot_and_failed_as_options(train_dataset, server, clip, capsys):
    bodies = [json.dumps(GOOD), "{oops"]
    server.routes["mixed"] = lambda p, n: reply(chat_body(bodies[n % 2]))
    base = ["judge", str(clip), "--config", "archetype", "--question", QUESTION,
            "--endpoint", server.url, "--model", "mixed", "--runs", "2", "--shots", "2",
            "--train-dataset", str(train_dataset)]  # fmt: skip
    agreement = ["--exemplars", "agreement", "--label-policy", "skip"]
    assert judge_cli([*base, *agreement, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["exemplars"], out["label_policy"], out["failed_as"]) == (
        "agreement",
        "skip",
        "skip",
    )
    assert "2-shot, agreement exemplars, skip labels" in out["judge"]
    assert [shown_exemplars(p) for p in server.requests] == [["agree", "close"]] * 2
    assert out["results"][0]["scores"]["audio_quality"] == 4.0 and out["n_filled_requests"] == 0

    assert judge_cli([*base, "--failed-as", "1", "--exemplar-seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (
        out["failed_as"] == "1" and out["exemplars"] == "random" and out["label_policy"] == "paper"
    )
    assert out["n_filled_requests"] == 1 and out["n_failures"] == 1
    assert out["results"][0]["scores"]["audio_quality"] == (4 + 1) / 2
    runs = out["results"][0]["runs"]
    assert [shown_exemplars(p) for p in server.requests[2:]] == [r["exemplars"] for r in runs]

    assert judge_cli([*base, "--failed-as", "1"]) == 0
    table = capsys.readouterr().out
    assert "unusable answers count as 1" in table.splitlines()[0]
    assert "counted as 1 (--failed-as 1): 1 of 2 requests" in table
    assert "run 1: content_pass, audio_quality, human_likeness, appropriateness" in table
    assert judge_cli(base) == 0  # skip: run 0 alone scores the clip; no "counted as 1" line
    table = capsys.readouterr().out
    assert "failures: 1 of 2 requests; 0 of 1 clips" in table and "counted as 1" not in table


# --- the response cache keeps only usable answers and survives corrupt entries ------------


def test_a_corrupt_cache_entry_is_skipped_counted_and_asked_again(server, clip, tmp_path):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    cache = tmp_path / "cache"
    ChatJudge(client_for(server, "good", cache_dir=cache), "archetype", runs=3).judge(
        clip, question=QUESTION
    )
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 3 and server.count() == 3
    entries[0].write_text('{"choices": [{"message": {"content": "{\\"audio_q')  # torn by a crash
    entries[1].write_bytes(b"\xff\xfe not text")
    client = client_for(server, "good", cache_dir=cache)
    result = ChatJudge(client, "archetype", runs=3).judge(clip, question=QUESTION)
    assert result.ok and result.n_failures == 0
    assert server.count() == 5  # the two corrupt entries were asked again, the third was read
    assert client.stats.corrupt_cache_entries == 2 and client.stats.cache_hits == 1
    again = client_for(server, "good", cache_dir=cache)  # the fresh answers replaced them
    ChatJudge(again, "archetype", runs=3).judge(clip, question=QUESTION)
    assert server.count() == 5 and again.stats.corrupt_cache_entries == 0


@pytest.mark.parametrize("mode", ["json", "logprobs"])
def test_unusable_answers_are_not_cached(server, clip, tmp_path, mode):
    good = [{"token": "1", "logprob": -0.1, "top_logprobs": [{"token": "1", "logprob": -0.1}]}]
    usable = chat_body(json.dumps(GOOD), logprobs=good)
    unusable = {  # per mode: a 200 answer that cannot be used, then a usable one
        "json": [chat_body('{"content_pass": true, "audio_quality": 9}'), usable],
        "logprobs": [chat_body("four", logprobs=[{"token": "four", "logprob": -0.1}]), usable],
    }[mode]
    server.routes["flaky"] = lambda p, n: reply(unusable[0] if n == 0 else usable)
    cache = tmp_path / "cache"

    def judge():
        client = client_for(server, "flaky", cache_dir=cache)
        if mode == "json":
            return ChatJudge(client, "archetype", runs=1).judge(clip, question=QUESTION)
        return LogprobJudge(client, "archetype").judge(clip, question=QUESTION)

    first = judge()
    assert first.n_failures == 1 and not first.runs[0].cached
    n_first = server.count()
    second = judge()  # the unusable answer was not stored: the request is sent again
    assert second.n_failures == 0 and second.ok
    assert server.count() == n_first + 1
    third = judge()  # the usable answers were stored
    assert server.count() == n_first + 1 and all(r.cached for r in third.runs)


def test_cli_judge_reports_corrupt_cache_entries(server, clip, tmp_path, capsys):
    server.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
    cache = tmp_path / "cache"
    argv = ["judge", str(clip), "--config", "archetype", "--question", QUESTION,
            "--endpoint", server.url, "--model", "good", "--runs", "2", "--timeout", "5",
            "--response-cache", str(cache)]  # fmt: skip
    assert judge_cli(argv) == 0
    capsys.readouterr()
    next(cache.rglob("*.json")).write_text("{")
    assert judge_cli(argv) == 0
    assert "1 corrupt cache entries ignored" in capsys.readouterr().out
    assert judge_cli([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["corrupt_cache_entries"] == 0


# --- the endpoint is checked once; retries and progress are shown as they happen -------------


class _ProbedHandler(Handler):
    def do_GET(self):
        server = self.server
        with server.lock:
            server.gets.append(self.path)
        data = json.dumps({"object": "list", "data": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def probed_server():
    srv = JudgeServer()
    srv.RequestHandlerClass = _ProbedHandler
    srv.gets = []
    with running(srv):
        yield srv


def test_an_endpoint_where_nothing_listens_fails_at_once_naming_the_url(clip, capsys):
    from speech_drame.judges.client import EndpointUnreachable

    url = f"http://127.0.0.1:{free_port()}/v1"
    client = ChatClient(url, "m", timeout=5.0, max_retries=5, backoff=1.0)
    judge = ChatJudge(client, "archetype", runs=5)
    with pytest.raises(EndpointUnreachable, match=re.escape(url) + ".*connection refused"):
        judge.judge(clip, question=QUESTION)
    assert client.stats.preflights == 1 and client.stats.requests == 0  # no clip request
    assert client.stats.waits == []  # nothing was retried

    argv = ["judge", str(clip), str(clip), "--config", "archetype", "--question", QUESTION,
            "--endpoint", url, "--model", "m"]  # fmt: skip
    assert judge_cli(argv) == 2
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and url in lines[0] and "connection refused" in lines[0]
    assert out == ""


def test_the_endpoint_is_checked_once_and_progress_and_retries_are_shown(
    probed_server, clip, tmp_path, capsys
):
    def route(p, n):
        if n < 2:
            return reply({"error": "overloaded"}, 503, {"Retry-After": "0"})
        return reply(chat_body(json.dumps(GOOD)))

    probed_server.routes["good"] = route
    second = tmp_path / "second.wav"
    second.write_bytes(clip.read_bytes())
    argv = ["judge", str(clip), str(second), "--config", "archetype", "--question", QUESTION,
            "--endpoint", probed_server.url, "--model", "good", "--runs", "2",
            "--max-retries", "3"]  # fmt: skip
    assert judge_cli(argv) == 0
    err = capsys.readouterr().err
    assert probed_server.gets == ["/v1/models"]  # one check for the whole run
    assert probed_server.count("good") == 2 + 4  # two retried attempts, then 2 clips x 2 runs
    assert "retry 1/3 after 0 s: HTTP 503" in err and "retry 2/3 after 0 s: HTTP 503" in err
    assert "2/2" in err  # the progress bar over clips
    assert judge_cli([*argv, "--quiet"]) == 0
    assert "2/2" not in capsys.readouterr().err


def test_retries_go_to_the_callback_as_they_happen(probed_server, clip):
    probed_server.routes["down"] = lambda p, n: reply({"error": "overloaded"}, 502)
    lines = []
    client = client_for(probed_server, "down", max_retries=2, backoff=0.01, on_retry=lines.append)
    result = ChatJudge(client, "archetype", runs=1).judge(clip, question=QUESTION)
    assert not result.ok and lines == ["retry 1/2 after 0.01 s: HTTP 502",
                                       "retry 2/2 after 0.02 s: HTTP 502"]  # fmt: skip
    assert client.stats.preflights == 1 and probed_server.gets == ["/v1/models"]


def test_a_fully_cached_rerun_needs_no_server(clip, tmp_path):
    cache = tmp_path / "cache"
    with running() as srv:
        srv.routes["good"] = lambda p, n: reply(chat_body(json.dumps(GOOD)))
        first = ChatJudge(client_for(srv, "good", cache_dir=cache), "archetype", runs=2)
        assert first.judge(clip, question=QUESTION).ok
    client = client_for(srv, "good", cache_dir=cache)  # same URL, nothing listens there now
    again = ChatJudge(client, "archetype", runs=2).judge(clip, question=QUESTION)
    assert again.ok and client.stats.cache_hits == 2
    assert client.stats.preflights == 0 and client.stats.requests == 0
