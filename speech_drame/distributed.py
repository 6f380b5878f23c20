"""Which shard this process is: explicit ``--rank/--world-size`` or a torchrun / accelerate group.

Used by the commands that shard their work (``bench``, ``features``). On a CPU-only machine
``accelerate launch --multi_gpu --num_processes N`` and ``torchrun --nproc_per_node N`` start
N processes joined by a gloo group; a plain ``accelerate launch --num_processes N`` starts one.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from typing import Any


def check_shard_args(rank: int, world_size: int | None) -> None:
    """Refuse a ``--rank`` without ``--world-size`` or outside ``0..world_size-1``."""
    if rank and world_size is None:
        raise ValueError("--rank needs --world-size")
    if world_size is not None and not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= --rank < --world-size, got {rank} of {world_size}")


def rank_world(
    rank: int, world_size: int | None, timeout: timedelta | None = None
) -> tuple[int, int, Any | None]:
    """``(rank, world size, accelerate PartialState or None)``.

    Explicit ``world_size`` wins (no process group); else the process group of torchrun /
    ``accelerate launch`` when it has several processes; else a single process. ``timeout``:
    how long a collective (a barrier) waits for the slowest rank (default: torch's, 30 min).
    """
    if world_size is not None:
        return rank, world_size, None
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        import torch

        from .extras import require

        PartialState = require("accelerate", "sharding over a process group").PartialState
        options = {"timeout": timeout} if timeout is not None else {}
        state = PartialState(cpu=not torch.cuda.is_available(), **options)  # CPU: a gloo group
        return state.process_index, state.num_processes, state
    if any(k.startswith("ACCELERATE_") for k in os.environ):
        print(
            "note: one process: without a GPU, `accelerate launch --num_processes N` starts a "
            "single process; use `accelerate launch --multi_gpu --num_processes N`, `torchrun "
            "--nproc_per_node N` or N processes with --rank/--world-size to shard",
            file=sys.stderr,
        )
    return 0, 1, None


def local_processes() -> int:
    """Processes of this job on this machine (``$LOCAL_WORLD_SIZE`` of torchrun/accelerate, else 1)."""
    value = os.environ.get("LOCAL_WORLD_SIZE", "1")
    return int(value) if value.isdigit() and int(value) > 0 else 1
