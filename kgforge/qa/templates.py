"""Question templates: the file format, the bundled zh and en sets, lookup and rendering.

A template file is TOML (see ``kgforge/qa/templates/zh.toml`` and docs/qa.md)::

    language = "zh"
    [wh]                      # the question word for what a predicate asks for
    who = "谁"  when = "什么时候"  where = "哪里"  what = "什么"
    [types.film]              # per type: its name and the phrases that refer back to an entity of it
    name = "电影"
    refs = ["这部电影", "这部片子", "它"]
    [disfluency]              # the voice phenomena's words
    fillers = ["嗯，", …]  apologies = […]  thanks = […]  takeback = "{false_start}……不对，"  repetition = "{head}……"
    [[templates]]
    kind = "simple"           # simple | complex (list answer) | qualified | group (predicates asked together)
    interaction = "voice"     # voice | text
    reference = "name"        # name: the entity is named ({subject}); deixis: referred to ({ref})
    type = "*"                # a type id (star/演员 falls back to star, then *) or *
    predicate = "*"           # a predicate: IRI, schema relation id or Wikidata id (P57); or *
    texts = ["{subject}的{predicate}是{wh}？", …]   # the variants, three in the bundled sets

Placeholders: ``{subject}`` ``{ref}`` ``{type}`` ``{predicate}`` ``{predicates}`` (a group's names)
``{wh}`` ``{qualifier_predicate}`` ``{qualifier}`` (a qualifier of the fact: never the answer) and
``{previous}`` (the previous turn's answer: another turn's object). The most specific template wins:
(type, predicate), (base type, predicate), (person, predicate), (*, predicate), then the same with *
for the predicate: a predicate's own wording beats a type's generic one.
"""

from __future__ import annotations

import json
import string
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.limits import read_whole_text
from kgforge.qa.graph import UNTYPED

KINDS = ("simple", "complex", "qualified", "group")
INTERACTIONS = ("voice", "text")
REFERENCES = ("name", "deixis")
WH = ("who", "when", "where", "what")
PLACEHOLDERS = {
    "subject",
    "ref",
    "type",
    "predicate",
    "predicates",
    "wh",
    "qualifier_predicate",
    "qualifier",
    "previous",
}
ANY = "*"
PERSON = "person"


@dataclass(frozen=True)
class TypeWords:
    name: str
    refs: tuple[str, ...]


@dataclass
class TemplateSet:
    language: str
    wh: dict[str, str]
    types: dict[str, TypeWords]
    disfluency: dict[str, Any]
    entries: dict[tuple[str, str, str, str, str], list[str]] = field(default_factory=dict)
    source: str = ""
    _found: dict[tuple, list[str]] = field(default_factory=dict, repr=False)

    def texts(
        self, kind: str, interaction: str, reference: str, type_id: str, predicate_keys: tuple[str, ...]
    ) -> list[str]:
        """The variants for a turn: the most specific (type, predicate) entry there is."""
        key = (kind, interaction, reference, type_id, predicate_keys)
        if key not in self._found:
            self._found[key] = self._lookup(*key)
        return self._found[key]

    def _lookup(
        self, kind: str, interaction: str, reference: str, type_id: str, predicate_keys: tuple[str, ...]
    ) -> list[str]:
        for predicate in (*predicate_keys, ANY):
            for type_key in (*type_ancestry(type_id), ANY):
                found = self.entries.get((kind, interaction, reference, type_key, predicate))
                if found:
                    return found
        raise InputError(
            f"{self.source}: no {kind} template for {interaction}/{reference} (add one with "
            f'type = "*" and predicate = "*")'
        )

    def type_words(self, type_id: str, label: str) -> TypeWords:
        for key in (*type_ancestry(type_id), ANY):
            if key in self.types:
                words = self.types[key]
                return TypeWords(words.name if key != ANY else label, words.refs)
        return TypeWords(label, (label,))


