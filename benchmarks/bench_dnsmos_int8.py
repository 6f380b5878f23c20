"""Would an int8 DNSMOS pay? onnxruntime's dynamic and static (QDQ) int8 quantisations of the
P.835 and P.808 models against the fp32 models this package runs, on real clips.

    make setup-peers   # onnx, which onnxruntime.quantization and the opset upgrade need
    python benchmarks/bench_dnsmos_int8.py [--calibration 24]

Quantised models are written to a temporary folder. Static quantisation is calibrated on
``--calibration`` demo-corpus clips (English and Mandarin) that are not among the evaluated
ones. Evaluated: the LibriVox clips of Debian's pocketsphinx-testdata, the official 48 kHz
samples as hi-fi stereo (the left channel, the right one 3 dB quieter and slightly delayed),
a "hot" float clip (LibriVox at peak 2.0, which the reader scales back into range), and
Mandarin clips of the demo corpus. Printed, per variant: the largest and mean absolute
difference from fp32 of each calibrated value (SIG, BAK, OVRL, P808) over all clips, with the
issue's 0.05 bound, and the CPU milliseconds per 9 s window beside fp32's (same process, one
thread, median of 3 passes).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from speech_drame.audio import load_audio
from speech_drame.features import quality

REPO = Path(__file__).resolve().parents[1]
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
DEMO = REPO / "build" / "demo_release" / "archetype_data"
BOUND = 0.05
NAMES = ("SIG", "BAK", "OVRL", "P808")
# static (QDQ, calibrated) variants: the operators quantised (None: every one onnxruntime can)
STATIC_VARIANTS = {"static int8, all ops": None, "static int8, Conv+MatMul": ["Conv", "MatMul"]}


def _clips(tmp: Path) -> dict[str, list]:
    """Evaluated clips by kind, as Audio."""
    librivox = sorted(LIBRIVOX.glob("*.wav"))
    stereo = []
    for path in sorted((REPO / "official_samples").glob("*/*.wav")):
        x, rate = sf.read(path, dtype="float32")
        x = x if x.ndim == 1 else x[:, 0]
        right = np.concatenate([np.zeros(24, np.float32), x[:-24]]) * 10 ** (-3 / 20)
        out = tmp / f"stereo_{path.stem}.wav"
        sf.write(out, np.stack([x, right], axis=1), rate, subtype="PCM_24")
        stereo.append(out)
    x, rate = sf.read(librivox[0], dtype="float32")
    hot = tmp / "hot.wav"
    sf.write(hot, 2.0 * x / np.abs(x).max(), rate, subtype="FLOAT")
    mandarin = sorted(DEMO.glob("demo_zh_*.wav"))[::7][:12]
    kinds = {"LibriVox": librivox, "hi-fi stereo": stereo, "hot float": [hot], "Mandarin": mandarin}
    return {k: [load_audio(p, max_seconds=30.0) for p in v] for k, v in kinds.items()}


def _calibration_windows(n: int) -> list[np.ndarray]:
    paths = sorted(DEMO.glob("demo_*.wav"))[1::9][:n]  # offset from the evaluated Mandarin ones
    return [w for p in paths for w in quality.windows(load_audio(p, max_seconds=30.0).samples)]


def _models() -> dict[str, Path]:
    import speechmos

    root = Path(speechmos.__file__).parent / "dnsmos_models"
    return {"sig_bak_ovr": root / "sig_bak_ovr.onnx", "p808": root / "model_v8.onnx"}


def _inputs(name: str, window: np.ndarray) -> dict[str, np.ndarray]:
    x = window[None] if name == "sig_bak_ovr" else quality._p808_input(window)[None]
    return {"input_1": x}


def quantise(out: Path, calibration: list[np.ndarray]) -> dict[str, dict[str, Path]]:
    """``{variant: {model: path}}`` for fp32 and the int8 variants."""
    import onnx
    from onnx import version_converter
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self, name: str) -> None:
            self.items = iter([_inputs(name, w) for w in calibration])

        def get_next(self):
            return next(self.items, None)

    variants: dict[str, dict[str, Path]] = {"fp32": _models(), "dynamic int8": {}}
    variants.update({v: {} for v in STATIC_VARIANTS})
    for name, path in _models().items():
        # the models are opset 12, whose DequantizeLinear has no per-channel axis: opset 17 first
        upgraded = out / f"{name}.opset17.onnx"
        onnx.save(version_converter.convert_version(onnx.load(str(path)), 17), str(upgraded))
        prepared = out / f"{name}.pre.onnx"
        quant_pre_process(str(upgraded), str(prepared))
        variants["dynamic int8"][name] = out / f"{name}.dynamic.onnx"
        quantize_dynamic(
            str(prepared), str(variants["dynamic int8"][name]), weight_type=QuantType.QInt8
        )
        for k, (variant, ops) in enumerate(STATIC_VARIANTS.items()):
            variants[variant][name] = out / f"{name}.static{k}.onnx"
            quantize_static(
                str(prepared),
                str(variants[variant][name]),
                Reader(name),
                quant_format=QuantFormat.QDQ,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=ops,
            )
    return variants


def _sessions(paths: dict[str, Path]):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.enable_mem_pattern = False
    return {
        name: ort.InferenceSession(str(p), options, providers=["CPUExecutionProvider"])
        for name, p in paths.items()
    }


def _values(sessions, windows: np.ndarray) -> np.ndarray:
    """Calibrated SIG, BAK, OVRL, P808 of a clip: the mean over its windows, as quality does."""
    _, polys = quality._MODELS["plain"]
    raw = np.concatenate(
        [sessions["sig_bak_ovr"].run(None, _inputs("sig_bak_ovr", w))[0] for w in windows]
    )
    p808 = np.array([sessions["p808"].run(None, _inputs("p808", w))[0][0, 0] for w in windows])
    per_window = np.stack([poly(raw[:, i]) for i, poly in enumerate(polys)] + [p808], axis=1)
    return per_window.mean(axis=0)


def _ms_per_window(sessions, windows: list[np.ndarray]) -> float:
    passes = []
    for _ in range(3):
        start = time.process_time()
        for w in windows:
            _values(sessions, w[None])
        passes.append((time.process_time() - start) / len(windows) * 1e3)
    return statistics.median(passes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibration", type=int, default=24, help="demo clips to calibrate on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clips = _clips(Path(tmp))
        windows = {k: [quality.windows(a.samples) for a in v] for k, v in clips.items()}
        variants = quantise(Path(tmp), _calibration_windows(args.calibration))
        sessions = {v: _sessions(p) for v, p in variants.items()}
        reference = {k: [_values(sessions["fp32"], w) for w in ws] for k, ws in windows.items()}
        timing_set = [w for ws in windows.values() for c in ws for w in c][:12]
        base_ms = _ms_per_window(sessions["fp32"], timing_set)
        n_clips = sum(len(v) for v in clips.values())
        print(f"{n_clips} clips: " + ", ".join(f"{k} {len(v)}" for k, v in clips.items()))
        print(f"fp32: {base_ms:.0f} CPU-ms per window")
        for variant in ("dynamic int8", *STATIC_VARIANTS):
            ms = _ms_per_window(sessions[variant], timing_set)
            print(f"\n{variant}: {ms:.0f} CPU-ms per window ({base_ms / ms:.2f}x fp32)")
            for kind, ws in windows.items():
                diffs = np.abs(
                    np.array([_values(sessions[variant], w) for w in ws]) - reference[kind]
                )
                cells = "  ".join(
                    f"{n} max {diffs[:, i].max():.3f} mean {diffs[:, i].mean():.3f}"
                    for i, n in enumerate(NAMES)
                )
                verdict = "within" if diffs.max() <= BOUND else "OUTSIDE"
                print(f"  {kind:<13} {cells}  -> {verdict} {BOUND}")


if __name__ == "__main__":
    main()
