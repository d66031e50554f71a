"""Running a query against a SPARQL endpoint (``kgforge query --endpoint URL``), with the same bindings
and the same result shape as a query run on the store.

Bindings travel as ``$name=TERM`` parameters (N-Triples terms, as ``kgforge serve`` and RDF4J read them),
never pasted into the query text; an endpoint that does not know that convention ignores them, so they
are refused for it rather than silently dropped. Results are read with pyoxigraph's own parsers.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyoxigraph as ox
import requests

from kgforge.core import checks
from kgforge.core.errors import QueryError, QueryTimeout
from kgforge.store.query import QueryResult, Term

ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9"
BUILD_HEADER = "X-Kgforge-Build"


def endpoint_query(url: str, sparql: str, bindings: Mapping[str, Term] | None = None,
                   timeout: float = 60.0) -> QueryResult:
    """``sparql`` POSTed to the endpoint at ``url``; a QueryTimeout when it answers 503 or does not answer
    within ``timeout`` seconds (plus a moment for the network), a QueryError for any other refusal."""
    checks.http_url(url, "--endpoint")
    checks.number(timeout, "timeout", above=True)
    data = {"query": sparql, **{f"${name.lstrip('?$')}": str(term) for name, term in (bindings or {}).items()}}
    try:
        reply = requests.post(url, data=data, headers={"Accept": ACCEPT}, timeout=timeout + 5)
    except requests.Timeout:
        raise QueryTimeout(f"{url} did not answer within {timeout:g} s") from None
    except requests.RequestException as exc:
        raise QueryError(f"cannot reach the endpoint {url}: {exc}") from None
    if reply.status_code == 503:
        raise QueryTimeout(f"{url}: {reply.text.strip()}")
    if reply.status_code != 200:
        raise QueryError(f"{url} answered {reply.status_code}: {reply.text.strip()[:500]}")
    if bindings and BUILD_HEADER not in reply.headers:
        raise QueryError(f"{url} is not a kgforge endpoint: it would ignore the bindings ($name parameters); "
                         "write the values into the query instead")
    return _result(reply)


def _result(reply: requests.Response) -> QueryResult:
    media = reply.headers.get("Content-Type", "").split(";")[0].strip()
    if media in ("application/sparql-results+json", "application/json"):
        parsed = ox.parse_query_results(reply.content, format=ox.QueryResultsFormat.JSON)
        if isinstance(parsed, ox.QueryBoolean):
            return QueryResult("ask", [], [], boolean=bool(parsed))
        variables = [v.value for v in parsed.variables]
        rows = [{v: row[v] for v in variables if row[v] is not None} for row in parsed]
        return QueryResult("select", variables, rows)
    if media in ("application/n-triples", "text/plain"):
        return QueryResult("construct", [], [], triples=[q.triple for q in ox.parse(reply.content,
                                                                                     format=ox.RdfFormat.N_TRIPLES)])
    raise QueryError(f"{reply.url} answered in {media or 'no media type'}, not SPARQL JSON results or N-Triples")
