"""Arguments shared by the pairwise protocol commands (``paraling``, ``trace``)."""

from __future__ import annotations

import argparse


def add_chat_arguments(parser: argparse.ArgumentParser) -> None:
    """Endpoint options of the chat judges."""
    group = parser.add_argument_group("chat judge")
    group.add_argument(
        "--endpoint",
        help="base URL, e.g. http://127.0.0.1:8000/v1 (default: $SPEECH_DRAME_JUDGE_BASE_URL)",
    )
    group.add_argument("--model", help="model name (default: $SPEECH_DRAME_JUDGE_MODEL)")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    group.add_argument("--max-retries", type=int, default=5, help="retries on 429/5xx/timeouts")
    group.add_argument("--cache-dir", help="folder of the response cache (default: none)")
    group.add_argument("--temperature", type=float, default=0.0, help="sampling temperature")


def add_feature_cache_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--feature-cache",
        default="default",
        help="feature cache folder (default: $SPEECH_DRAME_CACHE or ~/.cache/speech-drame/features)",
    )


def chat_client(args: argparse.Namespace):
    from ..judges import ChatClient

    return ChatClient(
        args.endpoint,
        args.model,
        timeout=args.timeout,
        max_retries=args.max_retries,
        cache_dir=args.cache_dir,
    )
