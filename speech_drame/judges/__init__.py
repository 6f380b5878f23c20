"""Zero/few-shot audio-LLM judges served over OpenAI-compatible chat endpoints.

``requests`` and ``datasets`` are imported only when a request is sent or exemplars are read.
"""

from .chat_judge import (
    FAILED_AS,
    ChatJudge,
    JudgeResult,
    LogprobJudge,
    RunOutput,
    check_failed_as,
    make_item,
)
from .client import ChatClient, ChatResponse, EndpointUnreachable, JudgeRequestError
from .exemplars import EXEMPLAR_STRATEGIES, ExemplarPool, gold_answer, select_exemplars
from .parse import AnswerError, filled_json_answer, label_distribution, parse_json_answer
from .prompt import (
    JudgeItem,
    build_dimension_messages,
    build_messages,
    default_rubric,
    wav_base64,
)

__all__ = [
    "EXEMPLAR_STRATEGIES",
    "FAILED_AS",
    "AnswerError",
    "ChatClient",
    "ChatJudge",
    "ChatResponse",
    "EndpointUnreachable",
    "ExemplarPool",
    "JudgeItem",
    "JudgeRequestError",
    "JudgeResult",
    "LogprobJudge",
    "RunOutput",
    "build_dimension_messages",
    "build_messages",
    "check_failed_as",
    "default_rubric",
    "filled_json_answer",
    "gold_answer",
    "label_distribution",
    "make_item",
    "parse_json_answer",
    "select_exemplars",
    "wav_base64",
]
