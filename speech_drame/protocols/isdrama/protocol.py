"""The two ISDrama protocols over a manifest, and their JSON/CSV reports.

Rules (the paper keeps the protocols apart; we enforce it):

- ``score_sentences`` takes only ``type: sentence`` items whose generated audio lasts at most
  :data:`MAX_SENTENCE_SECONDS`; ``score_dramas`` takes only ``type: drama`` items.
- Sentence metrics are monaural: binaural files are averaged over their channels and
  resampled to 16 kHz before ASR, speaker embedding and F0 tracking.
- Drama metrics are binaural: both files must have exactly 2 channels (column 0 = left,
  column 1 = right) at the same sample rate. IPD/ILD follow ``spatial_metric``:
  ``"official"`` (default, the released evaluator's figure at 32 kHz, :mod:`.official_cues`)
  or ``"wrapped-band"`` (this package's wrapped mel-band MAE at 48 kHz, :mod:`.spatial`). The
  GCC-PHAT direction check runs at 48 kHz; ANG/DIS embedders get the rate they declare
  (SPATIAL-AST: 32 kHz).
- Generated and reference audio must last the same time within ``length_tolerance`` seconds;
  the longer one is then cut to the shorter and the difference is reported per row
  (``length_difference_s``, with ``cut_from`` naming the file that lost it). Larger
  differences raise (``length_policy="error"``, default) unless the drama protocol is asked
  to cut any difference (``length_policy="truncate"``, what the released evaluator does
  silently) or, for the sentence protocol, to align (``align="dtw"``: FFE over the frame pairs
  of a log-mel DTW path, see :mod:`.alignment`).
- The official IPD/ILD and ANG/DIS analyse each file whole and compare the common frames or
  windows, as released; the wrapped-band cues and GCC-PHAT analyse the cut audio.

Corpus means are unweighted means of the per-item values.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from speech_drame.atomic_io import write_json, write_text
from speech_drame.audio import Audio, load_audio, probe_seconds, resample
from speech_drame.choices import check_choice
from speech_drame.languages import LANGUAGE_NAMES, language_from_script
from speech_drame.protocols.isdrama.alignment import align_frames
from speech_drame.protocols.isdrama.f0_frame_error import F0FrameError, f0_frame_error
from speech_drame.protocols.isdrama.manifest import ManifestEntry
from speech_drame.protocols.isdrama.official_cues import DEFINITION as OFFICIAL_DEFINITION
from speech_drame.protocols.isdrama.official_cues import SAMPLE_RATE as OFFICIAL_SR
from speech_drame.protocols.isdrama.official_cues import official_error
from speech_drame.protocols.isdrama.spatial import (
    ANALYSIS_SR,
    WRAPPED_BAND_DEFINITION,
    binaural_channels,
    delay_track,
    direction_check,
    interaural_cues,
    interaural_error,
)
from speech_drame.protocols.isdrama.spatial_embedder import (
    EMBEDDING_COSINES,
    SpatialEmbedder,
    cosine,
    matrix_cosine,
)
from speech_drame.text_metrics import character_error_rate

MAX_SENTENCE_SECONDS = 30.0
DRAMA_MAX_SAMPLES = 2**28  # whole dramas are analysed at once: up to 46 min of 48 kHz binaural
LENGTH_TOLERANCE = 0.1  # seconds

SpeakerEmbedder = Callable[[Audio], np.ndarray]  # 16 kHz mono audio -> 1-D embedding
F0Tracker = Callable[[Audio], np.ndarray]  # 16 kHz mono audio -> F0 Hz per frame, 0 unvoiced
ALIGNMENTS = ("length", "dtw")
SPATIAL_METRICS = {"official": OFFICIAL_DEFINITION, "wrapped-band": WRAPPED_BAND_DEFINITION}
LENGTH_POLICIES = {
    "error": "durations may differ by at most length_tolerance s; the longer file is cut to the "
    "shorter, larger differences raise",
    "truncate": "any duration difference is cut from the longer file (as the released evaluator "
    "does silently); each row reports the seconds cut",
}


@dataclass(frozen=True)
class Recogniser:
    """The ASR behind the CER: ``name`` for the report, the ``languages`` it transcribes and
    ``transcribe``: 16 kHz mono audio -> (transcript, language it was transcribed in)."""

    name: str
    languages: tuple[str, ...]
    transcribe: Callable[[Audio], tuple[str, str]]


SENTENCE_METRICS = ("cer", "sim", "ffe")
DRAMA_METRICS = ("ipd_mae", "ild_mae", "ang_cos", "dis_cos", "azimuth_mae_deg", "side_agreement")


@dataclass
class ProtocolResult:
    """Per-item rows plus the settings that produced them."""

    protocol: str
    metrics: tuple[str, ...]
    settings: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def means(self) -> dict[str, float]:
        """Unweighted mean of each metric over the items that have it."""
        out = {}
        for name in self.metrics:
            values = [r[name] for r in self.rows if r.get(name) is not None]
            if values:
                out[name] = float(np.mean(values))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "settings": self.settings,
            "items": len(self.rows),
            "means": self.means,
            "rows": self.rows,
        }


def _require_type(entry: ManifestEntry, expected: str, protocol: str) -> None:
    if entry.type != expected:
        raise ValueError(
            f"{entry.where} (id={entry.id}): is a {entry.type} item; the {protocol} protocol "
            f"scores {expected} items only (ISDrama keeps sentence and drama metrics apart)"
        )


def _require_language(entry: ManifestEntry, asr: Recogniser) -> None:
    language = language_from_script(entry.text or "")
    if language is not None and language not in asr.languages:
        raise ValueError(
            f"{entry.where} (id={entry.id}): text {entry.text!r} is {LANGUAGE_NAMES[language]} "
            f"but the ASR {asr.name} transcribes only {', '.join(asr.languages)}: "
            "choose a recogniser for that language"
        )


def _aligned_length(
    gen: int, ref: int, sample_rate: int, tolerance: float | None, entry: ManifestEntry
) -> int:
    """The common length; ``tolerance=None`` accepts any difference."""
    difference = abs(gen - ref) / sample_rate
    if tolerance is not None and difference > tolerance:
        raise ValueError(
            f"{entry.where} (id={entry.id}): generated and reference durations differ by "
            f"{difference:.3f} s (> tolerance {tolerance} s); align or trim them first"
        )
    return min(gen, ref)


def compare_f0(
    reference: Audio,
    generated: Audio,
    track_f0: F0Tracker,
    *,
    align: str = "length",
    frame_period: float = 0.01,
) -> F0FrameError:
    """FFE of two mono clips' F0 tracks: over the shorter track (``align="length"``; checking
    durations is the caller's job) or along a log-mel DTW path (``align="dtw"``), for which
    ``frame_period`` must be the tracker's hop in seconds."""
    check_choice(align, ALIGNMENTS, "align")
    f0_gen, f0_ref = np.asarray(track_f0(generated)), np.asarray(track_f0(reference))
    if align == "length":
        frames = min(len(f0_gen), len(f0_ref))
        return f0_frame_error(f0_ref[:frames], f0_gen[:frames])
    if reference.sample_rate != generated.sample_rate:
        raise ValueError(
            f"{generated.source} ({generated.sample_rate} Hz) and {reference.source} "
            f"({reference.sample_rate} Hz): DTW needs one sample rate"
        )
    ref_idx, gen_idx = align_frames(
        reference.samples, generated.samples, reference.sample_rate, frame_period
    )
    for audio, track, idx in ((generated, f0_gen, gen_idx), (reference, f0_ref, ref_idx)):
        if abs(len(track) - (idx[-1] + 1)) > 1:
            raise ValueError(
                f"{audio.source}: F0 track has {len(track)} frames but {idx[-1] + 1} frames of "
                f"{frame_period} s were aligned: frame_period must be the F0 tracker's hop"
            )
    return f0_frame_error(
        f0_ref[np.minimum(ref_idx, len(f0_ref) - 1)], f0_gen[np.minimum(gen_idx, len(f0_gen) - 1)]
    )


