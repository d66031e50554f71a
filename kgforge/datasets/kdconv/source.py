"""KdConv (THU-COAI, ACL 2020): knowledge bases ``kb_<domain>.json`` and dialogue ``attrs``."""

from __future__ import annotations

from kgforge.core.jsonio import iter_json_container
from kgforge.datasets.kdconv import layouts as layouts  # registers its dialogue layouts
from kgforge.sources.importer import ImportContext, parsed_records, register
from kgforge.sources.names import NameTriples

LICENCE = "Apache-2.0 (KdConv release, github.com/thu-coai/KdConv, its LICENSE)"


@register("kdconv", "KdConv knowledge base kb_<domain>.json: {head: [[head, relation, tail], ...]}", licence=LICENCE)
def import_kb(ctx: ImportContext) -> None:
    names = NameTriples(ctx)
    for location, record in parsed_records(ctx, iter_json_container(ctx.path, dict)):
        if not isinstance(record.value, list):
            ctx.reject(location, f"entry {record.key!r}: expected a list of triples", record.value)
            continue
        if names.add_checked(record.value, location, f"entry {record.key!r}"):
            names.add_type(str(record.key), ctx.schema.head_type)  # a key of the KB's object: never None
        ctx.accept()
    names.emit()


@register(
    "kdconv-dialogues",
    "KdConv dialogue file ({train,dev,test}.json): the attrs triples of each utterance",
    licence=LICENCE,
)
def import_dialogue_attrs(ctx: ImportContext) -> None:
    names = NameTriples(ctx)
    for location, record in parsed_records(ctx, iter_json_container(ctx.path, list)):
        problem = _dialogue_problem(record.value)
        if problem:
            ctx.reject(location, problem, record.value)
            continue
        attrs = [a for message in record.value["messages"] for a in message.get("attrs") or []]
        names.add_checked(attrs, location, f"dialogue {record.value.get('name')!r}: attr", _attr_triple)
        ctx.accept()
    names.emit()


def _dialogue_problem(value: object) -> str | None:
    if not isinstance(value, dict):
        return "expected a dialogue object with 'name' and 'messages'"
    if not isinstance(value.get("messages"), list):
        return "dialogue is missing its 'messages' list"
    if not all(isinstance(m, dict) for m in value["messages"]):
        return "each message must be an object"
    if not all(isinstance(m.get("attrs") or [], list) for m in value["messages"]):
        return "a message's 'attrs' must be a list"
    return None


def _attr_triple(attr: object) -> object:
    """``{"name", "attrname", "attrvalue"}`` → ``[head, relation, tail]`` (anything else as it is, to be rejected)."""
    return [attr.get("name"), attr.get("attrname"), attr.get("attrvalue")] if isinstance(attr, dict) else attr
