"""The explorer's pages: search, entity, neighbourhood graph, goal paths, related entities, SPARQL editor.

Pages are rendered on the server by Jinja2 with autoescaping on, so every label from the graph reaches
the page as text (a label ``<script>…`` shows as those characters); the small scripts in ``static/``
put graph data into the page with ``textContent`` only. Each page resolves the store once and runs all
its queries on that build, through the same query workers and timeout as the endpoint; values reach
SPARQL as substitutions.
"""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from kgforge.core.quads import check_lang
from kgforge.core.vocab import DERIVED_GRAPHS, GRAPH, ONTO, OWL_SAME_AS, RDF_TYPE, RDFS_LABEL, SKOS_ALT_LABEL
from kgforge.derive import PAIR_NODE
from kgforge.serve import stages
from kgforge.serve.domain import ServedDomain, Version
from kgforge.serve.protocol import ProtocolError, parse_iri
from kgforge.serve.search import LabelIndex

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parent / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
FACTS_SHOWN = 500  # per direction on the entity page
NEIGHBOURS_SHOWN = 60  # per direction in one expansion of the graph view
META = {RDFS_LABEL: "label", SKOS_ALT_LABEL: "alias", RDF_TYPE: "type", OWL_SAME_AS: "same as"}


def labelled(select: str, pattern: str, node: str) -> str:
    """A SELECT over ``pattern`` that also gives ``?node``'s zh and en labels (as ?zh, ?en), LIMIT to fill in."""
    return (
        f"SELECT {select} ?zh ?en WHERE {{\n  {pattern}\n"
        f'  OPTIONAL {{ ?{node} rdfs:label ?zh FILTER(LANGMATCHES(LANG(?zh), "zh")) }}\n'
        f'  OPTIONAL {{ ?{node} rdfs:label ?en FILTER(LANGMATCHES(LANG(?en), "en")) }}\n}} LIMIT %d'
    )


OUT_FACTS = labelled("?e ?p ?o ?g", "GRAPH ?g { ?e ?p ?o }", "o")
IN_FACTS = labelled("?e ?s ?p ?g", "GRAPH ?g { ?s ?p ?e }", "s")
NEIGHBOURS = labelled(
    "?e ?dir ?n ?p ?g",
    """{ GRAPH ?g { ?e ?p ?n } BIND("out" AS ?dir) }
  UNION { GRAPH ?g { ?n ?p ?e } BIND("in" AS ?dir) }
  FILTER(isIRI(?n) && ?p != rdf:type && ?p != owl:sameAs)""",
    "n",
)
LABELS = """
SELECT ?e ?label WHERE { ?e rdfs:label ?label }"""


def page(name: str, version: Version, status: int = 200, **context: Any) -> HTMLResponse:
    html = TEMPLATES.get_template(name).render(build=version.id, domain=version.manifest.domain, **context)
    return HTMLResponse(
        html, status_code=status, headers={"X-Kgforge-Build": version.id, "Content-Security-Policy": CSP}
    )


# Pages load scripts from this server only; nothing inline runs (data travels as JSON in script tags).
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


def _iri_param(request: Request, name: str = "iri") -> str:
    """The entity IRI a page is about, checked as an IRI (a bad one is a 400, never pasted anywhere)."""
    value = request.query_params.get(name, "")
    if not value:
        raise ProtocolError(400, f"no entity given: pass ?{name}=<entity IRI>")
    return parse_iri(value, name)


@dataclass
class Named:
    """A term as the page shows it: an entity with its display label, or a literal."""

    value: str
    label: str
    is_entity: bool
    lang: str | None = None


# The order in which a page looks for a label: the language of ``?lang=`` (default: the domain's), then the
# other of zh and en, then an untagged one. Set per request by ``in_page_language``.
_PAGE_LANGUAGES: ContextVar[tuple[str, ...]] = ContextVar("page_languages", default=("zh", "en", ""))


def page_languages(language: str) -> tuple[str, ...]:
    first = language.lower().split("-")[0]
    return (first, *(lang for lang in ("zh", "en") if lang != first), "")


def in_page_language(handler: Any) -> Any:
    """``handler`` with the page's label language set from ``?lang=`` (a language tag; a malformed one is a
    400), else the served domain's."""

    async def handle(domain: ServedDomain, request: Request) -> Response:
        asked = request.query_params.get("lang")
        if asked:
            try:
                asked = check_lang(asked)
            except ValueError as exc:
                raise ProtocolError(400, f"lang={asked!r}: {exc}") from None
        language = asked or await _served_language(domain)
        token = _PAGE_LANGUAGES.set(page_languages(language))
        try:
            return await handler(domain, request)
        finally:
            _PAGE_LANGUAGES.reset(token)

    return handle


async def _served_language(domain: ServedDomain) -> str:
    """The served domain's label language, read in a thread (taking up a newly published build reads files).
    A coroutine of its own: written inline after ``asked or``, mypy would type the thread's result as ``asked``'s
    ``str | None``."""
    return await asyncio.to_thread(lambda: domain.current().snapshot.language)