def score_sentences(
    entries: Iterable[ManifestEntry],
    *,
    asr: Recogniser,
    embed_speaker: SpeakerEmbedder,
    track_f0: F0Tracker,
    length_tolerance: float = LENGTH_TOLERANCE,
    align: str = "length",
    frame_period: float = 0.01,
) -> ProtocolResult:
    """Single-sentence protocol: CER (ASR vs script), SIM (vs prompt audio), FFE (vs reference).

    Each script's language is read from its characters
    (:func:`~speech_drame.languages.language_from_script`); a script in a language ``asr``
    does not transcribe is refused before any audio is scored. Rows report that ``language``
    and the ``asr_language`` the recogniser transcribed in; the settings name the model.

    ``align="length"`` compares the F0 tracks frame by frame over the shorter one, after the
    duration check described in the module docstring; ``align="dtw"`` compares them along a
    DTW path (any durations), which needs the tracker's hop as ``frame_period`` seconds.
    """
    check_choice(align, ALIGNMENTS, "align")
    entries = list(entries)
    for entry in entries:
        _require_type(entry, "sentence", "single-sentence")
        _require_language(entry, asr)
    settings: dict[str, Any] = {
        "sample_rate": 16_000,
        "align": align,
        "asr_model": asr.name,
        "asr_languages": list(asr.languages),
    }
    if align == "length":
        settings["length_tolerance_s"] = length_tolerance
    else:
        settings["frame_period_s"] = frame_period
    result = ProtocolResult("single", SENTENCE_METRICS, settings)
    for entry in entries:
        seconds = probe_seconds(entry.generated)
        if seconds > MAX_SENTENCE_SECONDS:
            raise ValueError(
                f"{entry.where} (id={entry.id}): {entry.generated} lasts {seconds:.1f} s, over the "
                f"{MAX_SENTENCE_SECONDS:.0f} s sentence limit: score concatenated dramas with the "
                "drama protocol"
            )
        gen, ref, prompt = (load_audio(p) for p in (entry.generated, entry.reference, entry.prompt))
        if align == "length":
            _aligned_length(
                len(gen.samples), len(ref.samples), gen.sample_rate, length_tolerance, entry
            )
        transcript, language = asr.transcribe(gen)
        ffe = compare_f0(ref, gen, track_f0, align=align, frame_period=frame_period)
        result.rows.append(
            {
                "id": entry.id,
                "generated": str(entry.generated),
                "language": language_from_script(entry.text or ""),
                "asr_language": language,
                "transcript": transcript,
                "cer": character_error_rate(entry.text, transcript),
                "sim": cosine(embed_speaker(gen), embed_speaker(prompt), "speaker embedding"),
                "ffe": ffe.ffe,
                "voicing_errors": ffe.voicing_errors,
                "gross_pitch_errors": ffe.gross_pitch_errors,
                "f0_frames": ffe.frames,
                "length_difference_s": round(abs(gen.seconds - ref.seconds), 6),
            }
        )
    return result


