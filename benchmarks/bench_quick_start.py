"""How soon a command gives its first score: ``speech-drame score`` and ``speech-drame serve``.

    python benchmarks/bench_quick_start.py [--scorer artifacts/lite_scorer] [--repeats 3]

Each run is a fresh process on a warm disk (one run first, not counted, fills the page
cache), with an empty feature cache, on the official 48 kHz samples of this repository (so
reading a clip includes resampling). Printed, as the median of ``--repeats`` runs:

- ``score`` on one clip: seconds from starting the command until the clip's table is on
  stdout, and the command's peak resident memory;
- ``score`` on four clips: seconds until the first clip's table, and until the last;
- ``serve``: seconds until the page answers, then the first ``/score`` request's seconds
  (sent as soon as the page answers) and a second request's, and the server's peak memory.

Peak memory is the process's own ``VmHWM`` (``/proc/PID/status``), read just before it ends.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "official_samples" / "archetype_data"
QUESTION = "You are a courier waiting in the rain for a customer who does not answer. You say:"


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def _watch_peak(pid: int, stop: threading.Event, out: list[float]) -> None:
    """Poll the process's VmHWM until it ends (the last value read is its peak)."""
    while not stop.is_set():
        try:
            out.append(_peak_mib(pid))
        except (OSError, RuntimeError):
            return
        time.sleep(0.05)


def score_run(scorer: str, clips: list[Path], env: dict) -> tuple[list[float], float]:
    """Seconds from start to each clip's table on stdout, and the peak RSS in MiB."""
    with tempfile.TemporaryDirectory() as cache:
        args = [sys.executable, "-m", "speech_drame", "score", *map(str, clips),
                "--config", "archetype", "--question", QUESTION, "--scorer", scorer,
                "--feature-cache", cache, "--quiet"]  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                text=True)  # fmt: skip
        peaks: list[float] = []
        stop = threading.Event()
        watch = threading.Thread(target=_watch_peak, args=(proc.pid, stop, peaks))
        watch.start()
        firsts = []
        names = {str(c) for c in clips}
        for line in proc.stdout:
            if line.rstrip() in names:  # the first line of a clip's table is its id
                firsts.append(time.perf_counter() - start)
        proc.wait()
        stop.set()
        watch.join()
        if proc.returncode != 0:
            sys.exit(f"score failed ({proc.returncode}): {proc.stderr.read()}")
        return firsts, max(peaks)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_run(scorer: str, clip: Path, env: dict) -> tuple[float, float, float, float]:
    """Seconds until the page answers, the first and second request's seconds, peak MiB."""
    from gradio_client import Client, handle_file

    port = _free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "speech_drame", "serve", "--port", str(port),
                             "--scorer", scorer], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if proc.poll() is not None:
                    sys.exit(f"serve ended with {proc.returncode}")
                time.sleep(0.05)
        up = time.perf_counter() - start
        client = Client(url, verbose=False)
        request = (handle_file(str(clip)), "archetype", QUESTION, "", "", "")
        times = []
        for _ in range(2):
            t = time.perf_counter()
            client.predict(*request, api_name="/score")
            times.append(time.perf_counter() - t)
        return up, times[0], times[1], _peak_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scorer", default=str(REPO / "artifacts" / "lite_scorer"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    clips = sorted(SAMPLES.glob("*.wav"))
    clips = (clips * 4)[:4]
    if not Path(args.scorer).is_dir():
        sys.exit(f"no scorer at {args.scorer}: run `make demo-scorer` first")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    score_run(args.scorer, clips[:1], env)  # warms the disk, not counted
    one = [score_run(args.scorer, clips[:1], env) for _ in range(args.repeats)]
    four = [score_run(args.scorer, clips, env) for _ in range(args.repeats)]
    serve = [serve_run(args.scorer, clips[0], env) for _ in range(args.repeats)]
    med = statistics.median
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}; "
          f"median of {args.repeats} runs, 48 kHz clips")  # fmt: skip
    print(f"score, 1 clip:  table after {med(r[0][0] for r in one):.2f} s, "
          f"peak RSS {med(r[1] for r in one):.0f} MiB")  # fmt: skip
    print(f"score, 4 clips: first table after {med(r[0][0] for r in four):.2f} s, last after "
          f"{med(r[0][-1] for r in four):.2f} s, peak RSS {med(r[1] for r in four):.0f} MiB")  # fmt: skip
    print(f"serve: page after {med(s[0] for s in serve):.2f} s; first request "
          f"{med(s[1] for s in serve):.2f} s, second {med(s[2] for s in serve):.2f} s; "
          f"peak RSS {med(s[3] for s in serve):.0f} MiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
