"""What can go wrong asking a model: the exchange itself (:class:`LLMError`), or a reply that does not say what
was asked for (:class:`BadReply`)."""

from kgforge.core.errors import KgforgeError


class LLMError(KgforgeError):
    """The endpoint could not be reached, ran past the deadline, or did not answer in the OpenAI chat shape."""


class BadReply(ValueError):
    """A reply that does not say what was asked for (the caller quarantines it and falls back)."""
