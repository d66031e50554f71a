"""Shared pieces of the qa tests: domains built from the real samples, answer verification by SPARQL,
and a small OpenAI-compatible chat server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from benchmarks.scripted_llm import serving
from kgforge.core.resources import query_text
from kgforge.core.schema import SourceSpec
from kgforge.publish.transaction import build
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot

STATEMENT_QUERY = """SELECT ?s ?o ?q ?qv WHERE {
  ?s ?link ?st . ?st ?ps ?o ; ?q ?qv .
  FILTER(STRSTARTS(STR(?ps), "http://www.wikidata.org/prop/statement/"))
}"""
QUALIFIER = "http://www.wikidata.org/prop/qualifier/"


def build_domain(workdir: Path, domain: str, *sources: tuple[str, Path]) -> None:
    build(
        domain,
        [SourceSpec(kind, str(path)) for kind, path in sources],
        workdir,
        show_progress=False,
        use_schema_sources=False,
    )


def read_turns(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def term(answer: dict[str, Any]) -> ox.NamedNode | ox.Literal:
    if answer["is_entity"]:
        return ox.NamedNode(answer["value"])
    if answer["lang"]:
        return ox.Literal(answer["value"], language=answer["lang"])
    return ox.Literal(answer["value"], datatype=ox.NamedNode(answer["datatype"]))


def verify_turn(runner: QueryRunner, turn: dict[str, Any]) -> None:
    """The turn's answers are exactly what the store holds for its fact (a qualified fact: exactly the
    objects whose statement carries the qualifier), with every label and alias of entity answers."""
    fact = turn["fact"]
    subject = ox.NamedNode(fact["subject"])
    for predicate in fact["predicates"]:
        rows = runner.query(query_text("qa_answer"), {"s": subject, "p": ox.NamedNode(predicate)}, timeout=30).rows
        store: dict[ox.NamedNode | ox.Literal, set[str]] = {}
        for row in rows:
            store.setdefault(row["o"], set()).update([row["name"].value] if "name" in row else [])
        given = [a for a in turn["answers"] if a["predicate"] == predicate]
        assert given, f"{turn['id']}: no answer for {predicate}"
        for answer in given:
            assert term(answer) in store, f"{turn['id']}: {answer['value']} is not an object of {predicate}"
            if answer["is_entity"]:
                assert set(answer["names"]) == store[term(answer)], turn["id"]
                assert answer["text"] in store[term(answer)]
            else:
                assert answer["names"] == [answer["value"]] and answer["text"] == answer["value"]
        if fact["kind"] != "qualified":
            assert {term(a) for a in given} == set(store), f"{turn['id']}: answers differ from the store's objects"
    for qualifier in fact["qualifiers"]:
        rows = runner.query(
            STATEMENT_QUERY,
            {"s": subject, "q": ox.NamedNode(QUALIFIER + qualifier["predicate"].rsplit("/", 1)[-1])},
            timeout=30,
        ).rows
        carrying = {row["o"] for row in rows if row["qv"].value == qualifier["value"]}
        assert {term(a) for a in turn["answers"]} == carrying, f"{turn['id']}: qualifier does not select the answers"
        assert qualifier["text"] not in {n for a in turn["answers"] for n in a["names"]}


def verify_all(workdir: Path, domain: str, turns: list[dict[str, Any]]) -> int:
    """Verify each distinct fact of ``turns`` against the store; returns how many were checked."""
    checked: dict[str, dict[str, Any]] = {}
    for turn in turns:
        checked.setdefault(json.dumps(turn["fact"], sort_keys=True) + json.dumps(turn["answers"], sort_keys=True), turn)
    with QueryRunner(Snapshot.open(domain, workdir)) as runner:
        for turn in checked.values():
            verify_turn(runner, turn)
    return len(checked)


class ChatServer:
    """An OpenAI-compatible /v1/chat/completions endpoint answering through ``reply(prompt) -> content``."""

    def __init__(self, reply: Callable[[str], str]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if self.path != "/v1/chat/completions":
                    self.send_response(404)
                    self.end_headers()
                    return
                content = server.reply(body["messages"][-1]["content"])
                payload = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                        ],
                    }
                )
                data = payload.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@contextmanager
def chat_server(reply: Callable[[str], str]) -> Iterator[ChatServer]:
    server = ChatServer(reply)
    with serving(server.httpd):
        yield server
