"""A small OpenAI-compatible chat server on 127.0.0.1 for the judge tests and the README test."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chat_body(content, refusal=None, logprobs=None) -> dict:
    message = {"role": "assistant", "content": content, "refusal": refusal}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"id": "x", "object": "chat.completion", "choices": [choice]}


def reply(body, status=200, headers=None, delay=0.0):
    return status, headers or {}, body, delay


class JudgeServer(ThreadingHTTPServer):
    """A small OpenAI-compatible server: ``routes[model](payload, n)`` answers the n-th request."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.routes: dict = {}
        self.requests: list[dict] = []
        self.headers_seen: list[dict] = []
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def count(self, model: str | None = None) -> int:
        return len(self.requests) if model is None else self.counts.get(model, 0)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_POST(self):
        server: JudgeServer = self.server  # type: ignore[assignment]
        payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions":
            status, headers, body, delay = reply({"error": "not found"}, 404)
        else:
            with server.lock:
                model = payload["model"]
                n = server.counts.get(model, 0)
                server.counts[model] = n + 1
                server.requests.append(payload)
                server.headers_seen.append(dict(self.headers))
            status, headers, body, delay = server.routes[model](payload, n)
        time.sleep(delay)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass


@contextmanager
def running(server: JudgeServer | None = None) -> Iterator[JudgeServer]:
    """Serve ``server`` (a new one by default) on a thread for the ``with`` block."""
    srv = server or JudgeServer()
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)
