"""The campaign's web server: each rater's page, the audio of their own tasks, the dashboard.

:func:`make_app` builds a Starlette app around an open :class:`~.store.Campaign`; the CLI
(``speech-drame campaign serve``) runs it with uvicorn. Rules:

- A rater is known only by the token in their link; an unknown token gets the same 404 as a
  wrong URL. A rater reaches only their own tasks (audio included); nothing in a URL is a path.
- A rating is committed (``Campaign.submit`` returned) before its response is sent; the same
  task sent again (a double click, a retry) is answered "already recorded".
- The page never shows other raters' ratings nor a task's kind (repeat and gold are hidden).
- The dashboard and its API need the admin token: ``/admin?token=T`` once (which opens a
  session: a random id in an HttpOnly, SameSite=Strict cookie, ``Secure`` whenever the request
  came over HTTPS, directly or through a proxy on this machine; the token itself is never in a
  cookie) or ``Authorization: Bearer T``; otherwise 401. A session ends after
  :data:`SESSION_SECONDS` or when the admin token is replaced (``campaign admin``).
- A rating request is ``application/json`` (else 415), at most :data:`MAX_BODY` bytes (else
  413); a body that is not JSON of the expected shape, however malformed, gets 400 or 422 with
  one line of why, never a 500. Rater-facing refusals name no clip, no other task or rater and
  not the kind of a task; the server log keeps the detail.
- Every response, static files included, carries the security headers :data:`HEADERS`.
- Pages use relative URLs, so the app works behind a reverse proxy under a prefix (uvicorn's
  ``root_path``).
"""

from __future__ import annotations

import hmac
import html
import io
import json
import logging
import math
import secrets
import shutil
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..extras import require

MAX_BODY = 64 * 1024  # bytes of a rating request
MAX_TASK_ID = 2**63 - 1  # task ids are SQL integers
SESSION_SECONDS = 8 * 3600  # a dashboard session
STATIC = Path(__file__).with_name("static")
ADMIN_COOKIE = "campaign_admin"
CONTEXT_LABELS = {
    "question": "Role and scene (the prompt the speaker answered)",
    "profile": "Character profile",
    "scene": "Local scene",
    "traits": "Character traits",
    "transcript": "Transcript",
}
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # links carry tokens
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
}
PURPOSE = "serving a rating campaign"
log = logging.getLogger(__name__)


class _Refused(Exception):
    """A request refused with ``status`` and a message naming ``field``."""

    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


def context_items(clip) -> list[dict[str, str]]:
    """What the rater reads beside the clip: the context texts, then the transcript if any."""
    items = [{"label": CONTEXT_LABELS[k], "text": v} for k, v in clip.context.items()]
    if clip.extra.get("transcript"):
        items.append({"label": CONTEXT_LABELS["transcript"], "text": clip.extra["transcript"]})
    return items