def display(term: tuple, row: dict[str, tuple]) -> Named:
    if term[0] == "iri":
        label = next((row[lang] for lang in _PAGE_LANGUAGES.get() if lang and row.get(lang)), None)
        return Named(term[1], label[1] if label else term[1], True)
    if term[0] == "lit":
        return Named(term[1], term[1], False, term[2])
    return Named(term[1], term[1], False)


def source_name(graph: str) -> str:
    return graph.removeprefix(GRAPH) if graph.startswith(GRAPH) else graph


def relation_label(relations: dict[str, dict[str, str]], iri: str) -> str:
    entry = relations.get(iri, {})
    named = next((entry[lang] for lang in _PAGE_LANGUAGES.get() if lang and entry.get(lang)), None)
    if named:
        return named
    return META.get(iri) or (iri.removeprefix(ONTO) if iri.startswith(ONTO) else iri)


# ---------------------------------------------------------------- pages


async def home(domain: ServedDomain, request: Request) -> Response:
    version = domain.current()
    graphs = version.manifest.graphs
    return page(
        "home.html",
        version,
        graphs=[(source_name(g), e.quads) for g, e in sorted(graphs.items())],
        total=version.manifest.quads,
        related=stages.has_related_model(domain.paths),
    )


async def search(domain: ServedDomain, request: Request) -> Response:
    text = request.query_params.get("q", "")
    version = domain.current()
    deadline = domain.deadline()
    index = await domain.index(version, deadline)
    # polars work of tens of milliseconds on a big graph: in a thread, so searching clients never hold up
    # the event loop (and with it every other request)
    hits = await asyncio.wait_for(asyncio.to_thread(_search, index, text), max(deadline - time.monotonic(), 0))
    if request.query_params.get("format") == "json":
        return JSONResponse({"build": version.id, "query": text, "results": hits})
    return page("search.html", version, query=text, hits=hits)


def _search(index: LabelIndex, text: str) -> list[dict[str, Any]]:
    hits = index.search(text)
    names = index.names([h["iri"] for h in hits])
    for hit in hits:
        preferred = [n for n in names.get(hit["iri"], []) if n["preferred"]]
        hit["label"] = _pick_label(preferred) or hit["matched"]
    return hits


def _pick_label(names: list[dict[str, Any]]) -> str | None:
    for prefix in _PAGE_LANGUAGES.get():
        for name in names:
            if name["lang"].startswith(prefix):
                return name["label"]
    return None


async def entity(domain: ServedDomain, request: Request) -> Response:
    iri = _iri_param(request)
    version = domain.current()
    deadline = domain.deadline()
    bind = {"e": ("iri", iri)}
    out, incoming, relations = await asyncio.gather(
        domain.rows(version, OUT_FACTS % (FACTS_SHOWN + 1), bind, deadline),
        domain.rows(version, IN_FACTS % (FACTS_SHOWN + 1), bind, deadline),
        domain.relations(version, deadline),
    )
    if not out.rows and not incoming.rows:
        return page("missing.html", version, status=404, iri=iri)
    labels, types, facts_out = [], [], []
    for row in unique(out.rows[:FACTS_SHOWN], "p", "o", "g"):
        p, graph = row["p"][1], row["g"][1]
        if p in (RDFS_LABEL, SKOS_ALT_LABEL) and row["o"][0] == "lit":
            labels.append(
                {
                    "text": row["o"][1],
                    "lang": row["o"][2] or "",
                    "alias": p == SKOS_ALT_LABEL,
                    "source": source_name(graph),
                }
            )
        elif p == RDF_TYPE:
            types.append(display(row["o"], row))
        else:
            facts_out.append(_fact(relations, p, display(row["o"], row), graph))
    shown_in = unique(incoming.rows[:FACTS_SHOWN], "s", "p", "g")
    facts_in = [
        _fact(relations, row["p"][1], display(row["s"], row), row["g"][1])
        for row in shown_in
        if not row["s"][1].startswith(PAIR_NODE)
    ]
    for facts in (facts_out, facts_in):  # the sources' facts first, derived ones after, each by relation
        facts.sort(key=lambda f: (f["derived"], f["relation"], f["other"].label))
    title = _pick_label([{"label": lb["text"], "lang": lb["lang"]} for lb in labels if not lb["alias"]]) or iri
    return page(
        "entity.html",
        version,
        iri=iri,
        title=title,
        labels=labels,
        types=types,
        facts_out=facts_out,
        facts_in=facts_in,
        pair_records=len(shown_in) - len(facts_in),
        more_out=len(out.rows) > FACTS_SHOWN,
        more_in=len(incoming.rows) > FACTS_SHOWN,
        related=stages.has_related_model(domain.paths),
    )


def unique(rows: list[dict[str, tuple]], *keys: str) -> list[dict[str, tuple]]:
    """The first row of each combination of ``keys`` (an entity with two zh labels doubles its rows)."""
    seen: dict[tuple, dict[str, tuple]] = {}
    for row in rows:
        seen.setdefault(tuple(row.get(k) for k in keys), row)
    return list(seen.values())


