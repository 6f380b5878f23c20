"""Convert resemblyzer's bundled GE2E voice encoder checkpoint to the safetensors file we ship.

Reads ``pretrained.pt`` of the installed resemblyzer package (``pip install --no-deps
resemblyzer==0.1.4``) and keeps only the encoder parameters (``lstm.*``, ``linear.*``) as float32,
unchanged: the GE2E loss scalars and the optimizer state are dropped. The metadata names the
source package, its version and the SHA-256 of ``pretrained.pt``. After a conversion, pin the
printed SHA-256 as ``WEIGHTS_SHA256`` in ``speech_drame/features/speaker.py``.

    python dataset_scripts/convert_voice_encoder.py [--out speech_drame/resources/voice_encoder.safetensors]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import struct
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import load_file

SOURCE = "resemblyzer"
SOURCE_VERSION = "0.1.4"
DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "speech_drame/resources/voice_encoder.safetensors"
)


def checkpoint_path() -> Path:
    """``pretrained.pt`` of the installed resemblyzer, after checking its version."""
    spec = importlib.util.find_spec(SOURCE)
    if spec is None or spec.origin is None:
        sys.exit(f"{SOURCE} is not installed: pip install --no-deps {SOURCE}=={SOURCE_VERSION}")
    version = importlib.metadata.version(SOURCE)
    if version != SOURCE_VERSION:
        sys.exit(f"{SOURCE} {version} is installed; the shipped weights come from {SOURCE_VERSION}")
    return Path(spec.origin).parent / "pretrained.pt"


def convert(src: Path, out: Path) -> str:
    """Write the encoder parameters of ``src`` to ``out``; returns the SHA-256 of ``out``."""
    raw = src.read_bytes()
    checkpoint = torch.load(src, map_location="cpu", weights_only=True)
    state = {
        name: tensor.to(torch.float32).contiguous()
        for name, tensor in checkpoint["model_state"].items()
        if name.startswith(("lstm.", "linear."))
    }
    metadata = {
        "source_package": SOURCE,
        "source_version": SOURCE_VERSION,
        "source_file": "resemblyzer/pretrained.pt",
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "license": "Apache-2.0 (see voice_encoder.LICENSE.md)",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(serialise(state, metadata))
    load_file(out)  # the safetensors reader accepts it
    return hashlib.sha256(out.read_bytes()).hexdigest()


def serialise(state: dict[str, torch.Tensor], metadata: dict[str, str]) -> bytes:
    """The safetensors bytes of float32 ``state``, tensors and header keys in sorted order.

    ``safetensors.torch.save_file`` writes the metadata in hash-map order, which changes from run
    to run; a fixed order makes the file, and so its pinned SHA-256, reproducible.
    """
    header: dict[str, object] = {"__metadata__": metadata}
    blobs, offset = [], 0
    for name in sorted(state):
        blob = np.ascontiguousarray(state[name].numpy(), dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(state[name].shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="safetensors file to write")
    args = parser.parse_args()
    src = checkpoint_path()
    digest = convert(src, args.out)
    size = args.out.stat().st_size / 1e6
    print(f"{src} -> {args.out} ({size:.2f} MB)")
    print(f"SHA-256 {digest}")


if __name__ == "__main__":
    main()
