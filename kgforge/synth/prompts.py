"""The prompt templates of ``kgforge synth``: one TOML file per style (``prompts/<style>.toml``), a table per
language with the keys ``system``, ``draft``, ``retry`` and ``repair``; a user's own file (``--prompts``) has
the same shape. Templates are filled with :meth:`str.format` and hold placeholders only: an unknown placeholder,
a missing key or a template without what it must show is refused with the file and the key, as qa's templates
are (``kgforge/qa/templates.py``)."""

from __future__ import annotations

import hashlib
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.limits import read_whole_text

DRAFT_PLACEHOLDERS = frozenset(
    {"first", "second", "opener", "topic_a", "topic_b", "topics", "goal", "knowledge", "turns", "profile", "situation"}
)
ALLOWED = {
    "system": frozenset(),
    "draft": DRAFT_PLACEHOLDERS,
    "retry": frozenset({"problem"}),
    "repair": frozenset({"index", "speaker", "text", "verdict", "reason"}),
}
REQUIRED = {
    "system": frozenset(),
    "draft": frozenset({"knowledge"}),  # a reader of the prompt log (and a scripted model) finds the triples
    "retry": frozenset({"problem"}),
    "repair": frozenset({"index", "text", "verdict"}),
}


@dataclass(frozen=True)
class Prompts:
    """One style's templates in one language, where they came from and their hash (for the manifest)."""

    source: str  # the bundled file's name or the user's path
    language: str
    templates: dict[str, str]
    sha256: str  # of the chosen table's templates, in key order

    def render(self, key: str, **values: Any) -> str:
        return self.templates[key].format(**{name: values[name] for name in _names(self.templates[key])})


def load_prompts(bundled: Path, language: str, path: Path | None = None) -> Prompts:
    """The templates in ``language`` (``zh``, ``en``; other tags fall back to their first two letters, then to
    ``en``): of the user's ``path``, else of the style's ``bundled`` file (in its dataset's room)."""
    source, text = str(path or bundled), read_whole_text(path or bundled, "prompts")
    try:
        tables = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not TOML ({exc})") from None
    chosen = next((tag for tag in (language, language[:2], "en") if isinstance(tables.get(tag), dict)), None)
    if chosen is None:
        raise InputError(f"{source}: no [{language}] table of prompts (nor [en])")
    templates = {key: _template(tables[chosen], key, f"{source}: [{chosen}].{key}") for key in ALLOWED}
    digest = hashlib.sha256("\0".join(templates[key] for key in ALLOWED).encode("utf-8")).hexdigest()
    return Prompts(source, chosen, templates, digest)


def _template(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: missing (a non-empty string is needed)")
    try:
        names = _names(value)
    except ValueError as exc:
        raise InputError(f"{where}: {exc} (write a literal brace as {{{{ or }}}})") from None
    unknown = sorted(names - ALLOWED[key])
    if unknown:
        allowed = ", ".join("{" + n + "}" for n in sorted(ALLOWED[key])) or "none"
        raise InputError(f"{where}: unknown placeholder {{{unknown[0]}}} (allowed: {allowed})")
    missing = sorted(REQUIRED[key] - names)
    if missing:
        raise InputError(f"{where}: the template must show {{{missing[0]}}}")
    return value


def _names(template: str) -> set[str]:
    names = set()
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"{{{name}}} is not a plain placeholder")
        names.add(name)
    return names
