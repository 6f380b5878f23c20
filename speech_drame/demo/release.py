"""Write the demo release: wavs, official-format jsonl, ``DEMO_MANIFEST.json`` and a README.

Layout (what the dataset builder reads, like an official release)::

    DIR/archetype_data/{train,test}.jsonl + <id> wav files
    DIR/realism_data/{train,test,test_real}.jsonl + <id>.wav files
    DIR/DEMO_MANIFEST.json   construction parameters and latent scores of every clip
    DIR/README.md            states that the labels are synthetic proxy labels

Each base rendering (text, voice, engine rate) is synthesised once (piper in batches of one
process each; flite and espeak-ng per rendering) and its variants are derived by signal
processing in a process pool. Every clip draws its noise from its own seed and every record its annotators from
its own seed, so the output is byte-identical for a seed whatever the number of workers.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speech_drame.audio import TARGET_SR, check_samples, load_audio, resample
from speech_drame.demo import PROXY_LABEL_NOTE
from speech_drame.demo.degrade import Degradation, degrade
from speech_drame.demo.delivery import (
    Delivery,
    WorldAnalysis,
    apply_delivery,
    limit_peak,
    set_level,
)
from speech_drame.demo.plan import CONFIG_CODES, ClipPlan, Source, plan_release, speaker
from speech_drame.demo.raters import (
    REALISM_WEIGHTS,
    SOURCE_PRIORS,
    ArchetypeFacts,
    RealismFacts,
    archetype_annotations,
    rater_pool,
    realism_annotations,
)
from speech_drame.demo.real_speech import RealClip, find_real_clips, load_real_clip
from speech_drame.demo.tts import VOICES, piper_model_path, synthesize, synthesize_piper_batch
from speech_drame.schema import DATA_DIRS, SPLITS, validate_record

AUTHOR_PREFIX = "speech_drame/finetuning/data"  # the official wav_path prefix
DATA_SOURCE = "speech-drame-demo"
MANIFEST = "DEMO_MANIFEST.json"
GENERATOR_VERSION = 1
README = """# speech-drame demo release (synthetic proxy labels)

A small release in the official Speech-DRAME EvalBench format, generated offline by
`dataset_scripts/make_demo_release.py` (seed {seed}). Audio: real human speech (LibriVox and
pocketsphinx test clips, alsa-utils voice clips{official}) and original role-play texts rendered
by offline TTS (piper, flite, espeak-ng) with controlled delivery, content, degradation and
context mismatch.

Like EvalBench it is bilingual, English and Mandarin:
{zh_shares}.
Mandarin texts are written in Chinese and spoken by espeak-ng's `cmn-latn-pinyin` voice
(variants Jacky, m3, m7, Annie, shelby, f3), fed tone-numbered pinyin converted by pypinyin
(`Style.TONE3`, neutral tone 5, tone sandhi, punctuation as pauses). Ids carry the language
(`demo_zh_...`, `demo_en_...`); real speech is English.

{note}

