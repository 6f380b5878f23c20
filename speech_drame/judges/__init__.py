"""Zero/few-shot audio-LLM judges served over OpenAI-compatible chat endpoints.

``requests`` and ``datasets`` are imported only when a request is sent or exemplars are read.
"""

from .chat_judge import ChatJudge, JudgeResult, LogprobJudge, RunOutput, make_item
from .client import ChatClient, ChatResponse, EndpointUnreachable, JudgeRequestError
from .exemplars import gold_answer, select_exemplars
from .parse import AnswerError, label_distribution, parse_json_answer
from .prompt import JudgeItem, build_dimension_messages, build_messages, wav_base64

__all__ = [
    "AnswerError",
    "ChatClient",
    "ChatJudge",
    "ChatResponse",
    "EndpointUnreachable",
    "JudgeItem",
    "JudgeRequestError",
    "JudgeResult",
    "LogprobJudge",
    "RunOutput",
    "build_dimension_messages",
    "build_messages",
    "gold_answer",
    "label_distribution",
    "make_item",
    "parse_json_answer",
    "select_exemplars",
    "wav_base64",
]
