"""The two ISDrama protocols over a manifest, and their JSON/CSV reports.

Rules (the paper keeps the protocols apart; we enforce it):

- ``score_sentences`` takes only ``type: sentence`` items whose generated audio lasts at most
  :data:`MAX_SENTENCE_SECONDS`; ``score_dramas`` takes only ``type: drama`` items.
- Sentence metrics are monaural: binaural files are averaged over their channels and
  resampled to 16 kHz before ASR, speaker embedding and F0 tracking.
- Drama metrics are binaural: both files must have exactly 2 channels (column 0 = left,
  column 1 = right) at the same sample rate; they are analysed at 48 kHz.
- Generated and reference audio must last the same time within ``length_tolerance`` seconds;
  the longer one is then cut to the shorter and the difference is reported per row
  (``length_difference_s``). Larger differences raise: align the audio first, or, for the
  sentence protocol, ask for explicit alignment (``align="dtw"``: FFE over the frame pairs of
  a log-mel DTW path, see :mod:`.alignment`).

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
from speech_drame.languages import LANGUAGE_NAMES, language_from_script
from speech_drame.protocols.isdrama.alignment import align_frames
from speech_drame.protocols.isdrama.f0_frame_error import F0FrameError, f0_frame_error
from speech_drame.protocols.isdrama.manifest import ManifestEntry
from speech_drame.protocols.isdrama.spatial import (
    ANALYSIS_SR,
    binaural_channels,
    delay_track,
    direction_check,
    interaural_cues,
    interaural_error,
)
from speech_drame.protocols.isdrama.spatial_embedder import SpatialEmbedder, cosine
from speech_drame.text_metrics import character_error_rate

MAX_SENTENCE_SECONDS = 30.0
DRAMA_MAX_SAMPLES = 2**28  # whole dramas are analysed at once: up to 46 min of 48 kHz binaural
LENGTH_TOLERANCE = 0.1  # seconds

SpeakerEmbedder = Callable[[Audio], np.ndarray]  # 16 kHz mono audio -> 1-D embedding
F0Tracker = Callable[[Audio], np.ndarray]  # 16 kHz mono audio -> F0 Hz per frame, 0 unvoiced
ALIGNMENTS = ("length", "dtw")


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
    gen: int, ref: int, sample_rate: int, tolerance: float, entry: ManifestEntry
) -> int:
    difference = abs(gen - ref) / sample_rate
    if difference > tolerance:
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
    if align not in ALIGNMENTS:
        raise ValueError(f"align must be one of {ALIGNMENTS}, got {align!r}")
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
    if align not in ALIGNMENTS:
        raise ValueError(f"align must be one of {ALIGNMENTS}, got {align!r}")
    entries = list(entries)
    for entry in entries:
        _require_type(entry, "sentence", "single-sentence")
        _require_language(entry, asr)
    settings: dict[str, Any] = {"sample_rate": 16_000, "align": align, "asr_model": asr.name}
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
    audio = load_audio(path, sample_rate=ANALYSIS_SR, mono=False, max_samples=DRAMA_MAX_SAMPLES)
    binaural_channels(audio.samples, str(path))
    return audio


def score_dramas(
    entries: Iterable[ManifestEntry],
    *,
    embedder: SpatialEmbedder | None,
    length_tolerance: float = LENGTH_TOLERANCE,
    floor_db: float | None = None,
    window: float = 0.2,
    hop: float = 0.1,
) -> ProtocolResult:
    """Full-drama protocol: IPD/ILD MAE, ANG/DIS cosine (if ``embedder``), GCC-PHAT direction.

    ``embedder=None`` leaves ANG/DIS out (recorded in the settings); ``floor_db`` restricts
    IPD/ILD to active bands (see :func:`.spatial.interaural_error`); ``window``/``hop`` set the
    GCC-PHAT windows in seconds.
    """
    result = ProtocolResult(
        "drama",
        DRAMA_METRICS,
        {
            "length_tolerance_s": length_tolerance,
            "sample_rate": ANALYSIS_SR,
            "floor_db": floor_db,
            "gcc_window_s": window,
            "gcc_hop_s": hop,
            "spatial_embedder": None if embedder is None else type(embedder).__name__,
            "channels": "column 0 = left, column 1 = right",
        },
    )
    for entry in entries:
        _require_type(entry, "drama", "full-drama")
        gen, ref = _binaural(entry.generated), _binaural(entry.reference)
        if gen.original_sample_rate != ref.original_sample_rate:
            raise ValueError(
                f"{entry.where} (id={entry.id}): sample rates differ: generated "
                f"{gen.original_sample_rate} Hz, reference {ref.original_sample_rate} Hz"
            )
        n = _aligned_length(
            len(gen.samples), len(ref.samples), ANALYSIS_SR, length_tolerance, entry
        )
        g, r = gen.samples[:n], ref.samples[:n]
        cues = interaural_error(interaural_cues(g), interaural_cues(r), floor_db)
        direction = direction_check(
            delay_track(g, ANALYSIS_SR, window, hop), delay_track(r, ANALYSIS_SR, window, hop)
        )
        row: dict[str, Any] = {
            "id": entry.id,
            "generated": str(entry.generated),
            "seconds": round(n / ANALYSIS_SR, 6),
            "length_difference_s": round(abs(gen.seconds - ref.seconds), 6),
            "ipd_mae": cues.ipd_mae,
            "ild_mae": cues.ild_mae,
            "azimuth_mae_deg": direction.azimuth_mae,
            "side_agreement": direction.side_agreement,
            "gcc_windows": direction.windows,
        }
        if embedder is not None:
            eg, er = (embedder(resample(x, ANALYSIS_SR, embedder.sample_rate)) for x in (g, r))
            row["ang_cos"] = cosine(eg.angle, er.angle, "angle embedding")
            row["dis_cos"] = cosine(eg.distance, er.distance, "distance embedding")
        result.rows.append(row)
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