Scores measured on this corpus show that code runs end to end; they do not show agreement with
human judgement. `DEMO_MANIFEST.json` lists how every clip was made and its latent scores.
"""


@dataclass(frozen=True)
class _Variant:
    path: str
    delivery: Delivery
    degradation: Degradation
    seed: int
    vocoded: bool


@dataclass(frozen=True)
class _Task:
    source: Source
    variants: tuple[_Variant, ...]
    piper_wav: str = ""
    real_clip: RealClip | None = None


def _base_audio(task: _Task) -> np.ndarray:
    src = task.source
    if task.real_clip is not None:
        return load_real_clip(task.real_clip, sample_rate=TARGET_SR).samples
    if task.piper_wav:
        samples = load_audio(task.piper_wav, sample_rate=TARGET_SR).samples
    else:
        samples, sr = synthesize(src.voice, src.text, src.rate)
        samples = resample(samples, sr, TARGET_SR)
    return set_level(samples)


def _render(task: _Task) -> list[tuple[str, dict]]:
    """Render every variant of one base; return (path, info) per written wav."""
    import soundfile as sf

    base = None
    analysis = None
    out = []
    for v in task.variants:
        clip = task.real_clip
        untouched = v.delivery.preset == "as_recorded" and v.degradation.kind == "none"
        if clip is not None and clip.copyable and untouched:
            shutil.copyfile(clip.path, v.path)
            info = sf.info(v.path)
            out.append((v.path, {"seconds": info.frames / info.samplerate, "copied": True,
                                 "sample_rate": info.samplerate, "peak_limited": False}))  # fmt: skip
            continue
        if base is None:
            base = _base_audio(task)
        if v.vocoded and analysis is None:
            analysis = WorldAnalysis(base, TARGET_SR)
        y = apply_delivery(base, v.delivery, task.source.rate, analysis)
        y = degrade(y, TARGET_SR, v.degradation, np.random.default_rng(v.seed))
        y, limited = limit_peak(y)
        check_samples(y, TARGET_SR, v.path, 0.3)
        sf.write(v.path, y, TARGET_SR, subtype="PCM_16")
        out.append((v.path, {"seconds": len(y) / TARGET_SR, "copied": False,
                             "sample_rate": TARGET_SR, "peak_limited": limited}))  # fmt: skip
    return out


def _wav_path(root: Path, plan: ClipPlan) -> Path:
    return root / DATA_DIRS[plan.config] / plan.wav_name


def _piper_stage(sources: list[Source], work: Path, workers: int) -> dict[str, str]:
    """Synthesize every piper source, one batch per worker and rate; map source key -> wav."""
    by_rate: dict[float, list[Source]] = defaultdict(list)
    for src in sources:
        by_rate[src.rate].append(src)
    jobs = []
    for rate, group in sorted(by_rate.items()):
        size = max(1, math.ceil(len(group) / workers))  # one model load per process
        for start in range(0, len(group), size):
            chunk = group[start : start + size]
            jobs.append((rate, chunk, work / f"piper_{rate:.2f}_{start:04d}"))
    out: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = pool.map(
            lambda job: synthesize_piper_batch([s.text for s in job[1]], job[0], job[2]), jobs
        )
        for (_, chunk, _), wavs in zip(jobs, results, strict=True):
            out.update({src.key: str(wav) for src, wav in zip(chunk, wavs, strict=True)})
    return out


def _render_all(
    plans: list[ClipPlan], root: Path, real: dict[str, RealClip], workers: int, progress: bool
) -> dict[str, dict]:
    from tqdm import tqdm

    groups: dict[str, list[ClipPlan]] = defaultdict(list)
    for plan in plans:
        groups[plan.source.key].append(plan)
    with tempfile.TemporaryDirectory(prefix="speech-drame-demo-") as tmp:
        piper_sources = [
            g[0].source
            for g in groups.values()
            if g[0].source.kind == "tts" and VOICES[g[0].source.voice].engine == "piper"
        ]
        with tqdm(total=len(plans), desc="rendering", unit="clip", disable=not progress) as bar:
            bar.set_postfix_str(f"piper: {len(piper_sources)} texts")
            piper = _piper_stage(piper_sources, Path(tmp), workers)
            bar.set_postfix_str("")
            tasks = [
                _Task(
                    g[0].source,
                    tuple(
                        _Variant(
                            str(_wav_path(root, p)), p.delivery, p.degradation, p.seed, p.vocoded
                        )
                        for p in g
                    ),
                    piper.get(key, ""),
                    real.get(g[0].source.clip_id) if g[0].is_real else None,
                )
                for key, g in groups.items()
            ]
            infos: dict[str, dict] = {}
            with ProcessPoolExecutor(workers) if workers > 1 else nullcontext() as pool:
                results = pool.map(_render, tasks, chunksize=4) if pool else map(_render, tasks)
                for result in results:
                    infos.update(result)
                    bar.update(len(result))
    return infos


def _record(plan: ClipPlan, annotations: dict) -> dict:
    ctx = plan.context
    wav_path = f"{AUTHOR_PREFIX}/{DATA_DIRS[plan.config]}/{plan.wav_name}"
    if plan.config == "archetype":
        return {
            "id": plan.record_id,
            "question": ctx["question"],
            "annotations": annotations,
            "wav_path": wav_path,
        }
    return {
        "id": plan.record_id,
        "local_scene": ctx["local_scene"],
        "char_age": ctx["char_age"],
        "char_style": ctx["char_style"],
        "char_profile": ctx["char_profile"],
        "transcript": ctx["transcript"],
        "annotations": annotations,
        "wav_path": wav_path,
        "data_source": DATA_SOURCE,
    }


def _source_label(plan: ClipPlan) -> str:
    return f"real:{plan.real_group}" if plan.is_real else plan.source.voice


def _label(
    plan: ClipPlan, info: dict, real: dict[str, RealClip], pools: dict, seed: int
) -> tuple[dict, dict, dict]:
    rng = np.random.default_rng([seed, CONFIG_CODES[plan.config], plan.number, 7])
    ctx = plan.context
    if plan.config == "archetype":
        facts = ArchetypeFacts(
            _source_label(plan), plan.delivery, plan.degradation, ctx["content"],
            ctx["category"], ctx["target_arousal"], info["seconds"], plan.vocoded, plan.language,
        )  # fmt: skip
        return archetype_annotations(facts, pools["archetype"], rng)
    gender, age = speaker(plan, real)
    facts = RealismFacts(
        _source_label(plan), gender, age, plan.delivery, plan.degradation,
        ctx["mismatch_type"], ctx["mismatch_level"], ctx["scene_arousal"],
        ctx["presented_gender"], ctx["char_age"], ctx["char_style"], info["seconds"],
        plan.vocoded, plan.language,
    )  # fmt: skip
    return realism_annotations(facts, pools["realism"], rng)


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(float(v), 4) for k, v in values.items()}


def _manifest_entry(
    plan: ClipPlan, info: dict, latent: dict, factors: dict, n_annotators: int,
    real: dict[str, RealClip],
) -> dict:  # fmt: skip
    src = plan.source
    if plan.is_real:
        clip = real[src.clip_id]
        source = {"kind": "real", "clip_id": clip.clip_id, "group": clip.group,
                  "original_path": str(clip.path), "text": clip.transcript}  # fmt: skip
    else:
        v = VOICES[src.voice]
        source = {"kind": "tts", "engine": v.engine, "voice": v.key, "voice_gender": v.gender,
                  "text": src.text, "rate": src.rate}  # fmt: skip
    entry = {
        "id": plan.record_id,
        "config": plan.config,
        "split": plan.split,
        "language": plan.language,
        "wav": f"{DATA_DIRS[plan.config]}/{plan.wav_name}",
        "real_speech": plan.is_real,
        "base_key": src.key,
        "source": source,
        "delivery": {
            **plan.delivery.as_dict(),
            "world_vocoded": plan.vocoded,
            "rate_by": "world" if plan.delivery.rate != src.rate else "engine",
        },  # fmt: skip
        "degradation": plan.degradation.as_dict(),
        "noise_seed": plan.seed,
        "latent": _rounded(latent),
        "factors": _rounded(factors),
        "n_annotators": n_annotators,
        "seconds": round(info["seconds"], 4),
        "copied_unchanged": info["copied"],
        "peak_limited": info["peak_limited"],
    }
    ctx = plan.context
    if plan.config == "archetype":
        entry["content"] = {
            k: ctx[k] for k in ("scenario", "category", "content", "target_arousal")
        }
    else:
        entry["context"] = {
            k: ctx[k]
            for k in ("character", "presented", "mismatch_type", "mismatch_level",
                      "mismatch_label", "scene_arousal", "presented_gender")
        }  # fmt: skip
    return entry


def _language_counts(entries: list[dict]) -> dict[str, dict[str, int]]:
    """Clips per config and language, real and synthetic (``{"realism": {"zh": .., ...}}``)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for e in entries:
        counts[e["config"]][e["language"]] += 1
        if not e["real_speech"]:
            counts[e["config"]][f"{e['language']}_tts"] += 1
    return {config: dict(sorted(c.items())) for config, c in sorted(counts.items())}


