"""KdConv's dialogue layout (``kdconv``: a JSON array of ``{"name", "messages"}`` dialogues), registered on
:data:`kgforge.sources.dialogue_layouts.DIALOGUE_LAYOUTS` (the room's ``source`` part imports this module)."""

from __future__ import annotations

from typing import Any

from kgforge.core.limits import utterances_problem
from kgforge.sources.dialogue_layouts import DIALOGUE_LAYOUTS, DialogueLayout

KDCONV = "kdconv"
ATTR_KEYS = ("name", "attrname", "attrvalue")


def is_attr(attr: Any) -> bool:
    """A KdConv ``attrs`` entry: an object with ``name``, ``attrname`` and ``attrvalue`` strings."""
    return isinstance(attr, dict) and all(isinstance(attr.get(key), str) for key in ATTR_KEYS)


def kdconv_problem(record: Any) -> str | None:
    """KdConv: ``{"name", "messages": [{"message", "attrs"?}]}``, ``attrs`` where present a list of
    ``{name, attrname, attrvalue}`` string objects."""
    if not (isinstance(record, dict) and isinstance(record.get("messages"), list)):
        return "not a KdConv dialogue: needs a 'messages' list"
    messages = record["messages"]
    too_long = utterances_problem(len(messages))
    if too_long:
        return too_long
    for m, message in enumerate(messages):
        if not (isinstance(message, dict) and isinstance(message.get("message"), str)):
            return "each message must be an object with a 'message' string"
        if "attrs" in message and not (isinstance(message["attrs"], list) and all(map(is_attr, message["attrs"]))):
            return f"messages[{m}].attrs must be a list of {{name, attrname, attrvalue}} string objects"
    if "name" in record and not isinstance(record["name"], str):
        return "'name' must be a string (the dialogue's topic)"
    return None


DIALOGUE_LAYOUTS.register(KDCONV, DialogueLayout(kdconv_problem, objects=False), description="KdConv dialogues")
