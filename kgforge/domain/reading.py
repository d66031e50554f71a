"""Reading the published build: ``stats``, ``query`` and ``export_rdf`` (the build itself: ``snapshot``, ``tables``
and ``language`` are :class:`~kgforge.domain.base.DomainBase`'s)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from kgforge.core.checks import language_tag
from kgforge.core.records import Record
from kgforge.domain.base import DomainBase
from kgforge.store.labels import check_required, labelled_rows, language_variable, resolve_bindings, row_labels
from kgforge.store.query import DEFAULT_TIMEOUT, QueryRunner, load_query

if TYPE_CHECKING:
    from kgforge.stats import DomainStats
    from kgforge.store.rdf_export import RdfExportReport


@dataclass(frozen=True)
class QueryReport(Record):
    """A query's answer: SELECT rows (pyoxigraph terms, with a label beside each IRI), an ASK boolean, or
    CONSTRUCT/DESCRIBE triples."""

    domain: str
    kind: str = "select"
    variables: tuple[str, ...] = ()
    rows: tuple[dict[str, Any], ...] = ()  # SELECT: variable -> pyoxigraph term
    boolean: bool | None = None
    labels: dict[str, str] = field(default_factory=dict)  # IRI -> label, for the IRIs in ``rows``
    truncated: bool = False  # ``limit`` held rows back
    more_rows: int | None = None  # how many, when counting them was cheap
    triples: tuple[Any, ...] = ()  # CONSTRUCT/DESCRIBE: pyoxigraph triples
    columns: tuple[str, ...] = ()  # ``variables`` with a label column beside each that holds IRIs
    labelled_rows: tuple[dict[str, Any], ...] = ()  # ``rows`` as text, labels beside IRIs (as --json prints)

    def label(self, term: Any) -> str | None:
        """The label beside an IRI of ``rows``, or None."""
        return self.labels.get(term.value) if isinstance(term, ox.NamedNode) else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "variables": list(self.columns),
            "boolean": self.boolean,
            "rows": list(self.labelled_rows),
            "truncated": self.truncated,
            "more_rows": self.more_rows,
        }


def _term(value: Any) -> ox.NamedNode | ox.Literal | ox.BlankNode | str:
    return value if isinstance(value, (ox.NamedNode, ox.Literal, ox.BlankNode)) else str(value)


class ReadingMethods(DomainBase):
    def stats(self) -> DomainStats:
        """Entities, relations, triples and per-triple sizes of the published build (KdConv / DuConv Table 2)."""
        from kgforge.stats import domain_stats  # lazy: start-up

        return domain_stats(self.snapshot())

    def query(
        self,
        query: str,
        /,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        limit: int = 0,
        allow_service: bool = False,
        waiting: Callable[[float], None] | None = None,
        label_language: str | None = None,
        **bindings: Any,
    ) -> QueryReport:
        """Run ``query`` (SPARQL text, or the name of a shipped query such as ``"goal_two_step"``) on the
        published store with ``bindings`` substituted for its variables. A ``str`` binding is a plain value:
        the entity it labels where the variable stands as a subject, else a literal (the rule in
        :mod:`kgforge.store.labels`); pyoxigraph terms pass through. ``limit`` keeps the first rows (0: all);
        ``waiting(seconds)`` is called while a query runs. Rows come with the labels of their IRIs, in
        ``label_language`` (default: the domain's), which is also tried first for plain values."""
        sparql = load_query(query)
        check_required(sparql, bindings, query)
        snapshot = self.snapshot()
        language = language_tag(label_language, "label_language") if label_language else snapshot.language
        shown_in = language_variable(sparql, bindings)  # a query naming things in a language (# Language: ?lang)
        if shown_in:
            bindings = {**bindings, shown_in: ox.Literal(language)}
        with QueryRunner(snapshot) as runner:
            terms = resolve_bindings(runner, sparql, {k: _term(v) for k, v in bindings.items()}, language, self.name)
            result = runner.query(
                sparql, terms, timeout=timeout, allow_service=allow_service, limit=limit, waiting=waiting
            )
            labels = row_labels(runner, result.rows, language)
        columns, rows = labelled_rows(result.variables, result.rows, labels)
        return QueryReport(
            self.name,
            result.kind,
            tuple(result.variables),
            tuple(result.rows),
            result.boolean,
            labels,
            result.truncated,
            result.more_rows,
            tuple(result.triples or ()),
            tuple(columns),
            tuple(rows),
        )

    def export_rdf(self, out: Path | str, *, fmt: str = "nq") -> RdfExportReport:
        """The whole store as RDF in ``fmt`` (a name or alias of ``registry("RDF format")``): N-Quads and TriG
        keep the named graphs, N-Triples and Turtle give their union, deduplicated."""
        from kgforge.store.rdf_export import export_rdf  # lazy: start-up

        return export_rdf(self.snapshot(), fmt, Path(out))