def _binaural(path: Path) -> Audio:
    audio = load_audio(path, sample_rate=None, mono=False, max_samples=DRAMA_MAX_SAMPLES)
    binaural_channels(audio.samples, str(path))
    return audio


def _drama_metrics(
    gen: Audio,
    ref: Audio,
    n: int,
    settings: dict[str, Any],
    embedder: SpatialEmbedder | None,
    floor_db: float | None,
) -> dict[str, Any]:
    """One item's drama metrics; ``n`` samples are common to both files."""
    sr, window, hop = gen.sample_rate, settings["gcc_window_s"], settings["gcc_hop_s"]
    g, r = (resample(x.samples[:n], sr, ANALYSIS_SR) for x in (gen, ref))
    if settings["spatial_metric"] == "official":
        cues = official_error(*(resample(x.samples, sr, OFFICIAL_SR) for x in (gen, ref)))
    else:
        cues = interaural_error(interaural_cues(g), interaural_cues(r), floor_db)
    direction = direction_check(
        delay_track(g, ANALYSIS_SR, window, hop), delay_track(r, ANALYSIS_SR, window, hop)
    )
    out = {
        "ipd_mae": cues.ipd_mae,
        "ild_mae": cues.ild_mae,
        "azimuth_mae_deg": direction.azimuth_mae,
        "side_agreement": direction.side_agreement,
        "gcc_windows": direction.windows,
    }
    if embedder is not None:
        rule = settings["embedding_cosine"]
        eg, er = (embedder(resample(x.samples, sr, embedder.sample_rate)) for x in (gen, ref))
        out["ang_cos"] = matrix_cosine(er.angle, eg.angle, "angle output", rule)
        out["dis_cos"] = matrix_cosine(er.distance, eg.distance, "distance output", rule)
    return out