def _fact(relations: dict[str, dict[str, str]], p: str, other: Named, graph: str) -> dict[str, Any]:
    return {
        "p": p,
        "relation": relation_label(relations, p),
        "other": other,
        "source": source_name(graph),
        "derived": graph.startswith(DERIVED_GRAPHS),
    }


async def graph_page(domain: ServedDomain, request: Request) -> Response:
    iri = _iri_param(request)
    return page("graph.html", domain.current(), iri=iri)


async def neighbours(domain: ServedDomain, request: Request) -> Response:
    """One expansion of the graph view: the entity's entity-valued facts, both directions, as JSON."""
    iri = _iri_param(request)
    version = domain.current()
    deadline = domain.deadline()
    bind = {"e": ("iri", iri)}
    found, relations, own = await asyncio.gather(
        domain.rows(version, NEIGHBOURS % (2 * NEIGHBOURS_SHOWN + 1), bind, deadline),
        domain.relations(version, deadline),
        domain.rows(version, LABELS, bind, deadline, max_rows=100),
    )
    nodes: dict[str, str] = {}
    edges = []
    for row in unique(found.rows[: 2 * NEIGHBOURS_SHOWN], "dir", "n", "p", "g"):
        other, p = row["n"][1], row["p"][1]
        if p in META or other.startswith(PAIR_NODE):
            continue
        nodes[other] = display(row["n"], row).label
        source, target = (iri, other) if row["dir"][1] == "out" else (other, iri)
        edges.append(
            {
                "source": source,
                "target": target,
                "label": relation_label(relations, p),
                "derived": row["g"][1].startswith(DERIVED_GRAPHS),
            }
        )
    center = _pick_label([{"label": r["label"][1], "lang": r["label"][2] or ""} for r in own.rows]) or iri
    return JSONResponse(
        {
            "build": version.id,
            "center": {"id": iri, "label": center},
            "nodes": [{"id": k, "label": v} for k, v in nodes.items()],
            "edges": edges,
            "truncated": len(found.rows) > 2 * NEIGHBOURS_SHOWN,
        },
        headers={"X-Kgforge-Build": version.id},
    )


async def goals(domain: ServedDomain, request: Request) -> Response:
    """Goals sampled for a topic, each with the subgraph ``kgforge export`` would write for it."""
    topic = _iri_param(request, "topic")
    n = _whole(request, "n", 3, 1, 20)
    seed = _whole(request, "seed", 0, 0, 2**31)
    version = domain.current()
    deadline = domain.deadline()
    tables = await asyncio.wait_for(asyncio.shield(domain.tables(version)), max(deadline - time.monotonic(), 0))

    def sample() -> dict[str, Any] | None:
        held, two_step = stages.topic_goal_kinds(tables, topic)
        if not held:
            return None
        found = stages.sample_topic_goals(domain.goal_graph(version, tables), topic, n, seed)
        records = stages.goal_subgraphs(version.snapshot, tables, found) if found else []
        by_goal = {r["goal_id"]: r for r in records}
        label = (
            _pick_label(
                [
                    {"label": r["label"], "lang": r["lang"]}
                    for r in tables.labels.filter(tables.labels["iri"] == topic).to_dicts()
                ]
            )
            or topic
        )
        return {
            "goals": [{"goal": g, "export": by_goal.get(g.goal_id)} for g in found],
            "label": label,
            "one_step_only": not two_step,
        }

    shown = await asyncio.wait_for(asyncio.to_thread(sample), max(deadline - time.monotonic(), 0))
    if shown is None:
        return page("missing.html", version, status=404, iri=topic)
    return page("goals.html", version, topic=topic, n=n, seed=seed, **shown)


def _whole(request: Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise ProtocolError(400, f"{name}={text!r}: expected a whole number from {low} to {high}")
    return int(text)


async def related(domain: ServedDomain, request: Request) -> Response:
    iri = _iri_param(request)
    version = domain.current()
    if not stages.has_related_model(domain.paths):
        return page("related.html", version, iri=iri, results=None)
    deadline = domain.deadline()
    results = await asyncio.wait_for(
        asyncio.to_thread(stages.related_entities, domain.paths, iri, 10), max(deadline - time.monotonic(), 0)
    )
    return page("related.html", version, iri=iri, results=results)


async def editor(domain: ServedDomain, request: Request) -> Response:
    version = domain.current()
    return page(
        "editor.html",
        version,
        queries=stages.shipped_queries(),
        chosen=request.query_params.get("query", ""),
        bindings=request.query_params.get("bind", ""),
    )


ROUTES = [
    (path, in_page_language(handler))
    for path, handler in (
        ("/", home),
        ("/search", search),
        ("/entity", entity),
        ("/graph", graph_page),
        ("/api/neighbours", neighbours),
        ("/goals", goals),
        ("/related", related),
        ("/editor", editor),
    )
]
