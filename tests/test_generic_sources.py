"""The generic sources (csv/tsv, jsonl, rdf, opendialkg): bad rows quarantined with file and line through the CLI,
and property tests of each parser against the data it was written from."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.core.vocab import RDFS_LABEL
from tests.readers import read_source

EX = "http://example.org/"
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def quarantined(workdir: Path, domain: str) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((workdir / domain / "quarantine").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def count(cli, domain: str, workdir: Path, query: str) -> int:
    return int(cli("query", domain, query, "--format", "csv", "--workdir", str(workdir)).stdout.split()[-1])


@pytest.mark.slow  # a build per generic source kind
def test_bad_rows_of_every_generic_source_are_quarantined_with_file_and_line(tmp_path, workdir, cli):
    table = tmp_path / "books.csv"
    table.write_bytes(
        b"id,name,year\n"
        b"http://example.org/b1,Good One,1999\n"
        b"http://example.org/b2,Too,Many,Cells\n"  # line 3: wrong column count
        b"http://example.org/bad iri,Bad Iri,2000\n"  # line 4: an IRI the store refuses
        b"http://example.org/b3,Bad \xff Bytes,2001\n"  # line 5: not UTF-8
        b"http://example.org/b4,Good Two,2002\n"
    )
    triples = tmp_path / "facts.tsv"
    triples.write_bytes(
        b"subject\tpredicate\tobject\tlang\n"
        b"<http://example.org/b1>\t<http://example.org/prize>\tGolden Quill\t@en\n"
        b"<http://example.org/b1>\t<http://example.org/prize>\n"  # line 3: 2 columns
        b"<http://example.org/b 2>\t<http://example.org/prize>\tX\t\n"  # line 4: bad IRI
        b"<http://example.org/b4>\tprize\tSilver \xc3\x28\t@en\n"
    )  # line 5: not UTF-8
    turtle = tmp_path / "more.ttl"
    turtle.write_bytes(
        b"@prefix ex: <http://example.org/> .\n"
        b"ex:b1 ex:pages 320 .\n"
        b"ex:b2 ex:pages <http://example.org/not an iri> .\n"  # line 3
        b"ex:b4 ex:pages 288 .\n"
    )
    records = tmp_path / "more.jsonl"
    records.write_bytes(
        b'{"id": "http://example.org/b1", "name": "Good One", "isbn": "1"}\n'
        b'{"id": "http://example.org/b5", "name": "Bad \xfe", "isbn": "2"}\n'  # line 2: not UTF-8
        b'{"id": "http://example.org/b6", "name": "Nested", "isbn": {"x": 1}}\n'  # line 3
        b'{"id": "http://example.org/b4", "name": "Good Two", "isbn": "4"}\n'
    )
    cli(
        "build",
        "shelf",
        *(
            f"--source={kind}:{path}"
            for kind, path in (("csv", table), ("tsv", triples), ("rdf", turtle), ("jsonl", records))
        ),
        "--workdir",
        str(workdir),
    )
    bad = {
        (Path(e["source"]).name, e["location"].split(" column")[0]): e["reason"] for e in quarantined(workdir, "shelf")
    }
    assert set(bad) == {
        ("books.csv", "line 3"),
        ("books.csv", "line 4"),
        ("books.csv", "line 5"),
        ("facts.tsv", "line 3"),
        ("facts.tsv", "line 4"),
        ("facts.tsv", "line 5"),
        ("more.ttl", "line 3"),
        ("more.jsonl", "line 2"),
        ("more.jsonl", "line 3"),
    }
    assert "expected 3 columns" in bad[("books.csv", "line 3")]
    assert "not a valid absolute IRI" in bad[("books.csv", "line 4")]
    assert "not UTF-8 at byte offset" in bad[("books.csv", "line 5")]
    assert "not UTF-8" in bad[("more.jsonl", "line 2")] and "'isbn'" in bad[("more.jsonl", "line 3")]
    # the good rows landed, each once
    assert (
        count(
            cli,
            "shelf",
            workdir,
            'SELECT (COUNT(*) AS ?n) WHERE { ?b rdfs:label ?l FILTER STRSTARTS(STR(?b), "http://example.org/b") }',
        )
        == 4
    )
    assert count(cli, "shelf", workdir, "SELECT (COUNT(*) AS ?n) WHERE { <http://example.org/b4> ?p ?o }") == 5
    assert count(cli, "shelf", workdir, 'SELECT (COUNT(*) AS ?n) WHERE { ?b ?p "Golden Quill"@en }') == 1
    assert count(cli, "shelf", workdir, "SELECT (COUNT(*) AS ?n) WHERE { ?b ?p 288 }") == 1


def test_a_triples_file_that_is_all_bad_is_an_error_naming_it(tmp_path, workdir, cli):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"subject,predicate,object\nx,y\n")
    result = cli("build", "shelf", "--source", f"csv:{bad}", "--workdir", str(workdir), check=False)
    assert result.returncode == 1 and "bad.csv: no usable record" in result.stderr


# ---------------------------------------------------------------- property tests of the parsers

names = (
    st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=12)
    .map(str.strip)
    .filter(lambda s: s and "|" not in s and not s.startswith(("<", "http://", "https://", "urn:")))
)
columns = st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=1, max_size=3, unique=True).filter(
    lambda cs: not {"id", "iri", "uri", "name", "label", "title", "alias", "aliases"} & set(cs)
)
tables = columns.flatmap(
    lambda cs: st.tuples(
        st.just(cs),
        st.lists(
            st.tuples(names, st.lists(st.lists(names, max_size=3), min_size=len(cs), max_size=len(cs))),
            min_size=1,
            max_size=6,
            unique_by=lambda row: row[0],
        ),
    )
)


def written_quads(folder: Path) -> list[ox.Quad]:
    """What the importer wrote (read_source's ``out.nq``), parsed whole: a value may hold a form feed, which
    ``str.splitlines`` would take for a line break."""
    return list(ox.parse(path=folder / "out.nq", format=ox.RdfFormat.N_QUADS))


def _facts(folder: Path) -> set[tuple[str, str, str]]:
    """(subject name, relation IRI, value text) of every fact, entities by their labels."""
    quads = written_quads(folder)
    label = {q.subject.value: q.object.value for q in quads if q.predicate.value == RDFS_LABEL}
    return {
        (label[q.subject.value], q.predicate.value, label.get(q.object.value, q.object.value))
        for q in quads
        if q.predicate.value != RDFS_LABEL
    }


@pytest.mark.slow  # hypothesis tables built twice
@PROPERTY
@given(tables)
def test_an_entity_table_and_the_same_records_as_json_lines_give_the_same_quads(tmp_path, table):
    cols, rows = table
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["name", *cols])
    json_lines = []
    for name, cells in rows:
        writer.writerow([name, *("|".join(values) for values in cells)])
        json_lines.append(json.dumps({"name": name, **dict(zip(cols, cells))}, ensure_ascii=False))
    folder = tmp_path / str(abs(hash(buffer.getvalue())))
    from_csv = read_source("csv", buffer.getvalue().encode(), folder / "csv", "t.csv")
    from_jsonl = read_source("jsonl", ("\n".join(json_lines) + "\n").encode(), folder / "jsonl", "t.jsonl")
    assert not from_csv.quarantined and not from_jsonl.quarantined
    assert from_csv.quads == from_jsonl.quads
    assert from_csv.labels() >= {name for name, _ in rows}
    facts = _facts(folder / "csv")
    for name, cells in rows:
        for values in cells:
            for value in values:
                assert any(s == name and o == value for s, _, o in facts), (name, value)
    assert from_csv.counts["records_ok"] == len(rows)


iris = st.from_regex(r"http://example\.org/[a-z]{1,6}", fullmatch=True)
literals = st.one_of(
    st.builds(ox.Literal, st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)),
    st.builds(
        lambda v, lang: ox.Literal(v, language=lang),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
        st.sampled_from(["en", "zh", "zh-hant"]),
    ),
    st.builds(
        lambda n: ox.Literal(str(n), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        st.integers(-(10**6), 10**6),
    ),
)
rdf_triples = st.lists(
    st.tuples(iris, iris.filter(lambda i: i != RDFS_LABEL), st.one_of(iris, literals)), min_size=1, max_size=12
)


@PROPERTY
@given(
    rdf_triples,
    st.sampled_from(
        [ox.RdfFormat.N_TRIPLES, ox.RdfFormat.TURTLE, ox.RdfFormat.RDF_XML, ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG]
    ),
)
def test_rdf_in_every_syntax_lands_as_written(tmp_path, written, fmt):
    triples = [
        ox.Triple(ox.NamedNode(s), ox.NamedNode(p), ox.NamedNode(o) if isinstance(o, str) else o) for s, p, o in written
    ]
    if fmt in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
        data = ox.serialize(
            [ox.Quad(t.subject, t.predicate, t.object, ox.NamedNode(EX + "g")) for t in triples], format=fmt
        )
    else:
        data = ox.serialize(triples, format=fmt)
    folder = tmp_path / f"{abs(hash(data))}"
    outcome = read_source("rdf", data, folder, f"in.{fmt.file_extension}")
    assert not outcome.quarantined
    # every triple lands once; an undeclared predicate keeps its own IRI (the film schema declares a few local
    # names, such as "genre": those map onto its relations)
    landed = {str(q.triple) for q in written_quads(folder)}
    expected = {str(t) for t in triples}
    assert len(landed) == len(expected)
    assert all("<https://kgforge.org/relation/" in t for t in landed - expected)
    assert outcome.counts["records_ok"] == len(triples)


odkg = st.lists(
    st.tuples(
        names.filter(lambda s: "\t" not in s),
        st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
        names.filter(lambda s: "\t" not in s),
        st.booleans(),
    ),
    min_size=1,
    max_size=10,
)


@pytest.mark.slow  # hypothesis over the OpenDialKG reader
@PROPERTY
@given(odkg)
def test_opendialkg_reverse_lines_are_the_forward_facts(tmp_path, rows):
    lines = [f"{o}\t~{r}\t{s}" if reverse else f"{s}\t{r}\t{o}" for s, r, o, reverse in rows]
    folder = tmp_path / str(abs(hash(tuple(lines))))
    both = read_source("opendialkg", ("\n".join(lines) + "\n").encode(), folder / "mixed", "t.txt")
    forward = read_source(
        "opendialkg", "".join(f"{s}\t{r}\t{o}\n" for s, r, o, _ in rows).encode(), folder / "forward", "t.txt"
    )
    assert not both.quarantined and both.quads == forward.quads
    assert both.labels() == {s for s, *_ in rows} | {o for _, _, o, _ in rows}
