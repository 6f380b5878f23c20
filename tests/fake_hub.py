"""A small Hugging Face Hub on 127.0.0.1: enough of the HTTP API for huggingface_hub 2.4 to log in,
create a model or dataset repo, list its files and commit to it. Every request is recorded.

Endpoints (as ``HfApi`` calls them): ``GET /api/whoami-v2``, ``POST /api/repos/create`` (its
``type``, model by default, kept in ``repo_types``), ``POST /api/validate-yaml``, and for
``{kind}`` ``models`` or ``datasets`` (of a repo of that type): ``POST
/api/{kind}/{repo}/preupload/{rev}`` (every file "regular", so no LFS/Xet transfer), ``GET
/api/{kind}/{repo}/tree/{rev}`` and ``POST /api/{kind}/{repo}/commit/{rev}`` (NDJSON: header,
file, deletedFile). Anything else is 404.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

REPO_ROUTE = re.compile(
    r"^/api/(?:models|datasets)/([^/]+/[^/]+)/(preupload|tree|commit)/([^/]+)(?:/.*)?$"
)
KINDS = {"models": "model", "datasets": "dataset", "spaces": "space"}  # route -> repo type
UPLOADS = ("/api/repos/create", "/preupload/", "/commit/")  # requests that write to the Hub


@dataclass
class FakeHub:
    token: str = "hf_test_write_token"
    user: str = "someone"
    orgs: tuple[str, ...] = ()
    role: str = "write"
    requests: list[tuple[str, str]] = field(default_factory=list)
    repos: dict[str, dict[str, bytes]] = field(default_factory=dict)
    repo_types: dict[str, str] = field(default_factory=dict)  # created repos; others are models
    commits: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                hub._handle(self, "GET")

            def do_POST(self) -> None:
                hub._handle(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def uploads(self) -> list[tuple[str, str]]:
        """The recorded requests that create a repo or upload/commit files."""
        return [(m, p) for m, p in self.requests if m == "POST" and any(u in p for u in UPLOADS)]

    # -- request handling ------------------------------------------------------------------

    def _handle(self, req: BaseHTTPRequestHandler, method: str) -> None:
        path = urlsplit(req.path).path
        self.requests.append((method, path))
        body = req.rfile.read(int(req.headers.get("Content-Length") or 0))
        authorised = req.headers.get("Authorization") == f"Bearer {self.token}"
        if path == "/api/whoami-v2" and method == "GET":
            if not authorised:
                return self._reply(
                    req, 401, {"error": "Invalid credentials in Authorization header"}
                )
            return self._reply(req, 200, self._whoami())
        if method == "POST" and not authorised:
            return self._reply(req, 401, {"error": "Invalid credentials in Authorization header"})
        if path == "/api/validate-yaml":
            return self._reply(req, 200, {"errors": [], "warnings": []})
        if path == "/api/repos/create":
            payload = json.loads(body)
            repo = f"{payload.get('organization') or self.user}/{payload['name']}"
            if repo in self.repos:
                conflict = {
                    "error": f"You already created this {self.repo_types.get(repo, 'model')} repo",
                    "url": f"{self.url}/{repo}",
                }
                return self._reply(req, 409, conflict)
            self.repos[repo] = {".gitattributes": b"*.safetensors filter=lfs\n"}
            self.repo_types[repo] = payload.get("type") or "model"
            return self._reply(req, 200, {"url": f"{self.url}/{repo}", "name": repo})
        match = REPO_ROUTE.match(path)
        kind = KINDS.get(path.split("/")[2]) if match else None
        if (
            match is None
            or match[1] not in self.repos
            or self.repo_types.get(match[1], "model") != kind
        ):
            return self._reply(req, 404, {"error": f"not found: {path}"})
        files = self.repos[match[1]]
        if match[2] == "tree" and method == "GET":
            return self._reply(req, 200, [self._entry(p, b) for p, b in sorted(files.items())])
        if match[2] == "preupload" and method == "POST":
            wanted = json.loads(body)["files"]
            modes = [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in wanted
            ]
            return self._reply(req, 200, {"files": modes})
        if match[2] == "commit" and method == "POST":
            return self._reply(req, 200, self._commit(match[1], files, body))
        return self._reply(req, 404, {"error": f"not found: {method} {path}"})

    def _whoami(self) -> dict:
        return {
            "type": "user",
            "name": self.user,
            "orgs": [{"name": org} for org in self.orgs],
            "auth": {
                "type": "access_token",
                "accessToken": {"displayName": "t", "role": self.role},
            },
        }

    @staticmethod
    def _entry(path: str, data: bytes) -> dict:
        return {
            "type": "file",
            "path": path,
            "size": len(data),
            "oid": hashlib.sha1(data).hexdigest(),
        }

    def _commit(self, repo: str, files: dict[str, bytes], body: bytes) -> dict:
        commit = {"repo": repo, "summary": None, "added": [], "deleted": []}
        for line in body.splitlines():
            item = json.loads(line)
            value = item["value"]
            if item["key"] == "header":
                commit["summary"] = value["summary"]
            elif item["key"] == "file":
                files[value["path"]] = base64.b64decode(value["content"])
                commit["added"].append(value["path"])
            elif item["key"] == "deletedFile":
                files.pop(value["path"])
                commit["deleted"].append(value["path"])
            else:
                raise ValueError(f"fake hub: unsupported commit item {item['key']!r}")
        self.commits.append(commit)
        oid = hashlib.sha1(body).hexdigest()
        return {
            "commitUrl": f"{self.url}/{repo}/commit/{oid}",
            "commitOid": oid,
            "pullRequestUrl": None,
        }

    @staticmethod
    def _reply(req: BaseHTTPRequestHandler, status: int, payload) -> None:
        data = json.dumps(payload).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)
