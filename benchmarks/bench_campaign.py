"""Rating campaign under load over loopback: ratings/s, POST latency, lost and duplicated ratings.

A campaign of real 1 s WAV clips (K raters per clip) is served by `speech-drame campaign serve`
in a subprocess on 127.0.0.1; R simulated raters (threads with httpx, tests/campaign_load.py)
loop GET task -> GET its audio -> POST a random valid rating; some send a task twice (must be
"already recorded") and some send invalid answers first (must be refused with a 4xx). The run
stops when every rater is done or at --seconds. Afterwards the store is read back: lost =
acknowledged ratings not stored with the answers first sent, duplicated = a second rating of a
task or of a clip by one rater. Baseline, same run: the same submits through the store API in
this process (no HTTP), on a fresh campaign. With PostgreSQL binaries (/usr/lib/postgresql/*/bin)
the HTTP run is repeated on a PostgreSQL campaign in a cluster this script starts and stops.
The SQLite HTTP run is repeated with --slow-clients sockets opened first that send half a
request and wait (the server must close them and keep answering the raters): the table shows
the raters' latencies beside the plain run, and how soon the half requests were closed.
Figures are printed, never asserted.

    python benchmarks/bench_campaign.py [--raters 12] [--clips 200] [--seconds 120] [--slow-clients 300]
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from campaign_load import (  # noqa: E402
    Driver,
    ServerProcess,
    check_store,
    in_process,
    latency_figures,
    write_campaign,
)
from postgres_cluster import create_database, running_cluster, unavailable  # noqa: E402

PG_USER = "campaign"


class HalfRequests:
    """``n`` connections that send a request line and one header, never the end of it, and a
    thread that notes when the server closes each (``closed``: seconds after opening)."""

    def __init__(self, url: str, n: int):
        host, port = url.removeprefix("http://").split(":")
        self.opened = time.monotonic()
        self.sockets = []
        for _ in range(n):
            s = socket.create_connection((host, int(port)))
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            s.setblocking(False)
            self.sockets.append(s)
        self.closed: list[float] = []
        self._watch = threading.Thread(target=self._watch_closes, daemon=True)
        self._watch.start()

    def _watch_closes(self) -> None:
        selector = selectors.DefaultSelector()
        for s in self.sockets:
            selector.register(s, selectors.EVENT_READ)
        left = len(self.sockets)
        while left and time.monotonic() - self.opened < 60:
            for key, _ in selector.select(timeout=0.1):
                try:
                    gone = key.fileobj.recv(1) == b""
                except ConnectionResetError:
                    gone = True
                except BlockingIOError:
                    continue
                if gone:
                    self.closed.append(time.monotonic() - self.opened)
                    selector.unregister(key.fileobj)
                    left -= 1

    def summary(self) -> str:
        self._watch.join(timeout=60)
        for s in self.sockets:
            s.close()
        if not self.sockets:
            return ""
        last = max(self.closed, default=float("nan"))
        return f"{len(self.closed)}/{len(self.sockets)} closed, the last after {last:.1f} s"


def http_run(target: str, root: Path, args: argparse.Namespace, slow: int = 0) -> dict:
    tokens, _ = write_campaign(target, root / "audio", "archetype", args.clips, args.k, args.raters)
    with ServerProcess(target, root / "server.log") as server:
        half = HalfRequests(server.url, slow)
        driver = Driver(server.url, "archetype", tokens, time.monotonic() + args.seconds,
                        double_share=0.1, invalid_share=0.1).run()  # fmt: skip
        closed = half.summary()
    store = check_store(target, driver.acks)
    return {
        "slow": closed,
        "ratings": len(driver.acks),
        "per_s": len(driver.acks) / driver.elapsed,
        **latency_figures(driver.latencies),
        "lost": store["lost"],
        "duplicated": store["duplicated"],
        "refused": sum(driver.refused.values()),
        "doubles": driver.doubles,
        "problems": driver.problems,
        "done": f"{len(driver.finished)}/{len(tokens)}",
        "complete": f"{store['clips_complete']}/{store['clips']}",
    }


def store_run(target: str, root: Path, args: argparse.Namespace) -> dict:
    tokens, _ = write_campaign(target, root / "audio", "archetype", args.clips, args.k, args.raters)
    got = in_process(target, "archetype", sorted(tokens), time.monotonic() + args.seconds)
    store = check_store(target, got["acks"])
    return {
        "ratings": len(got["acks"]),
        "per_s": len(got["acks"]) / got["elapsed"],
        **latency_figures(got["latencies"]),
        "lost": store["lost"],
        "duplicated": store["duplicated"],
        "refused": 0,
        "doubles": 0,
        "problems": [],
        "slow": "",
        "done": "",
        "complete": f"{store['clips_complete']}/{store['clips']}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--raters", type=int, default=12)
    parser.add_argument("--clips", type=int, default=200)
    parser.add_argument("--k", type=int, default=3, help="raters per clip")
    parser.add_argument("--seconds", type=float, default=120.0, help="time cap of each run")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL run")
    parser.add_argument("--slow-clients", type=int, default=300, help="half requests held open")
    args = parser.parse_args()

    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        root = Path(tmp)
        print(f"{args.clips} clips x K={args.k}, {args.raters} raters, cap {args.seconds:g} s; "
              f"{os.cpu_count()} CPUs", flush=True)  # fmt: skip
        rows["HTTP, SQLite"] = http_run(str(root / "http.db"), root, args)
        if args.slow_clients:
            rows[f"HTTP, SQLite, {args.slow_clients} half requests"] = http_run(
                str(root / "slow.db"), root / "slow", args, args.slow_clients
            )
        rows["store API, SQLite"] = store_run(str(root / "store.db"), root, args)
        why = "--no-postgres" if args.no_postgres else unavailable()
        if why is None:
            with running_cluster(PG_USER) as port:
                url = create_database(PG_USER, port, "bench")
                rows["HTTP, PostgreSQL"] = http_run(url, root, args)
        else:
            print(f"PostgreSQL run skipped: {why}")

    head = ("run", "ratings", "ratings/s", "p50 ms", "p95 ms", "max ms", "lost", "dup",
            "refused 4xx", "doubles", "raters done", "clips K", "half requests")  # fmt: skip
    print("\n" + " | ".join(head))
    for name, r in rows.items():
        print(f"{name} | {r['ratings']} | {r['per_s']:.1f} | {r['p50_ms']:.1f} | "
              f"{r['p95_ms']:.1f} | {r['max_ms']:.1f} | {r['lost']} | {r['duplicated']} | "
              f"{r['refused']} | {r['doubles']} | {r['done']} | {r['complete']} | {r['slow']}")  # fmt: skip
    base = rows["store API, SQLite"]["per_s"]
    for name in ("HTTP, SQLite", "HTTP, PostgreSQL"):
        if name in rows:
            print(f"{name}: {rows[name]['per_s'] / base:.2f}x the in-process store API ratings/s")
    for name, r in rows.items():
        for problem in r["problems"][:10]:
            print(f"{name}: unexpected: {problem}")


if __name__ == "__main__":
    main()
