"""A rebuild published while 8 clients query the server: no request fails, and every answer comes from
one store, the old or the new, never a mix of the two.

Version A is the demo; version B adds a marker film; version C (built last) is the demo again, which
makes the build prune A's folder while the server may still hold it open. Each query reads the whole
store's size and the marker in one go, so an answer from a mix of two stores would pair A's size with
the marker, or B's size without it.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from tests.serve_support import build_demo, running_server, write_kb

pytestmark = pytest.mark.slow  # rebuilds published under eight querying clients

CLIENTS = 8
PROBE = """
SELECT ?n ?marker WHERE {
  { SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o } }
  BIND(EXISTS { ?film rdfs:label "换库标记电影"@zh } AS ?marker)
}"""


def store_size(workdir) -> int:
    with QueryRunner(Snapshot.open("demo", workdir)) as runner:
        return int(runner.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }").rows[0]["n"].value)


def test_rebuilds_swap_in_under_eight_clients_without_a_failed_or_mixed_answer(tmp_path):
    workdir = tmp_path / "kg"
    marker = write_kb(tmp_path / "kb_marker.json", {"换库标记电影": [("领域", "电影"), ("主演", "巩俐")]})
    build_a = build_demo(workdir, with_derived=False)
    size_a = store_size(workdir)
    answers: list[tuple[str, int, bool]] = []
    failures: list[str] = []
    stop = threading.Event()

    def client(base: str) -> None:
        with httpx.Client(timeout=60) as http:
            while not stop.is_set():
                try:
                    reply = http.post(
                        f"{base}/sparql", data={"query": PROBE}, headers={"Accept": "application/sparql-results+json"}
                    )
                except httpx.HTTPError as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                if reply.status_code != 200:
                    failures.append(f"{reply.status_code}: {reply.text}")
                    continue
                row = reply.json()["results"]["bindings"][0]
                answers.append(
                    (reply.headers["x-kgforge-build"], int(row["n"]["value"]), row["marker"]["value"] == "true")
                )

    with running_server(workdir, workers=2, timeout=60.0) as base:
        threads = [threading.Thread(target=client, args=(base,)) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        build_b = build_demo(workdir, marker, with_derived=False)
        size_b = store_size(workdir)
        time.sleep(1.0)
        build_c = build_demo(workdir, with_derived=False)  # prunes A's folder
        size_c = store_size(workdir)
        time.sleep(1.0)
        stop.set()
        for thread in threads:
            thread.join(60)

    assert not failures, failures[:5]
    expected = {build_a: (size_a, False), build_b: (size_b, True), build_c: (size_c, False)}
    assert size_b > size_a == size_c and len({build_a, build_b, build_c}) == 3
    mixed = [a for a in answers if expected.get(a[0]) != a[1:]]
    assert not mixed, mixed[:5]
    seen = {a[0] for a in answers}
    assert seen >= {build_a, build_b, build_c}, f"answers came from {seen} only"
    assert len(answers) > 3 * CLIENTS