def score_dramas(
    entries: Iterable[ManifestEntry],
    *,
    embedder: SpatialEmbedder | None,
    spatial_metric: str = "official",
    length_policy: str = "error",
    length_tolerance: float = LENGTH_TOLERANCE,
    floor_db: float | None = None,
    embedding_cosine: str = "wrap-above-pi",
    window: float = 0.2,
    hop: float = 0.1,
) -> ProtocolResult:
    """Full-drama protocol: IPD/ILD, ANG/DIS cosine (if ``embedder``), GCC-PHAT direction.

    ``spatial_metric`` picks the IPD/ILD definition and ``length_policy`` the handling of
    unequal durations (see the module docstring; the settings record both with a one-line
    definition). ``embedder=None`` leaves ANG/DIS out; ``embedding_cosine`` is the rule of
    :func:`.spatial_embedder.matrix_cosine`. ``floor_db`` restricts the wrapped-band cues to
    active bands (see :func:`.spatial.interaural_error`); ``window``/``hop`` set the GCC-PHAT
    windows in seconds.
    """
    check_choice(spatial_metric, SPATIAL_METRICS, "spatial_metric")
    check_choice(length_policy, LENGTH_POLICIES, "length_policy")
    check_choice(embedding_cosine, EMBEDDING_COSINES, "embedding_cosine")
    if floor_db is not None and spatial_metric != "wrapped-band":
        raise ValueError("floor_db applies to spatial_metric='wrapped-band' only")
    settings: dict[str, Any] = {
        "spatial_metric": spatial_metric,
        "spatial_metric_definition": SPATIAL_METRICS[spatial_metric],
        "ipd_ild_sample_rate": OFFICIAL_SR if spatial_metric == "official" else ANALYSIS_SR,
        "length_policy": length_policy,
        "length_policy_definition": LENGTH_POLICIES[length_policy],
        "length_tolerance_s": length_tolerance if length_policy == "error" else None,
        "gcc_sample_rate": ANALYSIS_SR,
        "gcc_window_s": window,
        "gcc_hop_s": hop,
        "spatial_embedder": None if embedder is None else type(embedder).__name__,
        "channels": "column 0 = left, column 1 = right",
    }
    if spatial_metric == "wrapped-band":
        settings["floor_db"] = floor_db
    if embedder is not None:
        settings["spatial_embedder_sample_rate"] = embedder.sample_rate
        settings["embedding_cosine"] = embedding_cosine
        settings["embedding_cosine_definition"] = EMBEDDING_COSINES[embedding_cosine]
    result = ProtocolResult("drama", DRAMA_METRICS, settings)
    tolerance = length_tolerance if length_policy == "error" else None
    for entry in entries:
        _require_type(entry, "drama", "full-drama")
        gen, ref = _binaural(entry.generated), _binaural(entry.reference)
        sr = gen.sample_rate
        if sr != ref.sample_rate:
            raise ValueError(
                f"{entry.where} (id={entry.id}): sample rates differ: generated {sr} Hz, "
                f"reference {ref.sample_rate} Hz"
            )
        n = _aligned_length(len(gen.samples), len(ref.samples), sr, tolerance, entry)
        longer = len(gen.samples) - len(ref.samples)
        row: dict[str, Any] = {
            "id": entry.id,
            "generated": str(entry.generated),
            "seconds": round(n / sr, 6),
            "length_difference_s": round(abs(longer) / sr, 6),
            "cut_from": "generated" if longer > 0 else "reference" if longer < 0 else None,
        }
        try:
            row.update(_drama_metrics(gen, ref, n, settings, embedder, floor_db))
        except ValueError as exc:
            raise ValueError(f"{entry.where} (id={entry.id}): {exc}") from exc
        result.rows.append(row)
    result.settings["length_cut_total_s"] = round(
        sum(row["length_difference_s"] for row in result.rows), 6
    )
    return result


def _csv(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_results(result: ProtocolResult, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``isdrama_<protocol>.json`` (settings, means, rows), ``.csv`` (rows) and
    ``_means.csv``, each atomically (temporary file, then rename). Returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"isdrama_{result.protocol}"
    write_json(stem.with_suffix(".json"), result.to_dict(), indent=2)
    files = {
        stem.with_suffix(".csv"): _csv(result.rows),
        out / f"{stem.name}_means.csv": _csv(
            [
                {"metric": k, "mean": v, "items": sum(r.get(k) is not None for r in result.rows)}
                for k, v in result.means.items()
            ]
        ),
    }
    for path, text in files.items():
        write_text(path, text)
    return [stem.with_suffix(".json"), *files]