def wav_bytes(path: str) -> bytes:
    """The first 30 s of a clip, mono, at its own rate, as 16-bit PCM WAV."""
    import soundfile as sf

    from ..audio import SCORED_SECONDS, load_audio

    audio = load_audio(path, sample_rate=None, max_seconds=SCORED_SECONDS, mono=True)
    buf = io.BytesIO()
    sf.write(buf, audio.samples, audio.sample_rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def make_app(campaign, *, bootstrap: int = 1000, test_share: float | None = None) -> Any:
    """The Starlette app serving ``campaign`` (see the module docstring for the routes); the
    dashboard's figures are :func:`.stats.campaign_status` with ``bootstrap`` and
    ``test_share``."""
    require("starlette", PURPOSE)
    from starlette.applications import Starlette
    from starlette.background import BackgroundTask
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import (
        FileResponse,
        HTMLResponse,
        JSONResponse,
        RedirectResponse,
        Response,
    )
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    from ..atomic_io import strict_json
    from . import forms
    from .store import MAX_SUBMISSION_ID_CHARS as MAX_SUBMISSION
    from .store import CampaignError

    rubric = forms.page_rubric(campaign.config)
    plots: dict[str, bytes] = {}  # name -> PNG of the last dashboard, kept in memory
    plot_lock = threading.Lock()
    sessions = AdminSessions(campaign)

    def _json(obj: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(strict_json(obj), status, headers=HEADERS)

    def _rater(token: str):
        rater = campaign.rater_by_token(token)
        if rater is None:
            raise HTTPException(404)
        return rater

    def _task_payload(request: Request, token: str, rater) -> dict[str, Any]:
        task = campaign.current_task(rater)
        if task is None:
            return {"done": True}
        root = request.scope.get("root_path", "")
        return {
            "done": False,
            "task": {
                "id": task.task_id,
                "number": task.number,
                "context": context_items(task.clip),
                "audio": f"{root}/api/r/{token}/audio/{task.task_id}",
            },
            "rubric": rubric,
            "progress": {"clip": task.number, "rated": task.number - 1},
        }

    def _is_admin(request: Request) -> bool:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return campaign.check_admin(auth[7:])
        return sessions.valid(request.cookies.get(ADMIN_COOKIE))

    def _need_admin(request: Request) -> None:
        if not _is_admin(request):
            raise HTTPException(401, "the admin token is missing or wrong")

    def home(request: Request) -> Response:
        return HTMLResponse(
            "<!doctype html><meta charset=utf-8><title>Rating campaign</title>"
            "<p>This is a rating campaign. Please open the personal link you were given.</p>",
            headers=HEADERS,
        )

    def rating_page(request: Request) -> Response:
        _rater(request.path_params["token"])
        return HTMLResponse((STATIC / "rate.html").read_text(encoding="utf-8"), headers=HEADERS)

    def get_task(request: Request) -> Response:
        token = request.path_params["token"]
        return _json(_task_payload(request, token, _rater(token)))

    def get_audio(request: Request) -> Response:
        rater = _rater(request.path_params["token"])
        raw = request.path_params["task_id"]
        if not (raw.isascii() and raw.isdigit() and len(raw) < 19):
            raise HTTPException(404)
        try:
            path = campaign.audio_path_for(rater, int(raw))
        except (CampaignError, KeyError, ValueError):
            raise HTTPException(404) from None
        from ..audio import AudioError

        try:
            data = wav_bytes(path)
        except (AudioError, OSError) as exc:
            log.error("task %s: %s", raw, exc)
            return _json({"error": "the audio of this clip cannot be read"}, 500)
        headers = {**HEADERS, "Cache-Control": "private, max-age=86400"}
        return Response(data, media_type="audio/wav", headers=headers)

    async def _read_json(request: Request) -> Any:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise _Refused(
                415, f"the request must be application/json, not {kind[:60] or 'untyped'}"
            )
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
            raise _Refused(413, f"the request body is over {MAX_BODY // 1024} KB")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise _Refused(413, f"the request body is over {MAX_BODY // 1024} KB")
        try:
            return json.loads(body)
        except RecursionError:
            raise _Refused(
                400, "the request body is not JSON this server reads (nested too deeply)"
            ) from None
        except ValueError as exc:  # invalid JSON, text that is not UTF-8, a number too long
            why = "a number too long" if "digits" in str(exc) else str(exc).splitlines()[0][:120]
            raise _Refused(400, f"the request body is not JSON this server reads ({why})") from None

    def _check_request(obj: Any) -> tuple[int, str, Any]:
        if not isinstance(obj, dict):
            raise _Refused(422, "the request must be a JSON object")
        unknown = sorted(set(obj) - {"task_id", "submission_id", "answers"})
        if unknown:
            raise _Refused(422, f"unknown field {unknown[0]!r}", unknown[0])
        task_id, submission_id = obj.get("task_id"), obj.get("submission_id")
        if (
            not isinstance(task_id, int)
            or isinstance(task_id, bool)
            or not 0 < task_id <= MAX_TASK_ID
        ):
            raise _Refused(422, "task_id must be a task number", "task_id")
        if not isinstance(submission_id, str) or not 0 < len(submission_id) <= MAX_SUBMISSION:
            raise _Refused(
                422, f"submission_id must be a string of 1-{MAX_SUBMISSION} characters",
                "submission_id",
            )  # fmt: skip
        if not isinstance(obj.get("answers"), dict):
            raise _Refused(422, "answers must be a JSON object", "answers")
        try:
            answers = forms.validate_answers(campaign.config, obj["answers"])
        except forms.FormError as exc:
            raise _Refused(422, str(exc), f"answers.{exc.field}") from None
        return task_id, submission_id, answers

    async def post_rating(request: Request) -> Response:
        token = request.path_params["token"]
        rater = await run_in_threadpool(_rater, token)
        try:
            task_id, submission_id, answers = _check_request(await _read_json(request))
        except _Refused as exc:
            return _json({"error": exc.message, "field": exc.field}, exc.status)

        def store() -> dict[str, Any]:
            status = campaign.submit(rater, task_id, submission_id, answers)
            return {"status": status, "next": _task_payload(request, token, rater)}

        try:
            return _json(await run_in_threadpool(store))
        except CampaignError as exc:  # the detail is for the administrator's log only
            log.warning("refused a rating: %s", exc)
            return _json({"error": exc.public, "field": "task_id"}, 409)

    def admin(request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            session = sessions.open(token)
            if session is None:
                raise HTTPException(401, "the admin token is wrong")
            response = RedirectResponse("admin", 303, headers=HEADERS)  # drops it from the URL
            root = request.scope.get("root_path", "")
            response.set_cookie(ADMIN_COOKIE, session, max_age=SESSION_SECONDS, httponly=True,
                                samesite="strict", path=f"{root}/",
                                secure=request.url.scheme == "https")  # fmt: skip
            return response
        _need_admin(request)
        return HTMLResponse(_dashboard(), headers=HEADERS)

    def _dashboard() -> str:
        from . import stats

        report = stats.campaign_status(campaign, bootstrap=bootstrap, test_share=test_share)
        with tempfile.TemporaryDirectory(prefix="campaign-plots-") as work:
            rendered = {p.stem: p.read_bytes() for p in stats.write_plots(report, Path(work))}
        with plot_lock:
            plots.clear()
            plots.update(rendered)
        stamp = int(time.time() * 1000)
        return render_dashboard(
            report,
            campaign.progress()["raters"],
            stats.format_status(report),
            sorted(rendered),
            stamp,
        )

    def admin_status(request: Request) -> Response:
        _need_admin(request)
        from . import stats

        return _json(stats.campaign_status(campaign, bootstrap=bootstrap, test_share=test_share))

    def admin_plot(request: Request) -> Response:
        _need_admin(request)
        with plot_lock:
            data = plots.get(request.path_params["name"])
        if data is None:
            raise HTTPException(404)
        return Response(data, media_type="image/png", headers=HEADERS)

    def admin_export(request: Request) -> Response:
        _need_admin(request)
        from .export import ExportError, export_release

        work = Path(tempfile.mkdtemp(prefix="campaign-export-"))
        try:
            export_release(campaign, work / "release")
            tarball = work / "release.tar.gz"
            with tarfile.open(tarball, "w:gz") as tar:
                tar.add(work / "release", arcname="release")
        except ExportError as exc:
            shutil.rmtree(work, ignore_errors=True)
            return _json({"error": str(exc)}, 409)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return FileResponse(
            tarball,
            media_type="application/gzip",
            filename="campaign-release.tar.gz",
            headers=HEADERS,
            background=BackgroundTask(shutil.rmtree, work, ignore_errors=True),
        )

    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return _json({"error": "not found"}, 404)
        return _json({"error": exc.detail}, exc.status_code)

    routes = [
        Route("/", home),
        Route("/r/{token}", rating_page),
        Route("/api/r/{token}/task", get_task),
        Route("/api/r/{token}/audio/{task_id}", get_audio),
        Route("/api/r/{token}/rating", post_rating, methods=["POST"]),
        Route("/admin", admin),
        Route("/api/admin/status", admin_status),
        Route("/api/admin/plots/{name}.png", admin_plot),
        Route("/api/admin/export.tar.gz", admin_export),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return SecurityHeaders(app)


class SecurityHeaders:
    """ASGI middleware: every response carries :data:`HEADERS` (those it sets itself win)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()
                         if k.lower().encode() not in present]  # fmt: skip
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


class AdminSessions:
    """Dashboard sessions, in the server's memory: a random id per login with the admin token,
    valid for :data:`SESSION_SECONDS` and while the admin token stays the same."""

    def __init__(self, campaign: Any, clock: Any = time.time):
        self.campaign, self.clock = campaign, clock
        self._open: dict[str, tuple[float, str]] = {}  # id -> (expiry, admin token digest)
        self._lock = threading.Lock()

    def open(self, token: str) -> str | None:
        """A new session id for the admin token ``token``, or ``None`` if it is wrong."""
        if not self.campaign.check_admin(token):
            return None
        session = secrets.token_urlsafe(32)
        with self._lock:
            now = self.clock()
            self._open = {k: v for k, v in self._open.items() if v[0] > now}
            self._open[session] = (now + SESSION_SECONDS, self.campaign.admin_digest())
        return session

    def valid(self, session: str | None) -> bool:
        with self._lock:
            entry = self._open.get(session or "")
        return (
            entry is not None
            and entry[0] > self.clock()
            and hmac.compare_digest(entry[1], self.campaign.admin_digest())
        )


def _table(head: list[str], rows: list[list[Any]]) -> str:
    esc = html.escape
    cells = "".join(f"<th scope=col>{esc(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(_cell(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.3f}"
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return "" if value[0] != value[0] else f"[{value[0]:.2f}, {value[1]:.2f}]"
    return str(value)


def render_dashboard(
    report: dict[str, Any], per_rater: dict[str, dict], status_text: str, plots: list[str],
    stamp: int,
) -> str:  # fmt: skip
    """The dashboard page: progress, agreement and ceiling per dimension, raters (every invited
    one, ``per_rater``: name -> ratings by kind), the status text, the plots."""
    from ..schema import RUBRIC_NAMES

    p = report["progress"]
    progress = _table(
        ["clips", "raters per clip", "ratings wanted", "ratings done", "clips complete",
         "clips started"],
        [[p["clips"], p["raters_per_clip"], p["target_ratings"], p["ratings"],
          p["clips_complete"], p["clips_started"]]],
    )  # fmt: skip
    dims = _table(
        ["dimension", "agreement", "interval", "ceiling", "interval", "clips"],
        [
            [RUBRIC_NAMES.get(d, d), e["agreement"], e["agreement_interval"], e["ceiling"],
             e["ceiling_interval"], e["samples_used"]]
            for d, e in report["dimensions"].items()
        ],
    )  # fmt: skip
    checked = report["raters"]
    raters = _table(
        ["rater", "regular", "repeats", "gold", "gold passed"],
        [
            [name, e["regular"], e["repeat"], e["gold"],
             f"{checked[name]['gold_passed'] if name in checked else 0}/{e['gold']}"]
            for name, e in per_rater.items()
        ],
    )  # fmt: skip
    images = "".join(
        f'<figure><img src="api/admin/plots/{html.escape(n)}.png?v={stamp}" alt="{html.escape(n)}">'
        f"<figcaption>{html.escape(n)}</figcaption></figure>"
        for n in plots
    )
    return (
        (STATIC / "admin.html")
        .read_text(encoding="utf-8")
        .format(
            config=html.escape(report["config"]),
            assign=html.escape(report["assign"]),
            progress=progress,
            dimensions=dims if report["dimensions"] else "<p>No clip rated yet.</p>",
            raters=raters if per_rater else "<p>No rater invited yet.</p>",
            evaluators=evaluators_html(report),
            status=html.escape(status_text),
            plots=images,
        )
    )


def _fit_text(fit: dict[str, Any] | None, dim: str, stat: str) -> str:
    if not fit or f"{dim}_{stat}" not in fit:
        return ""
    return f"{fit[f'{dim}_{stat}']:.3f} ({fit[f'{dim}_{stat}_baseline']:.3f})"


def _pearson_keys(table: dict[str, Any]) -> list[str]:
    """The scored dimensions of an alignment table, in its order."""
    return [k.removesuffix("_pearson") for k in table
            if k.endswith("_pearson") and k != "avg_pearson"]  # fmt: skip


def _correlations(table: dict[str, Any], dim: str) -> list[Any]:
    from ..schema import RUBRIC_NAMES

    nan2 = [math.nan, math.nan]
    return [RUBRIC_NAMES.get(dim, dim), table[f"{dim}_pearson"],
            table.get(f"{dim}_pearson_ci", nan2), table[f"{dim}_spearman"],
            table.get(f"{dim}_spearman_ci", nan2)]  # fmt: skip


def _scorer_rows(entry: dict[str, Any], human: dict[str, Any]) -> list[list[Any]]:
    """Per dimension: the correlations, the human ceiling, the fit and the clips of each."""
    table, fit, fit_clips = entry["table"], entry["fit"], entry["fit_clips"]
    rows = []
    for dim in _pearson_keys(table):
        h = human.get(dim, {})
        row = [*_correlations(table, dim), h.get("ceiling", math.nan),
               h.get("ceiling_interval", [math.nan, math.nan])]  # fmt: skip
        if fit is not None:
            row += [_fit_text(fit, dim, "nll"), _fit_text(fit, dim, "jsd")]
        clips = [table[f"{dim}_count"], h.get("samples_used", 0)]
        clips += [fit_clips[dim]] if fit is not None else []
        rows.append(row + [" / ".join(map(str, clips))])
    return rows


def evaluators_html(report: dict[str, Any]) -> str:
    """The dashboard's attached scorers: per scorer its counts and, per dimension, Pearson and
    Spearman with the mean rating and their intervals beside the human ceiling, the
    distribution fit and the clips each rests on; per language when both occur."""
    from ..languages import LANGUAGE_NAMES

    scorers = report.get("scorers") or {}
    share = report.get("scorers_test_share")
    over = "" if share is None else (
        f"<p class=note>Over the rated clips <code>campaign export --test-share {share:g}</code> "
        "puts in test (those a scorer trained on its train split has not seen).</p>")  # fmt: skip
    if not scorers:
        return (
            "<p>No scorer attached. <code>speech-drame campaign attach C.db --scorer SPEC</code> "
            "scores every clip; its agreement with the ratings then shows here.</p>"
        )
    esc = html.escape
    parts = []
    for name, e in scorers.items():
        failed = ", ".join(f"{k} {n}" for k, n in e["failures"].items())
        parts.append(
            f"<h3>{esc(name)} <small>[{esc(e['scorer_id'])}]</small></h3>"
            f"<p class=note>{esc(e['description'])}. {e['scored']} of {e['clips']} clips scored "
            f"(failed: {esc(failed)}; not yet scored: {e['not_scored']}); the figures rest on "
            f"{e['compared']} rated clips with a score.</p>"
        )
        table = e["table"]
        if table is None:
            parts.append("<p>No rated clip with a score yet.</p>")
            continue
        head = ["dimension", "Pearson", "95% interval", "Spearman", "95% interval", "ceiling",
                "95% interval"]  # fmt: skip
        if e["fit"] is not None:
            head += ["NLL (base)", "JSD (base)"]
        head.append("clips")
        parts.append(_table(head, _scorer_rows(e, report["dimensions"])))
        if "content_pass_accuracy" in table:
            parts.append(
                _table(["Content Pass (raters' majority)", "accuracy", "95% interval", "clips"],
                       [["pass probability >= 0.5", table["content_pass_accuracy"],
                         table.get("content_pass_accuracy_ci", [math.nan] * 2),
                         table["content_pass_count"]]])
            )  # fmt: skip
        if e["by_language"]:
            names = ", ".join(f"{LANGUAGE_NAMES.get(k, k)} ({k}) {g['count']} clips"
                              for k, g in e["by_language"].items())  # fmt: skip
            parts.append(f"<details><summary>per language: {esc(names)}</summary>")
        for language, group in e["by_language"].items():
            if group["table"] is None:
                parts.append(f"<p class=note>{esc(language)}: {esc(group['reason'])}</p>")
                continue
            parts.append(f"<h4>{esc(LANGUAGE_NAMES.get(language, language))} ({esc(language)}), "
                         f"{group['count']} clips</h4>")  # fmt: skip
            t = group["table"]
            parts.append(_table(head[:5] + ["clips"], [[*_correlations(t, d), t[f"{d}_count"]]
                                                       for d in _pearson_keys(t)]))  # fmt: skip
        if e["by_language"]:
            parts.append("</details>")
    return over + "".join(parts)
