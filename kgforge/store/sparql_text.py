"""Reading SPARQL text as a person wrote it: its prefixes, the role each variable plays, what an error
from the parser means, and IRIs shortened to prefixed names for display.

Nothing here changes a query: values still reach it only as substitutions (``kgforge.store.query``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from kgforge.core.vocab import CLASS, ENTITY, GRAPH, ONTO, RDFS_LABEL, RELATION, SKOS_ALT_LABEL

# The prefixes every query may use undeclared (passed to Oxigraph) and the table view shortens IRIs with.
PREFIXES = {
    "kg": ONTO,
    "kgr": RELATION,
    "kge": ENTITY,
    "kgc": CLASS,
    "kgg": GRAPH,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}

# Comments, string literals and IRI references, as SPARQL's lexer reads them (long strings first).
NOT_CODE = re.compile(
    r'''
    \#[^\r\n]*
  | """(?:[^"\\]|\\.|"(?!""))*"""
  | '{3}(?:[^'\\]|\\.|'(?!''))*'{3}
  | "(?:[^"\\\r\n]|\\.)*"
  | '(?:[^'\\\r\n]|\\.)*'
  | <[^<>"{}|^`\\\x00-\x20]*>
''',
    re.VERBOSE,
)
_DECLARATION = re.compile(r"\bPREFIX\s+([A-Za-z][\w.-]*)?:\s*<([^<>\s]*)>", re.IGNORECASE)
_PREFIXED_NAME = re.compile(r"(?<![\w?$:.\-])([A-Za-z](?:[\w.-]*\w)?)?:(?=[\w%\\:]|$|\s)")
_UPDATE_WORDS = {"insert", "delete", "load", "clear", "drop", "create", "add", "move", "copy", "with"}
_ERROR_AT = re.compile(r"^error at (\d+):(\d+): ")
_LABEL_PREDICATES = {RDFS_LABEL, SKOS_ALT_LABEL}


def code_of(sparql: str) -> str:
    """``sparql`` with its comments, strings and IRIs blanked out: the words and punctuation only."""
    return NOT_CODE.sub(" ", sparql)


def declared_prefixes(sparql: str) -> dict[str, str]:
    """The ``PREFIX p: <ns>`` declarations of ``sparql`` (comments ignored)."""
    without_comments = re.sub(r"#[^\r\n]*", " ", sparql)
    return {prefix or "": namespace for prefix, namespace in _DECLARATION.findall(without_comments)}


def shorten(iri: str, prefixes: dict[str, str] = PREFIXES) -> str:
    """``iri`` as ``prefix:local`` with the longest namespace it starts with, else ``<iri>``;
    :func:`expand` gives ``iri`` back."""
    best = max(
        (ns for ns in prefixes.values() if ns and iri.startswith(ns) and len(iri) > len(ns)), key=len, default=None
    )
    if best is None:
        return f"<{iri}>"
    prefix = min(p for p, ns in prefixes.items() if ns == best)
    return f"{prefix}:{iri[len(best) :]}"


def expand(name: str, prefixes: dict[str, str] = PREFIXES) -> str:
    """The IRI a :func:`shorten` result stands for."""
    if name.startswith("<") and name.endswith(">"):
        return name[1:-1]
    prefix, _, local = name.partition(":")
    return prefixes[prefix] + local


def is_update(sparql: str) -> bool:
    """Whether ``sparql`` is a SPARQL Update (INSERT, DELETE, LOAD, CLEAR, …) rather than a query."""
    code = re.sub(r"\b(?:PREFIX\s+[\w.-]*:|BASE)\s*", " ", code_of(sparql), flags=re.IGNORECASE)
    words = re.findall(r"[A-Za-z]+", code)
    return bool(words) and words[0].lower() in _UPDATE_WORDS


def unknown_prefixes(sparql: str) -> list[str]:
    """Prefixes ``sparql`` uses but neither declares nor finds among :data:`PREFIXES`."""
    known = PREFIXES.keys() | declared_prefixes(sparql).keys() | {"_"}
    code = re.sub(r"\bPREFIX\s+[\w.-]*:", " ", code_of(sparql), flags=re.IGNORECASE)
    used = dict.fromkeys(match.group(1) or "" for match in _PREFIXED_NAME.finditer(code))
    return [prefix for prefix in used if prefix not in known]


def explain_error(message: str, sparql: str) -> str:
    """What a parser error from Oxigraph means for the person who wrote ``sparql``."""
    if is_update(sparql):
        return (
            "this is a SPARQL Update: the store is read-only here (queries only). The graph changes by "
            "rebuilding it: `kgforge build DOMAIN --source KIND:PATH` (add or fix a source), `kgforge "
            "derive DOMAIN` (derived graphs), `kgforge import` / `kgforge link` (extend the published build)"
        )
    where = _ERROR_AT.match(message)
    if where is None:
        return message
    line, column = int(where.group(1)), int(where.group(2))
    unknown = unknown_prefixes(sparql)
    if "Prefix not found" in message and unknown:
        names = ", ".join(f"'{p}:'" for p in unknown)
        return (
            f"unknown prefix {names} (line {line}) — known prefixes: "
            f"{', '.join(f'{p}:' for p in {**PREFIXES, **declared_prefixes(sparql)})}; declare it with "
            f"PREFIX {unknown[0]}: <http://…>"
        )
    lines = sparql.splitlines() or [""]
    shown = lines[line - 1] if 0 < line <= len(lines) else ""
    detail = message[where.end() :]
    if len(detail) > 200:
        detail = detail[:200].rsplit(",", 1)[0] + ", …"
    return f"SPARQL syntax error at line {line}, column {column}: {detail}\n  {shown}\n  {' ' * max(column - 1, 0)}^"


@dataclass(frozen=True)
class VariableRoles:
    """Where a query's variables stand in its triple patterns."""

    subjects: frozenset[str]
    label_objects: frozenset[str]  # the object of rdfs:label or skos:altLabel


@functools.lru_cache(maxsize=256)
def variable_roles(sparql: str) -> VariableRoles:
    """The variables of ``sparql`` that stand as a subject, and those that stand as a label, in any of its
    triple patterns (nested groups, UNION branches, subqueries, GRAPH blocks); empty when rdflib
    cannot parse it (SPARQL 1.2 syntax)."""
    from pyparsing import ParseBaseException  # lazy: rdflib's parser takes a second to import
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        algebra = translateQuery(parseQuery(sparql), initNs=PREFIXES).algebra
    except (ParseBaseException, RecursionError):
        return VariableRoles(frozenset(), frozenset())
    except Exception:  # noqa: BLE001 - rdflib's algebra raises plain Exceptions (an unknown prefix, …)
        return VariableRoles(frozenset(), frozenset())
    subjects: set[str] = set()
    labels: set[str] = set()
    for s, p, o in _triples(algebra):
        if _is_variable(s):
            subjects.add(str(s))
        if _is_variable(o) and _is_label_path(p):
            labels.add(str(o))
    return VariableRoles(frozenset(subjects), frozenset(labels))


def _triples(node: Any) -> list[tuple[Any, Any, Any]]:
    from rdflib.plugins.sparql.parserutils import CompValue

    found: list[tuple[Any, Any, Any]] = []
    if isinstance(node, CompValue):
        if node.name == "BGP":
            found.extend(node.get("triples") or [])
        for value in node.values():
            found.extend(_triples(value))
    elif isinstance(node, (list, tuple)):
        for item in node:
            found.extend(_triples(item))
    return found


def _is_variable(term: Any) -> bool:
    from rdflib.term import Variable

    return isinstance(term, Variable)


def _is_label_path(predicate: Any) -> bool:
    from rdflib.paths import AlternativePath
    from rdflib.term import URIRef

    if isinstance(predicate, URIRef):
        return str(predicate) in _LABEL_PREDICATES
    if isinstance(predicate, AlternativePath):
        return all(_is_label_path(arg) for arg in predicate.args)
    return False
