"""Asking a model, for every stage that does (qa's selection, templates and judge; translate; what comes next):
one client for an OpenAI-compatible chat endpoint, with a typed request and response (usage included), a
cache by request hash that a hit never re-sends, counts, safe use from many threads, and bounds on every
exchange (one deadline, a reply cap on the bytes sent and decoded, a nesting depth).

Modules: client (LLMClient, LLMSettings, ChatRequest, ChatResponse, Usage, json_reply), transport (one bounded
HTTP POST: deadline watchdog, gzip/deflate decoding under the cap), cache (ReplyCache), limits (the caps and
Deadline), errors (LLMError, BadReply). It imports only ``kgforge.core``; the prompts and checks of each use
stay with their stage.
"""

from kgforge.llm.client import (
    DEFAULT_KEY_ENV,
    ChatMessage,
    ChatRequest,
    ChatResponse,
    LLMClient,
    LLMReport,
    LLMSettings,
    Usage,
    json_reply,
)
from kgforge.llm.errors import BadReply, LLMError
from kgforge.llm.limits import MAX_ATTEMPTS, MAX_REPLY_BYTES, MAX_REPLY_DEPTH

__all__ = [
    "DEFAULT_KEY_ENV",
    "MAX_ATTEMPTS",
    "MAX_REPLY_BYTES",
    "MAX_REPLY_DEPTH",
    "BadReply",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "LLMClient",
    "LLMError",
    "LLMReport",
    "LLMSettings",
    "Usage",
    "json_reply",
]
