"""`kgforge query`'s arguments are checked before anything runs (timeout, language tags, a query file
that is not text)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.errors import ArgumentError, QueryError
from kgforge.query import QueryRunner, parse_binding, read_query_file
from kgforge.store import domain_paths


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from tests.conftest import run_cli

    workdir = tmp_path_factory.mktemp("kg")
    kb = workdir / "kb_travel.json"
    facts = {"故宫": [["故宫", "地址", "北京市东城区景山前街4号"]]}
    kb.write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    run_cli("build", "travel", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(workdir))
    return workdir


@pytest.mark.parametrize("timeout", ["nan", "inf", "-1", "0"])
def test_timeout_must_be_a_finite_positive_number(store, cli, timeout):
    result = cli("query", "travel", "SELECT * WHERE { ?s ?p ?o }", "--timeout", timeout, "--workdir", str(store),
                 check=False)
    assert result.returncode == 2 and "--timeout" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with QueryRunner(domain_paths("travel", store)) as runner, pytest.raises(ArgumentError, match="timeout"):
        runner.query("SELECT * WHERE { ?s ?p ?o }", timeout=float(timeout))


def test_bad_language_tag_in_bind_is_one_clear_error(store, cli):
    result = cli("query", "travel", "SELECT ?x WHERE { ?s ?p ?x }", "--bind", "x@zh-!!=v", "--workdir", str(store),
                 check=False)
    assert result.returncode == 1 and "zh-!!" in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(QueryError, match="language tag"):
        parse_binding("x@zh-!!=v")
    assert parse_binding("x@zh-Hans=故宫") == ("x", ox.Literal("故宫", language="zh-hans"))


def test_a_binary_query_file_is_refused_naming_file_and_offset(store, cli, tmp_path):
    binary = tmp_path / "query.rq"
    binary.write_bytes(b"SELECT * WHERE { ?s ?p ?o }\n\x7fELF\x02\x01\xd0\xff\x00\x00")
    result = cli("query", "travel", "--file", str(binary), "--workdir", str(store), check=False)
    assert result.returncode == 1 and str(binary) in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(QueryError, match="byte 34"):
        read_query_file(binary)
    nul = tmp_path / "nul.rq"
    nul.write_bytes(b"SELECT * WHERE { ?s ?p ?o }\x00")
    with pytest.raises(QueryError, match="NUL"):
        read_query_file(nul)
