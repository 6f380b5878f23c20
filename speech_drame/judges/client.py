"""An OpenAI-compatible chat client for audio-capable endpoints (``/v1/chat/completions``).

Configuration comes from arguments or the environment (``SPEECH_DRAME_JUDGE_BASE_URL``,
``SPEECH_DRAME_JUDGE_MODEL``, ``SPEECH_DRAME_JUDGE_API_KEY``). Requests that hit 429, a 5xx,
a timeout or a dropped connection are retried with exponential backoff (``backoff * 2**i``
seconds, at most ``max_backoff``), honouring a ``Retry-After`` header when the server sends
one; each retry is announced as it happens (``on_retry``, by default a warning on the
``speech_drame.judges`` logger, which prints to stderr unless logging is configured), e.g.
``retry 2/5 after 2 s: HTTP 503``. Other HTTP errors fail at once. Before the first request
the endpoint is checked once (``GET <base_url>/models`` with a short timeout): when nothing
listens there, :class:`EndpointUnreachable` names the URL at once instead of a run of retries.
With ``cache_dir`` set, every usable response is stored on disk under a hash of the full
request plus the run index, so a rerun sends nothing (and needs no server); an answer the
caller cannot use is not stored (it is asked again next time), and an unreadable entry is
skipped, counted and replaced.
"""

from __future__ import annotations

import email.utils
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import SetupError
from .cache import ResponseCache, request_key
from .parse import message_text

ENV_BASE_URL = "SPEECH_DRAME_JUDGE_BASE_URL"
ENV_MODEL = "SPEECH_DRAME_JUDGE_MODEL"
ENV_API_KEY = "SPEECH_DRAME_JUDGE_API_KEY"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
LOG = logging.getLogger("speech_drame.judges")


class JudgeRequestError(RuntimeError):
    """A request that failed for good: a non-retryable status, or retries exhausted."""

    def __init__(self, url: str, reason: str, status: int | None = None):
        self.url, self.reason, self.status = url, reason, status
        super().__init__(f"{url}: {reason}")


class EndpointUnreachable(SetupError, ConnectionError):
    """Nothing answers at the judge endpoint (found by the check before the first request)."""

    def __init__(self, url: str, reason: str):
        self.url, self.reason = url, reason
        super().__init__(f"{url}: nothing answers ({reason}); is the judge server running there?")


def _unreachable_reason(exc: Exception, timeout: float) -> str:
    """A short reason for a failed connection (requests' messages are long)."""
    import requests

    if isinstance(exc, requests.Timeout):
        return f"no connection within {timeout:g} s"
    text = str(exc)
    for phrase, reason in (
        ("Connection refused", "connection refused"),
        ("Name or service not known", "host name not found"),
        ("nodename nor servname", "host name not found"),
        ("Temporary failure in name resolution", "host name not found"),
        ("No route to host", "no route to host"),
        ("Network is unreachable", "network unreachable"),
    ):
        if phrase in text:
            return reason
    return f"{type(exc).__name__}: {text[:200]}"


@dataclass
class ChatResponse:
    """A response body and how it was obtained."""

    body: dict[str, Any]
    cached: bool
    attempts: int  # HTTP attempts made (0 on a cache hit)


@dataclass
class ClientStats:
    """Counters over the client's lifetime."""

    preflights: int = 0  # endpoint checks (one per client unless one fails)
    requests: int = 0  # HTTP attempts, retries included
    retries: int = 0
    cache_hits: int = 0
    corrupt_cache_entries: int = 0  # unreadable entries skipped (their requests sent again)
    not_cached: int = 0  # answers not stored because the caller could not use them
    waits: list[float] = field(default_factory=list)  # seconds slept before each retry


