"""Labels both ways for queries: a plain value bound to a variable becomes the entity it labels, and the
IRIs in a result get their labels beside them.

The rule for a plain value (``--bind a=故宫``, or a ``str`` given to ``Domain.query``), by where its
variable stands in the query's triple patterns:

1. as a subject anywhere (``?a ?r ?x``): the entity whose ``rdfs:label`` (or ``skos:altLabel``) is the
   value, in the domain's language first; several such entities is an error listing them, none an error
   with the closest labels;
2. else as the object of ``rdfs:label``/``skos:altLabel``: the literal some entity carries as a label with
   that text, the domain's language first (none is an error with the closest labels: a typo must not pass
   as a query that matches nothing; an English name in a Chinese graph is found as its ``@en`` label);
3. else: a plain string literal.

A query may declare the variables it needs in its leading comment (``# Requires: ?name``); leaving one
unbound is an error naming it, since the query would otherwise run over every entity without a word.

``VAR=<iri>``, ``VAR@lang=text`` and ``VAR="text"`` (pyoxigraph terms in Python) are taken as written.
Every lookup binds the value as a substitution; nothing is pasted into query text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass

import pyoxigraph as ox

from kgforge.core.errors import QueryError
from kgforge.core.text import text_language
from kgforge.store.query import QueryRunner, Term
from kgforge.store.sparql_text import shorten, variable_roles

LOOKUP_TIMEOUT = 30.0
MAX_CANDIDATES = 20
_BY_LABEL = """SELECT DISTINCT ?name ?entity ?type WHERE {
  ?entity rdfs:label|skos:altLabel ?name .
  OPTIONAL { ?entity a ?type }
} ORDER BY ?entity LIMIT 21"""
_BY_TEXT = """SELECT DISTINCT ?text ?entity ?type WHERE {
  ?entity rdfs:label|skos:altLabel ?any .
  FILTER(STR(?any) = ?text)
  OPTIONAL { ?entity a ?type }
} ORDER BY ?entity LIMIT 21"""
_TEXT_LABEL = """SELECT ?text ?any WHERE {
  ?entity rdfs:label|skos:altLabel ?any .
  FILTER(STR(?any) = ?text)
} ORDER BY ?any LIMIT 1"""
_LABELLED = """SELECT ?name ?entity WHERE { ?entity rdfs:label|skos:altLabel ?name } LIMIT 1"""
_NEAR = """SELECT DISTINCT ?first ?label WHERE {
  ?entity rdfs:label ?label .
  FILTER(CONTAINS(STR(?label), ?first))
} LIMIT 5000"""


class AmbiguousLabel(QueryError):
    """Several entities carry the label a plain value gave."""


class UnknownLabel(QueryError):
    """No entity carries the label a plain value gave."""


class MissingBinding(QueryError):
    """A query that declares a variable it needs (``# Requires: ?name``) was run without it bound."""


_REQUIRES = re.compile(r"^#\s*Requires:\s*(.*)$", re.MULTILINE)
_VARIABLE = re.compile(r"[?$](\w+)")


def required_variables(sparql: str) -> tuple[tuple[str, ...], ...]:
    """What ``sparql``'s leading comment says must be bound: each group needs one of its variables
    (``# Requires: ?a ?b`` is two groups, both needed; ``# Requires: ?a or ?b`` one group, either will do)."""
    groups: list[tuple[str, ...]] = []
    for match in _REQUIRES.finditer("\n".join(_leading_comment(sparql))):
        words = match.group(1).split("(")[0]  # a note in brackets may follow
        alternatives = [_VARIABLE.findall(part) for part in re.split(r"\bor\b", words)]
        if len(alternatives) > 1:
            groups.append(tuple(name for names in alternatives for name in names))
        else:
            groups.extend((name,) for name in alternatives[0])
    return tuple(groups)


_LANGUAGE = re.compile(r"^#\s*Language:\s*[?$](\w+)", re.MULTILINE)


def language_variable(sparql: str, bindings: Mapping[str, object] | None = None) -> str | None:
    """The variable ``sparql``'s leading comment names for the language of the names it shows
    (``# Language: ?lang``), which a caller binds to its label language; None when it names none or ``bindings``
    binds it already."""
    found = _LANGUAGE.search("\n".join(_leading_comment(sparql)))
    if found is None or found.group(1) in {name.lstrip("?$") for name in bindings or {}}:
        return None
    return found.group(1)


def _leading_comment(sparql: str) -> list[str]:
    lines = []
    for line in sparql.lstrip().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def check_required(sparql: str, bindings: Mapping[str, object], query: str) -> None:
    """Raise :class:`MissingBinding` naming what ``sparql`` requires that ``bindings`` leaves unbound."""
    given = {name.lstrip("?$") for name in bindings}
    missing = [group for group in required_variables(sparql) if not given & set(group)]
    if missing:
        what = query if _QUERY_NAME.fullmatch(query) else "this query"
        needs = " and ".join(" or ".join(f"?{name}" for name in group) for group in missing)
        give = " ".join(f"--bind {group[0]}=…" for group in missing)
        in_python = ", ".join(f"{group[0]}=…" for group in missing)
        raise MissingBinding(f"{what} binds {needs}; give {give} (in Python: {in_python})")


_QUERY_NAME = re.compile(r"[A-Za-z_][\w.-]*")


@dataclass(frozen=True)
class Candidate:
    iri: str
    types: tuple[str, ...]

    def describe(self) -> str:
        kinds = ", ".join(shorten(t) for t in self.types) or "no type"
        return f"<{self.iri}> ({kinds})"


def resolve_bindings(
    runner: QueryRunner, sparql: str, bindings: Mapping[str, Term | str], language: str, domain: str
) -> dict[str, Term]:
    """``bindings`` with each plain value (``str``) read by the rule in this module's docstring."""
    roles = variable_roles(sparql)
    resolved: dict[str, Term] = {}
    for name, value in bindings.items():
        name = name.lstrip("?$")
        if not isinstance(value, str):
            resolved[name] = value
        elif name in roles.subjects:
            resolved[name] = ox.NamedNode(entity_labelled(runner, value, language, domain, name))
        elif name in roles.label_objects:
            resolved[name] = label_literal(runner, value, language, domain, name)
        else:
            resolved[name] = ox.Literal(value)
    return resolved


def entity_labelled(runner: QueryRunner, label: str, language: str, domain: str, variable: str = "") -> str:
    """The IRI of the one entity labelled ``label`` (``language`` first, then untagged, then any language)."""
    tried = [ox.Literal(label, language=language)] if language else []
    for literal in (*tried, ox.Literal(label)):
        found = _candidates(runner.query(_BY_LABEL, {"name": literal}, timeout=LOOKUP_TIMEOUT).rows)
        if found:
            return _one(found, label, domain, variable)
    found = _candidates(runner.query(_BY_TEXT, {"text": ox.Literal(label)}, timeout=LOOKUP_TIMEOUT).rows)
    if found:
        return _one(found, label, domain, variable)
    raise _unknown(runner, label, domain, variable)


def label_literal(runner: QueryRunner, label: str, language: str, domain: str, variable: str = "") -> Term:
    """``label`` as the literal an entity carries as its label: tagged with ``language``, else plain, else in the
    language its script suggests (an English name in a Chinese graph), else in whatever language a label with
    this text has; :class:`UnknownLabel` with the closest labels when no entity carries it."""
    literal = ox.Literal(label, language=language) if language else ox.Literal(label)
    script = text_language(label, language) if language else None  # "Xun Zhou" in a zh graph is tagged en
    exact = [literal, ox.Literal(label)] + ([ox.Literal(label, language=script)] if script != language else [])
    # the exact forms are index lookups; only a label in another language needs the scan over every label
    for form in exact:
        if runner.query(_LABELLED, {"name": form}, timeout=LOOKUP_TIMEOUT).rows:
            return form
    rows = runner.query(_TEXT_LABEL, {"text": ox.Literal(label)}, timeout=LOOKUP_TIMEOUT).rows
    if not rows:
        raise _unknown(runner, label, domain, variable)
    return rows[0]["any"]  # the label as the graph holds it, so the query matches what was found


def _unknown(runner: QueryRunner, label: str, domain: str, variable: str) -> UnknownLabel:
    near = close_labels(runner, label)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return UnknownLabel(
        f"no entity has the label {label!r} in {domain}{hint} (`--bind {variable or 'VAR'}=<IRI>` "
        f'binds an IRI, `--bind {variable or "VAR"}="{label}"` the plain string)'
    )


def close_labels(runner: QueryRunner, label: str, n: int = 5) -> list[str]:
    """Labels close to ``label``, among a bounded sample of those sharing its first character."""
    if not label:
        return []
    rows = runner.query(_NEAR, {"first": ox.Literal(label[0])}, timeout=LOOKUP_TIMEOUT).rows
    pool = sorted({row["label"].value for row in rows})
    return difflib.get_close_matches(label, pool, n=n, cutoff=0.4)


def _candidates(rows: list[dict[str, Term]]) -> list[Candidate]:
    types: dict[str, list[str]] = {}
    for row in rows:
        kinds = types.setdefault(row["entity"].value, [])
        if "type" in row and row["type"].value not in kinds:
            kinds.append(row["type"].value)
    return [Candidate(iri, tuple(kinds)) for iri, kinds in types.items()]


def _one(found: list[Candidate], label: str, domain: str, variable: str) -> str:
    if len(found) == 1:
        return found[0].iri
    shown = "\n".join(f"  {candidate.describe()}" for candidate in found[:MAX_CANDIDATES])
    more = " (first 20)" if len(found) > MAX_CANDIDATES else ""
    raise AmbiguousLabel(
        f"{len(found) if not more else 'more than 20'} entities have the label {label!r} in "
        f"{domain}{more}; bind the one you mean by IRI (--bind {variable or 'VAR'}=<IRI>):\n{shown}"
    )


def row_labels(runner: QueryRunner, rows: list[dict[str, Term]], language: str) -> dict[str, str]:
    """A label for each IRI in ``rows`` that has one, fetched in one batched lookup."""
    iris = sorted({term.value for row in rows for term in row.values() if isinstance(term, ox.NamedNode)})
    return runner.labels(iris, language, timeout=LOOKUP_TIMEOUT) if iris else {}


def label_columns(variables: list[str], rows: list[dict[str, Term]]) -> list[str]:
    """``variables`` with ``<var>_label`` after each one that holds an IRI in some row."""
    holds_iri = {v for row in rows for v, term in row.items() if isinstance(term, ox.NamedNode)}
    return [column for v in variables for column in ((v, f"{v}_label") if v in holds_iri else (v,))]


def labelled_rows(
    variables: list[str], rows: list[dict[str, Term]], labels: Mapping[str, str]
) -> tuple[list[str], list[dict[str, str | None]]]:
    """The columns (:func:`label_columns`) and each row as text: a term's value, an IRI's label beside it."""
    columns = label_columns(variables, rows)
    out = []
    for row in rows:
        text: dict[str, str | None] = {}
        for column in columns:
            if column in row or column in variables:
                text[column] = row[column].value if column in row else None
            else:
                term = row.get(column.removesuffix("_label"))
                text[column] = labels.get(term.value) if isinstance(term, ox.NamedNode) else None
        out.append(text)
    return columns, out
