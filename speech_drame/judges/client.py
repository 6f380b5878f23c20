"""An OpenAI-compatible chat client for audio-capable endpoints (``/v1/chat/completions``).

Configuration comes from arguments or the environment (``SPEECH_DRAME_JUDGE_BASE_URL``,
``SPEECH_DRAME_JUDGE_MODEL``, ``SPEECH_DRAME_JUDGE_API_KEY``). Requests that hit 429, a 5xx,
a timeout or a dropped connection are retried with exponential backoff (``backoff * 2**i``
seconds, at most ``max_backoff``), honouring a ``Retry-After`` header when the server sends
one. Other HTTP errors fail at once. With ``cache_dir`` set, every response is stored on disk
under a hash of the full request plus the run index, so a rerun sends nothing.
"""

from __future__ import annotations

import email.utils
import os
import time
from dataclasses import dataclass, field
from typing import Any

from .cache import ResponseCache, request_key

ENV_BASE_URL = "SPEECH_DRAME_JUDGE_BASE_URL"
ENV_MODEL = "SPEECH_DRAME_JUDGE_MODEL"
ENV_API_KEY = "SPEECH_DRAME_JUDGE_API_KEY"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class JudgeRequestError(RuntimeError):
    """A request that failed for good: a non-retryable status, or retries exhausted."""

    def __init__(self, url: str, reason: str, status: int | None = None):
        self.url, self.reason, self.status = url, reason, status
        super().__init__(f"{url}: {reason}")


@dataclass
class ChatResponse:
    """A response body and how it was obtained."""

    body: dict[str, Any]
    cached: bool
    attempts: int  # HTTP attempts made (0 on a cache hit)


@dataclass
class ClientStats:
    """Counters over the client's lifetime."""

    requests: int = 0  # HTTP attempts, retries included
    retries: int = 0
    cache_hits: int = 0
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
    ):
        base_url = base_url or os.environ.get(ENV_BASE_URL)
        model = model or os.environ.get(ENV_MODEL)
        if not base_url:
            raise ValueError(f"no judge endpoint: pass base_url or set {ENV_BASE_URL}")
        if not model:
            raise ValueError(f"no judge model: pass model or set {ENV_MODEL}")
        if timeout <= 0 or max_retries < 0 or backoff < 0 or max_backoff < 0:
            raise ValueError(
                f"invalid retry settings: timeout={timeout}, max_retries={max_retries}, "
                f"backoff={backoff}, max_backoff={max_backoff}"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(ENV_API_KEY)
        self.timeout, self.max_retries = timeout, max_retries
        self.backoff, self.max_backoff = backoff, max_backoff
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.stats = ClientStats()
        self._session = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _post(self, payload: dict[str, Any]):
        import requests

        if self._session is None:
            self._session = requests.Session()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return self._session.post(self.url, json=payload, headers=headers, timeout=self.timeout)

    def complete(self, payload: dict[str, Any], run: int = 0) -> ChatResponse:
        """Send ``payload`` (without ``model``) as run number ``run``; return the JSON body.

        Raises:
            JudgeRequestError: on a non-retryable status, a non-JSON body, or when retries run out.
        """
        import requests

        payload = {"model": self.model, **payload}
        key = request_key({"url": self.url, "payload": payload, "run": run})
        if self.cache is not None and (body := self.cache.get(key)) is not None:
            self.stats.cache_hits += 1
            return ChatResponse(body, cached=True, attempts=0)

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
                status = None
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
                        self.cache.put(key, body)
                    return ChatResponse(body, cached=False, attempts=attempt)
                reason = f"HTTP {status}: {response.text[:200]}"
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
            time.sleep(wait)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