def _retry_after(value: str | None) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatClient:
    """POSTs chat-completion payloads to ``<base_url>/chat/completions``.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (default: ``$SPEECH_DRAME_JUDGE_BASE_URL``).
        model: model name sent with every request (default: ``$SPEECH_DRAME_JUDGE_MODEL``).
        api_key: bearer token (default: ``$SPEECH_DRAME_JUDGE_API_KEY``; none is sent if unset).
        timeout: seconds to wait for a response before the attempt counts as timed out.
        max_retries: retries after the first attempt for 429/5xx/timeouts/connection errors.
        backoff: first retry delay in seconds, doubled on each retry.
        max_backoff: upper bound of any single wait, ``Retry-After`` included.
        cache_dir: folder of the response cache (``None``: no cache).
        check_timeout: seconds the endpoint check waits for a connection.
        on_retry: called with one line per retry (default: a warning on :data:`LOG`).
    """

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        cache_dir: str | os.PathLike | None = None,
        check_timeout: float = 5.0,
        on_retry: Callable[[str], None] | None = None,
    ):
        base_url = base_url or os.environ.get(ENV_BASE_URL)
        model = model or os.environ.get(ENV_MODEL)
        if not base_url:
            raise ValueError(f"no judge endpoint: pass base_url or set {ENV_BASE_URL}")
        if not model:
            raise ValueError(f"no judge model: pass model or set {ENV_MODEL}")
        if timeout <= 0 or check_timeout <= 0 or min(max_retries, backoff, max_backoff) < 0:
            raise ValueError(
                f"invalid retry settings: timeout={timeout}, check_timeout={check_timeout}, "
                f"max_retries={max_retries}, backoff={backoff}, max_backoff={max_backoff}"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(ENV_API_KEY)
        self.timeout, self.max_retries = timeout, max_retries
        self.backoff, self.max_backoff = backoff, max_backoff
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.check_timeout = check_timeout
        self.on_retry = on_retry or LOG.warning
        self.stats = ClientStats()
        self._session = None
        self._checked = False

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _http(self):
        import requests

        if self._session is None:
            self._session = requests.Session()
        return self._session

    def _post(self, payload: dict[str, Any]):
        return self._http().post(
            self.url, json=payload, headers=self._headers(), timeout=self.timeout
        )

    def check_endpoint(self) -> None:
        """Make sure a server listens at ``base_url`` (once per client; :meth:`complete` calls it
        before its first request). Any HTTP answer counts, error statuses included.

        Raises:
            EndpointUnreachable: no connection (refused, unknown host, no answer within
                ``check_timeout`` seconds).
        """
        import requests

        if self._checked:
            return
        probe = f"{self.base_url}/models"
        self.stats.preflights += 1
        try:
            self._http().get(
                probe, headers=self._headers(), timeout=(self.check_timeout, self.check_timeout)
            ).close()
        except requests.ReadTimeout:
            pass  # connected; the server is slow to answer, which retries handle
        except requests.RequestException as exc:
            raise EndpointUnreachable(
                self.base_url, _unreachable_reason(exc, self.check_timeout)
            ) from None
        self._checked = True

    def complete(
        self,
        payload: dict[str, Any],
        run: int = 0,
        usable: Callable[[dict[str, Any]], object] = message_text,
    ) -> ChatResponse:
        """Send ``payload`` (without ``model``) as run number ``run``; return the JSON body.

        ``usable(body)`` decides whether an answer may be cached: it raises ``ValueError``
        (e.g. :class:`~.parse.AnswerError`) for an answer the caller cannot use (the default
        accepts any non-empty assistant text). Such an answer is returned but not stored.

        Raises:
            JudgeRequestError: on a non-retryable status, a non-JSON body, or when retries run out.
            EndpointUnreachable: the check before the first request found no server.
        """
        import requests

        payload = {"model": self.model, **payload}
        key = request_key({"url": self.url, "payload": payload, "run": run})
        if self.cache is not None:
            body = self.cache.get(key)
            self.stats.corrupt_cache_entries = len(self.cache.corrupt)  # the client's own cache
            if body is not None:
                self.stats.cache_hits += 1
                return ChatResponse(body, cached=True, attempts=0)

        self.check_endpoint()
        attempt = 0
        while True:
            attempt += 1
            self.stats.requests += 1
            retry_after: float | None = None
            try:
                response = self._post(payload)
            except (requests.Timeout, requests.ConnectionError) as exc:
                kind = "timed out" if isinstance(exc, requests.Timeout) else "connection failed"
                reason = f"{kind} after {attempt} attempt(s) ({type(exc).__name__})"
                short, status = kind, None
            else:
                status = response.status_code
                if status == 200:
                    try:
                        body = response.json()
                    except ValueError:
                        raise JudgeRequestError(
                            self.url, f"response is not JSON: {response.text[:200]!r}", status
                        ) from None
                    if self.cache is not None:
                        self._store(key, body, usable)
                    return ChatResponse(body, cached=False, attempts=attempt)
                reason = f"HTTP {status}: {response.text[:200]}"
                short = f"HTTP {status}"
                if status not in RETRY_STATUS:
                    raise JudgeRequestError(self.url, reason, status)
                retry_after = _retry_after(response.headers.get("Retry-After"))
            if attempt > self.max_retries:
                raise JudgeRequestError(
                    self.url, f"gave up after {attempt} attempt(s); last: {reason}", status
                )
            wait = retry_after if retry_after is not None else self.backoff * 2 ** (attempt - 1)
            wait = min(wait, self.max_backoff)
            self.stats.retries += 1
            self.stats.waits.append(wait)
            self.on_retry(f"retry {attempt}/{self.max_retries} after {wait:.3g} s: {short}")
            time.sleep(wait)

    def _store(
        self, key: str, body: dict[str, Any], usable: Callable[[dict[str, Any]], object]
    ) -> None:
        try:
            usable(body)
        except ValueError:  # AnswerError and the protocols' verdict errors
            self.stats.not_cached += 1
            return
        self.cache.put(key, body)  # type: ignore[union-attr]

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