def _zh_shares(languages: dict[str, dict[str, int]]) -> str:
    """The README's sentence on the Mandarin share of each config, all clips and synthetic."""
    parts = []
    for config, c in languages.items():
        tts = c.get("zh_tts", 0) + c.get("en_tts", 0)
        share = c.get("zh", 0) / (c.get("zh", 0) + c.get("en", 0))
        tts_share = f" ({c.get('zh_tts', 0) / tts:.0%} of the synthetic ones)" if tts else ""
        parts.append(f"{share:.0%} of the {config} clips{tts_share}")
    return "Mandarin makes " + ", ".join(parts)


def _prepare_dir(out: Path) -> Path:
    """A fresh staging folder beside ``out``; an existing ``out`` must be a demo release."""
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise FileExistsError(f"{out}: not empty and not a demo release (no {MANIFEST}); refusing")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    for data_dir in DATA_DIRS.values():
        (staging / data_dir).mkdir()
    return staging


def make_release(
    out: str | Path,
    seed: int = 0,
    workers: int = 2,
    limit: int | None = None,
    official_dir: str | Path | None = None,
    progress: bool = True,
) -> dict:
    """Generate the demo release into ``out`` (replacing a previous demo release there).

    Args:
        out: output folder.
        seed: everything (plan, noise, annotators) derives from it.
        workers: processes for rendering (and concurrent piper batches).
        limit: keep at most this many records per config and split (for quick tests).
        official_dir: the official samples folder; its realism clip joins the real speech.
        progress: show a tqdm bar.

    Returns:
        A summary: counts per config/split, seconds of audio, wall time.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    start = time.perf_counter()
    out = Path(out)
    real_clips = find_real_clips(Path(official_dir) if official_dir is not None else None)
    real = {c.clip_id: c for c in real_clips}
    piper_model_path()  # fail before any work if the voice package is missing
    plans = plan_release(seed, real_clips, limit)
    staging = _prepare_dir(out)
    try:
        infos = _render_all(plans, staging, real, workers, progress)
        pools = {
            config: rater_pool(np.random.default_rng([seed, code, 99]))
            for config, code in CONFIG_CODES.items()
        }
        lines: dict[tuple[str, str], list[str]] = defaultdict(list)
        entries = []
        for plan in plans:
            info = infos[str(_wav_path(staging, plan))]
            annotations, latent, factors = _label(plan, info, real, pools, seed)
            record = _record(plan, annotations)
            validated = validate_record(record, plan.config, where=plan.record_id)
            lines[plan.config, plan.split].append(json.dumps(record, ensure_ascii=False))
            entries.append(
                _manifest_entry(plan, info, latent, factors, validated.n_annotators, real)
            )
        for (config, split), rows in lines.items():
            path = staging / DATA_DIRS[config] / f"{split}.jsonl"
            path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        counts = {
            config: {s: len(lines[config, s]) for s in SPLITS[config] if lines[config, s]}
            for config in DATA_DIRS
        }
        seconds = sum(e["seconds"] for e in entries)
        languages = _language_counts(entries)
        manifest = {
            "generator": "speech_drame.demo",
            "generator_version": GENERATOR_VERSION,
            "seed": seed,
            "limit": limit,
            "note": PROXY_LABEL_NOTE,
            "official_sample_clip_used": official_dir is not None,
            "counts": counts,
            "audio_seconds": round(seconds, 2),
            "languages": languages,
            "voices": {
                k: {"engine": v.engine, "gender": v.gender, "language": v.language}
                for k, v in VOICES.items()
            },
            "source_priors": {
                k: {"naturalness": n, "clean_quality": c} for k, (n, c) in SOURCE_PRIORS.items()
            },  # fmt: skip
            "realism_weights": REALISM_WEIGHTS,
            "clips": entries,
        }
        (staging / MANIFEST).write_text(
            json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        official = ", the official realism sample clip" if official_dir is not None else ""
        (staging / "README.md").write_text(
            README.format(
                seed=seed, official=official, zh_shares=_zh_shares(languages), note=PROXY_LABEL_NOTE
            ),
            encoding="utf-8",
        )
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    engines = Counter(e["source"].get("engine", "real") for e in entries)
    return {
        "out": str(out),
        "counts": counts,
        "clips": len(entries),
        "real_speech_clips": sum(e["real_speech"] for e in entries),
        "languages": languages,
        "engines": dict(sorted(engines.items())),
        "audio_seconds": round(seconds, 1),
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
