"""KdConv (THU-COAI, ACL 2020): one JSON array of ``{"name", "messages": [{"message", "attrs"}]}``.

``attrs`` (``{"name", "attrname", "attrvalue"}``) is the gold knowledge of a message and is absent on
messages without any. The benchmark loaders (``MyLM`` … ``MyMemHRED``) make samples from consecutive
messages, so the layout needs a conversation; a re-exported dialogue keeps every field as it was and
gets the graph's facts about the topics each message first names in ``retrieved_attrs``, beside (never
instead of) its ``attrs``.
"""

from __future__ import annotations

from typing import Any

from kgforge.datasets.kdconv.layouts import ATTR_KEYS, is_attr, kdconv_problem
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue, GoldTriple, SourceDialogue, TripleShape
from kgforge.exports.registry import Format, Layout, register

POOL = "retrieved_attrs"
DIALOGUES = Layout(
    "dialogues", "kdconv", "{train,dev,test}.json: name, messages[].message, messages[].attrs", needs_conversation=True
)


@register
class KdConv(Format):
    name = "kdconv"
    description = "KdConv dialogues (one JSON array)"
    layouts = (DIALOGUES,)
    reads_dialogues = True
    container = "array"
    type_facts = False  # KdConv states no entity types
    # the dialogue's own topic in depth (a KdConv KB entity has 9.5 to 12.7 facts on average: all of them, hubs
    # bounded), each other entity it names as DuConv keeps a second topic
    pool_budgets = (16, 7)
    shape = TripleShape(keys=ATTR_KEYS, by_message=True)

    def detect(self, record: Any) -> Layout | None:
        if isinstance(record, dict) and isinstance(record.get("messages"), list) and "goal" not in record:
            return DIALOGUES
        return None

    def source_dialogue(self, record: Any, line: int, layout: Layout) -> SourceDialogue | str:
        problem = kdconv_problem(record)
        if problem:
            return problem
        messages = record["messages"]
        head, relation, tail = ATTR_KEYS
        gold = [
            GoldTriple(attr[head], attr[relation], attr[tail], ("messages", m, "attrs", a), "attrvalue", m)
            for m, message in enumerate(messages)
            for a, attr in enumerate(message.get("attrs") or ())
        ]
        name = record.get("name")
        return SourceDialogue(
            line,
            layout.kind,
            record,
            topic_names=[name] if isinstance(name, str) else [],
            texts=[m["message"] for m in messages],
            gold=gold,
        )

    def dialogue_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        assert dialogue.source is not None  # a real dialogue, read from its source
        record = dialogue.source.record
        last = len(record["messages"]) - 1
        pools: dict[int, list[Any]] = {}
        for message, attrs in dialogue.by_message.items():  # a topic no message names sits on the first
            pools.setdefault(min(message, last), []).extend(attrs)
        messages = [
            {**message, POOL: pools[m]} if pools.get(m) else message for m, message in enumerate(record["messages"])
        ]
        return [{**record, "messages": messages}]

    def check(self, record: dict[str, Any], layout: Layout) -> list[str]:
        messages = record.get("messages")
        if not (isinstance(messages, list) and messages):
            return ["'messages' must be a non-empty list: the loaders read messages[0]"]
        problems = []
        for m, message in enumerate(messages):
            if not (isinstance(message, dict) and isinstance(message.get("message"), str)):
                problems.append(f"messages[{m}] must be an object with a 'message' string")
            elif "attrs" in message and not (
                isinstance(message["attrs"], list) and all(map(is_attr, message["attrs"]))
            ):
                problems.append(f"messages[{m}].attrs must be a list of {{name, attrname, attrvalue}} strings")
        return problems