def type_ancestry(type_id: str) -> tuple[str, ...]:
    """``star/演员`` → (``star/演员``, ``star``, ``person``): a type refined by occupation falls back to its
    base type, then to ``person`` (an untyped entity with an occupation is a person, not an ``entity``)."""
    if "/" not in type_id:
        return (type_id,)
    base = type_id.split("/", 1)[0]
    return (type_id, base, PERSON) if base != UNTYPED else (type_id, PERSON)


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def check_template(text: str, kind: str, reference: str, predicate: str) -> str | None:
    """Why ``text`` cannot be a template of this kind and reference, or None."""
    try:
        fields = [
            (name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(text) if name is not None
        ]
    except ValueError as exc:
        return f"unbalanced braces ({exc})"
    # only bare names: a format spec ({subject:>60000000} writes 60 MB, {ref:d} fails on text), a conversion
    # or attribute and index access ({x.__class__}, {x[0]}) is code run on the graph's values, not a question
    for name, spec, conversion in fields:
        if spec or conversion or not name.isidentifier():
            written = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            return (
                f"{written} is not a bare placeholder name: templates allow only {{name}}, without a format "
                "spec, a conversion, or attribute or index access"
            )
    used = {name for name, _, _ in fields}
    unknown = used - PLACEHOLDERS
    if unknown:
        return f"unknown placeholder(s) {', '.join('{' + u + '}' for u in sorted(unknown))}"
    if reference == "name" and "subject" not in used:
        return "a name template must contain {subject}"
    if reference == "deixis" and ("ref" not in used or "subject" in used):
        return "a deixis template must contain {ref} and not {subject}"
    if kind == "qualified" and "qualifier" not in used:
        return "a qualified template must contain {qualifier}"
    if kind == "group" and predicate == ANY and "predicates" not in used:
        return "a group template for any predicates (*) must contain {predicates}"
    if kind != "group" and predicate == ANY and "predicate" not in used:
        return "a template for any predicate (*) must contain {predicate}"
    return None


def load_templates(path: Path | str | None = None, language: str = "zh") -> TemplateSet:
    """A template file, or the bundled set of ``language`` (zh, en; other languages use en)."""
    if path is None:
        return parse_templates(bundled_template_text(language), f"bundled {bundled_name(language)}")
    return parse_templates(read_whole_text(path, "template file"), str(path))


def bundled_name(language: str) -> str:
    return f"{'zh' if language.startswith('zh') else 'en'}.toml"


def bundled_template_text(language: str) -> str:
    """The bundled template file of ``language`` (package data, in the wheel too)."""
    return (resources.files("kgforge.qa") / "templates" / bundled_name(language)).read_text(encoding="utf-8")


def parse_templates(text: str, source: str) -> TemplateSet:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: invalid TOML: {exc}") from None
    wh = raw.get("wh", {})
    if not isinstance(wh, dict) or set(WH) - set(wh):
        raise InputError(f"{source}: [wh] must give {', '.join(WH)}")
    types = {}
    for type_id, spec in (raw.get("types") or {}).items():
        refs = spec.get("refs") if isinstance(spec, dict) else None
        if (
            not isinstance(spec, dict)
            or not isinstance(spec.get("name"), str)
            or not refs
            or not all(isinstance(r, str) and r for r in refs)
        ):
            raise InputError(f"{source}: types.{type_id} needs a name and a non-empty list of refs")
        types[type_id] = TypeWords(spec["name"], tuple(refs))
    templates = TemplateSet(raw.get("language", ""), dict(wh), types, dict(raw.get("disfluency") or {}), source=source)
    for index, entry in enumerate(raw.get("templates") or []):
        _add_entry(templates, entry, f"{source}: templates[{index}]")
    return templates


def _add_entry(templates: TemplateSet, entry: Any, where: str) -> None:
    if not isinstance(entry, dict):
        raise InputError(f"{where} must be a table")
    for key, allowed in (("kind", KINDS), ("interaction", INTERACTIONS), ("reference", REFERENCES)):
        if entry.get(key) not in allowed:
            raise InputError(f"{where}.{key} must be one of {', '.join(allowed)}, got {entry.get(key)!r}")
    texts = entry.get("texts")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
        raise InputError(f"{where}.texts must be a non-empty list of strings")
    type_id, predicate = str(entry.get("type", ANY)), str(entry.get("predicate", ANY))
    for number, text in enumerate(texts):
        problem = check_template(text, entry["kind"], entry["reference"], predicate)
        if problem:
            raise InputError(f"{where}.texts[{number}] {text!r}: {problem}")
    entry_key = (entry["kind"], entry["interaction"], entry["reference"], type_id, predicate)
    templates.entries.setdefault(entry_key, []).extend(texts)


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def template_entries_toml(entries: list[dict[str, Any]]) -> str:
    """``[[templates]]`` tables for :func:`parse_templates`."""
    blocks = []
    for entry in entries:
        lines = ["[[templates]]"] + [
            f"{key} = {toml_string(entry[key])}" for key in ("kind", "interaction", "reference", "type", "predicate")
        ]
        lines.append("texts = [" + ", ".join(toml_string(t) for t in entry["texts"]) + "]")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
