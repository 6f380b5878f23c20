"""The per-clip "blueprint": every offline feature of a clip in one typed, JSON-ready record.

:func:`extract_blueprint` builds one record; :func:`extract_blueprints` many, with a
progress bar, the on-disk cache (a rerun only reads JSON), per-clip failures reported instead
of aborting the batch, and each clip's extractors as separate tasks on one thread per core
(the models release the GIL), so one clip alone keeps every core busy. DNSMOS runs on threads
of its own, at most half as many: each concurrent DNSMOS run needs ~230 MB of working memory,
and the other extractors keep the remaining cores busy meanwhile. :func:`iter_blueprints`
streams: it reads its input lazily and decodes a bounded batch of clips at a time (the first
batch is one clip, so its result comes as soon as it can), so memory does not grow with the
number of clips. Later protocols (TRACE's textual blueprint, the LiteScorer) read these
records.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import Any

from speech_drame.audio import (
    SCORED_SECONDS,
    Audio,
    AudioError,
    AudioFacts,
    AudioSource,
    load_audio,
)
from speech_drame.features import asr, prosody, quality, speaker, text, vad
from speech_drame.features.cache import FeatureCache, audio_key, default_cache_dir
from speech_drame.features.common import cpu_count, thread_count
from speech_drame.features.loading import preload

# name -> (version, extractor, record type); the order is the order of extraction
EXTRACTORS: dict[str, tuple[str, Callable[[Audio], Any], type]] = {
    asr.NAME: (asr.VERSION, asr.transcribe, asr.Transcript),
    quality.NAME: (quality.VERSION, quality.dnsmos, quality.QualityScores),
    speaker.NAME: (speaker.VERSION, speaker.speaker_embedding, speaker.SpeakerEmbedding),
    vad.NAME: (vad.VERSION, vad.voice_activity, vad.VoiceActivity),
    prosody.NAME: (prosody.VERSION, prosody.prosody, prosody.Prosody),
}
FEATURE_VERSIONS: dict[str, str] = {
    **{name: spec[0] for name, spec in EXTRACTORS.items()},
    text.NAME: text.VERSION,
}
BLUEPRINT_VERSION = 1
DEFAULT_CACHE = "default"  # sentinel: the cache under default_cache_dir()
CacheArg = FeatureCache | None | str
CLIP_ERRORS = (AudioError, ValueError, RuntimeError)  # per-clip failures, reported not raised
DEFAULT_BATCH_SIZE = 32  # clips decoded (and their sources held) at once by iter_blueprints


class FeatureError(RuntimeError):
    """A clip whose features could not be extracted; names the clip and the reason."""


@dataclass
class Blueprint:
    """All offline features of one clip (the first 30 s of it), plus its text-context fit.

    ``transcript`` carries the spoken language the ASR identified (``transcript.language``).
    ``context`` maps context names (``question``; ``profile``, ``scene``, ``traits``) to the
    multilingual sentence-embedding cosine similarity between the transcript and that text
    (:mod:`speech_drame.features.text`; Mandarin and English alike), and ``context_texts`` holds
    the texts themselves; both are empty when the clip was extracted without context.
    ``versions`` records the extractor versions used; ``audio`` what reading the clip measured
    and did (peak, gain, cut; see :mod:`speech_drame.audio`).
    """

    source: str
    sha256: str
    seconds: float
    truncated: bool
    transcript: asr.Transcript
    quality: quality.QualityScores
    speaker: speaker.SpeakerEmbedding
    voice_activity: vad.VoiceActivity
    prosody: prosody.Prosody
    context: dict[str, float] = field(default_factory=dict)
    context_texts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=lambda: dict(FEATURE_VERSIONS))
    audio: AudioFacts | None = None

    @property
    def words_per_second(self) -> float:
        """Speech rate: recognised words per second of the clip (pauses included)."""
        return self.transcript.n_words / self.seconds

    def to_dict(self) -> dict[str, Any]:
        return {"blueprint_version": BLUEPRINT_VERSION, **asdict(self)}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Blueprint:
        data = dict(data)
        version = data.pop("blueprint_version", None)
        if version != BLUEPRINT_VERSION:
            raise ValueError(f"blueprint version {version!r}, this code reads {BLUEPRINT_VERSION}")
        records = {
            "transcript": asr.Transcript,
            "quality": quality.QualityScores,
            "speaker": speaker.SpeakerEmbedding,
            "voice_activity": vad.VoiceActivity,
            "prosody": prosody.Prosody,
        }
        for key, kind in records.items():
            data[key] = _record(kind, data[key])
        if data.get("audio") is not None:
            data["audio"] = AudioFacts(**data["audio"])
        return cls(**data)

    @classmethod
    def from_json(cls, text_: str) -> Blueprint:
        return cls.from_dict(json.loads(text_))


_FIELD_OF = {
    asr.NAME: "transcript",
    quality.NAME: "quality",
    speaker.NAME: "speaker",
    vad.NAME: "voice_activity",
    prosody.NAME: "prosody",
}


def _record(kind: type, value: Mapping[str, Any]) -> Any:
    if kind is vad.VoiceActivity:
        value = {**value, "segments": [tuple(s) for s in value["segments"]]}
    return kind(**value)


def resolve_cache(cache: CacheArg) -> FeatureCache | None:
    """``"default"`` -> the default on-disk cache, a path -> a cache there, ``None`` -> no cache."""
    if cache == DEFAULT_CACHE:
        return FeatureCache(default_cache_dir())
    if isinstance(cache, (str, os.PathLike)):
        return FeatureCache(cache)
    return cache


@dataclass(frozen=True)
class ClipFailure:
    """Why a clip has no blueprint. ``kind``: ``"input"`` when the clip itself is unusable
    (unreadable audio, no speech heard: the same every time), ``"model"`` when an extractor
    crashed on it (worth retrying)."""

    reason: str
    kind: str

    def __str__(self) -> str:
        return self.reason


def _describe(exc: Exception, source: str) -> ClipFailure:
    if isinstance(exc, (AudioError, FeatureError)):
        return ClipFailure(str(exc), "input")
    return ClipFailure(f"{source}: {type(exc).__name__}: {exc}", "model")


def _load(source: AudioSource | Audio) -> Audio:
    if isinstance(source, Audio):
        return source
    return load_audio(source, max_seconds=SCORED_SECONDS)


def audio_features(
    audio: Audio,
    cache: FeatureCache | None,
    timings: dict[str, float] | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    """Run (or read from ``cache``) every extractor on ``audio``; records by extractor name."""
    key = key or audio_key(audio.samples, audio.sample_rate)
    out = _cached_records(cache, key)
    for name in EXTRACTORS:
        if name not in out:
            out[name], seconds = _run_extractor(name, audio)
            if timings is not None:
                timings[name] = timings.get(name, 0.0) + seconds
            _store(cache, name, key, out[name])
    return {name: out[name] for name in EXTRACTORS}


def _cached_records(cache: FeatureCache | None, key: str) -> dict[str, Any]:
    """The records ``cache`` holds for the audio ``key``, by extractor name."""
    if cache is None:
        return {}
    out = {}
    for name, (version, _, kind) in EXTRACTORS.items():
        stored = cache.get(name, version, key)
        if stored is not None:
            out[name] = _record(kind, stored)
    return out


def _store(cache: FeatureCache | None, name: str, key: str, record: Any) -> None:
    if cache is not None:
        cache.put(name, EXTRACTORS[name][0], key, asdict(record))


def _assemble(
    audio: Audio,
    key: str,
    feats: Mapping[str, Any],
    ctx: dict[str, float],
    texts: Mapping[str, str],
) -> Blueprint:
    return Blueprint(
        source=audio.source,
        sha256=key,
        seconds=audio.seconds,
        truncated=audio.truncated,
        context=ctx,
        context_texts=dict(texts),
        **{_FIELD_OF[name]: feats[name] for name in EXTRACTORS},
        audio=audio.facts,
    )


def extract_blueprint(
    source: AudioSource | Audio,
    contexts: Mapping[str, str] | None = None,
    cache: CacheArg = DEFAULT_CACHE,
) -> Blueprint:
    """The blueprint of one clip (its first 30 s), with context similarities if given.

    ``cache``: ``"default"`` (``$SPEECH_DRAME_CACHE`` or ``~/.cache/speech-drame/features``),
    a folder, a :class:`FeatureCache`, or ``None`` to compute without caching.

    Raises:
        AudioError: unreadable audio or audio an extractor cannot use (no speech, ...).
        FeatureError: context given but the ASR heard no words to compare with it.
    """
    audio = _load(source)
    key = audio_key(audio.samples, audio.sample_rate)
    store = resolve_cache(cache)
    feats = audio_features(audio, store, key=key)
    ctx = _context([feats[asr.NAME].text], [contexts or {}], [audio.source], store)[0]
    if isinstance(ctx, Exception):
        raise ctx
    return _assemble(audio, key, feats, ctx, contexts or {})


def _context(
    transcripts: Sequence[str],
    contexts: Sequence[Mapping[str, str]],
    names: Sequence[str],
    cache: FeatureCache | None,
) -> list[dict[str, float] | FeatureError]:
    out: list[dict[str, float] | FeatureError] = [{} for _ in transcripts]
    todo = [i for i, c in enumerate(contexts) if c]
    for i in todo:
        if not transcripts[i].strip():
            out[i] = FeatureError(f"{names[i]}: ASR heard no words to compare with the context")
        empty = [k for k, v in contexts[i].items() if not v.strip()]
        if empty:
            out[i] = FeatureError(f"{names[i]}: empty context text for {', '.join(empty)}")
    todo = [i for i in todo if not isinstance(out[i], FeatureError)]
    sims = text.context_similarities(
        [transcripts[i] for i in todo], [contexts[i] for i in todo], cache
    )
    for i, s in zip(todo, sims, strict=True):
        out[i] = s
    return out


@dataclass
class BatchResult:
    """Blueprints aligned with the inputs (``None`` where a clip failed) and the failures."""

    blueprints: list[Blueprint | None]
    errors: dict[int, str]
    error_kinds: dict[int, str]  # "input" or "model" (:class:`ClipFailure`)
    timings: dict[str, float]
    seconds: float  # wall time of the batch


def iter_blueprints(
    clips: Iterable[tuple[AudioSource | Audio, Mapping[str, str]]],
    cache: CacheArg = DEFAULT_CACHE,
    workers: int | None = None,
    progress: bool = True,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    total: int | None = None,
    timings: dict[str, float] | None = None,
) -> Iterator[tuple[Blueprint | None, ClipFailure | None]]:
    """Blueprints of a stream of ``(source, contexts)`` clips, in input order.

    ``clips`` is read lazily, ``batch_size`` clips at a time (the first batch: one clip): a
    batch is decoded, extracted (cached features read, the rest as one task per clip and
    extractor on ``workers`` threads) and released before the next one is read, so memory
    does not grow with the number of clips. The models are loaded in the background
    (:func:`~speech_drame.features.loading.preload`) from the first clip that needs them.
    Yields ``(blueprint, None)`` per usable clip and ``(None, failure)`` per failed one
    (:class:`ClipFailure`). ``total`` sizes the progress bar; ``timings`` (if given)
    accumulates the seconds spent per extractor.
    """
    from tqdm.auto import tqdm

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    store = resolve_cache(cache)
    workers = workers if workers is not None else max(1, cpu_count() // thread_count())
    spent: dict[str, float] = timings if timings is not None else {}
    stream = iter(clips)
    size = 1  # the first result as soon as possible, then batch_size clips at a time
    bar = tqdm(total=total, desc="features", unit="clip", disable=not progress)
    try:
        with ThreadPoolExecutor(workers) as pool, ThreadPoolExecutor(max(1, workers // 2)) as own:
            pools = {name: own if name == quality.NAME else pool for name in EXTRACTORS}
            while chunk := list(islice(stream, size)):
                results = _extract_chunk(chunk, store, pools, bar, spent)
                del chunk  # sources and decoded audio go before the next batch is read
                size = batch_size
                yield from results
    finally:
        bar.close()


def _run_extractor(name: str, audio: Audio) -> tuple[Any, float]:
    """One extractor on one clip: its record and the seconds it took."""
    start = time.perf_counter()
    return EXTRACTORS[name][1](audio), time.perf_counter() - start


def _extract_chunk(
    chunk: Sequence[tuple[AudioSource | Audio, Mapping[str, str]]],
    cache: FeatureCache | None,
    pools: Mapping[str, ThreadPoolExecutor],
    bar: Any,
    timings: dict[str, float],
) -> list[tuple[Blueprint | None, ClipFailure | None]]:
    """One batch of :func:`iter_blueprints`; the decoded audio lives only in this call.

    Every missing (clip, extractor) is a task of that extractor's pool in ``pools``, submitted
    clip by clip in extractor order. A clip fails with the first of its extractors (in that
    order) that raised; the records of the others are still cached."""
    errors: dict[int, ClipFailure] = {}
    audios: dict[int, Audio] = {}
    keys: dict[int, str] = {}
    feats: dict[int, dict[str, Any]] = {}
    tasks: dict[int, dict[str, Future]] = {}
    for i, (src, _) in enumerate(chunk):
        try:
            audios[i] = _load(src)
        except AudioError as exc:
            errors[i] = ClipFailure(str(exc), "input")
            continue
        keys[i] = audio_key(audios[i].samples, audios[i].sample_rate)
        feats[i] = _cached_records(cache, keys[i])
        missing = [name for name in EXTRACTORS if name not in feats[i]]
        if missing:
            preload()
            tasks[i] = {n: pools[n].submit(_run_extractor, n, audios[i]) for n in missing}
    try:
        for i in range(len(chunk)):
            for name, future in tasks.get(i, {}).items():
                try:
                    record, seconds = future.result()
                except CLIP_ERRORS as exc:
                    errors.setdefault(i, _describe(exc, audios[i].source))
                    continue
                timings[name] = timings.get(name, 0.0) + seconds
                feats[i][name] = record
                _store(cache, name, keys[i], record)
            if i in errors:
                feats.pop(i, None)
            bar.update(1)
    except BaseException:  # Ctrl-C or an unexpected error: the queued tasks are dropped
        for futures in tasks.values():
            for future in futures.values():
                future.cancel()
        raise

    ok = sorted(feats)
    start_text = time.perf_counter()
    sims = _context(
        [feats[i][asr.NAME].text for i in ok],
        [chunk[i][1] for i in ok],
        [audios[i].source for i in ok],
        cache,
    )
    if any(chunk[i][1] for i in ok):
        timings[text.NAME] = timings.get(text.NAME, 0.0) + time.perf_counter() - start_text
    out: list[tuple[Blueprint | None, ClipFailure | None]] = [
        (None, errors.get(i)) for i in range(len(chunk))
    ]
    for i, s in zip(ok, sims, strict=True):
        if isinstance(s, FeatureError):
            out[i] = (None, ClipFailure(str(s), "input"))
        else:
            out[i] = (_assemble(audios[i], keys[i], feats[i], s, chunk[i][1]), None)
    return out


def extract_blueprints(
    sources: Iterable[AudioSource | Audio],
    contexts: Iterable[Mapping[str, str]] | None = None,
    cache: CacheArg = DEFAULT_CACHE,
    workers: int | None = None,
    progress: bool = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> BatchResult:
    """Blueprints of many clips; cached clips are read, the rest extracted in parallel.

    Args:
        sources: paths, encoded bytes, ``(samples, rate)`` tuples or loaded :class:`Audio`;
            any iterable (a generator is read lazily, ``batch_size`` clips at a time).
        contexts: per clip, the context texts to compare the transcript with.
        cache: as in :func:`extract_blueprint` (``None``: compute everything, store nothing).
        workers: clips extracted concurrently (threads; default: one per CPU divided by
            ``$SPEECH_DRAME_THREADS``, the threads each model call uses).
        progress: show a tqdm progress bar.
        batch_size: clips decoded and held at once (see :func:`iter_blueprints`).

    A clip that fails (unreadable, no speech, ...) is left ``None`` and its reason is put in
    ``errors``; the others are still extracted.
    """
    start = time.perf_counter()
    total = len(sources) if isinstance(sources, Sized) else None
    if contexts is None:
        clips: Iterable[tuple[Any, Mapping[str, str]]] = ((s, {}) for s in sources)
    else:
        if total is not None and isinstance(contexts, Sized) and len(contexts) != total:
            raise ValueError(f"{total} clips but {len(contexts)} context sets")
        clips = zip(sources, contexts, strict=True)
    blueprints: list[Blueprint | None] = []
    errors: dict[int, str] = {}
    kinds: dict[int, str] = {}
    timings: dict[str, float] = {}
    stream = iter_blueprints(
        clips, cache, workers, progress, batch_size=batch_size, total=total, timings=timings
    )
    for i, (blueprint, error) in enumerate(stream):
        blueprints.append(blueprint)
        if error is not None:
            errors[i], kinds[i] = error.reason, error.kind
    return BatchResult(blueprints, errors, kinds, timings, time.perf_counter() - start)
