"""Who may push: the token a push uses, checked against the Hub (``whoami``) before any long
work, and the command-line options an access error points to."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import HubAccessError
from .refs import is_repo_id


@dataclass(frozen=True)
class PushFlags:
    """The command-line options a push error message points to."""

    push: str
    dry_run: str
    token_hint: str  # how to give a token, e.g. "set HF_TOKEN or run `hf auth login`"


CLI_TOKEN_HINT = "set HF_TOKEN or run `hf auth login`"


def cli_push_token(repo_id: str, push: str, dry_run: bool) -> str | None:
    """For a CLI push named ``push`` (an option or a command): refuse a ``repo_id`` that is not
    ``ORG/NAME``; the checked token of a real push (:func:`check_push_access`), ``None`` for a
    dry run, which needs none."""
    if not is_repo_id(repo_id):
        raise ValueError(f"{push} needs a Hub id ORG/NAME, not {repo_id!r}")
    if dry_run:
        return None
    return check_push_access(repo_id, PushFlags(push, "--dry-run", CLI_TOKEN_HINT))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_push_access(repo_id: str, flags: PushFlags, token: str | None = None) -> str:
    """The token to push ``repo_id`` with, checked against the Hub (``whoami``) before training.

    ``token`` defaults to the one ``huggingface_hub`` finds (``HF_TOKEN``, ``hf auth login``).

    Raises:
        HubAccessError: offline mode, no token, a token the Hub rejects or that is read-only,
            a namespace that is neither the token's user nor one of its organisations, or an
            endpoint that cannot be reached.
    """
    import httpx2  # huggingface_hub 2's HTTP client: its transport errors
    from huggingface_hub import HfApi, constants, get_token
    from huggingface_hub.errors import HfHubHTTPError

    endpoint = constants.ENDPOINT
    if constants.HF_HUB_OFFLINE:
        raise HubAccessError(
            f"{flags.push} needs the network, but HF_HUB_OFFLINE is set: unset it, or use "
            f"{flags.dry_run} to list the files"
        )
    token = token or get_token()
    if not token:
        raise HubAccessError(
            f"{flags.push} needs a Hugging Face token with write access: {flags.token_hint} "
            f"(or use {flags.dry_run})"
        )
    try:
        me = HfApi(endpoint=endpoint, token=token).whoami()
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        if status == 401:
            raise HubAccessError(
                f"the Hugging Face token was rejected by {endpoint} (401): {flags.token_hint}"
            ) from None
        raise HubAccessError(f"cannot check the token at {endpoint}: {_first_line(exc)}") from None
    except httpx2.TransportError as exc:
        raise HubAccessError(
            f"cannot reach {endpoint} ({type(exc).__name__}: {_first_line(exc)}): check the "
            f"network or HF_ENDPOINT, or use {flags.dry_run}"
        ) from None
    user = me.get("name", "?")
    if me.get("auth", {}).get("accessToken", {}).get("role") == "read":
        raise HubAccessError(
            f"the Hugging Face token of {user} is read-only: {flags.push} needs write access"
        )
    namespace = repo_id.split("/")[0]
    owners = {user} | {org.get("name") for org in me.get("orgs", [])}
    if namespace not in owners:
        raise HubAccessError(
            f"{user} cannot push to {repo_id}: {namespace} is neither that user nor one of its "
            f"organisations ({', '.join(sorted(o for o in owners if o))})"
        )
    return token
