"""XLORE: the real concept-mapping sample, the documented dump line shapes, N-hop selection, the passes (batches
cut anywhere, a directive further down, a stopped pass resumed), the API client."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlparse

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.quads import check_iri
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL, relation_iri
from kgforge.sources.wikidata.passes import run_resumable
from kgforge.sources.wikidata.pipeline import Batch, BatchResult, PassSpec
from kgforge.sources.xlore.dump import QUOTA_TEXT, XloreApiError, XloreClient, XloreQuotaError
from kgforge.sources.xlore.lines import LineError, TurtleLines, file_triples
from kgforge.sources.xlore.passes import EXTRACT, XloreConfig, parse_xlore_batch
from kgforge.store.layout import domain_paths
from kgforge.store.snapshot import Snapshot
from tests.test_wikidata import build_source, objects

I = "http://xlore.org/instance/"  # noqa: E741 — short, as C beside it, for IRIs written out in full below
C = "http://xlore.org/concept/"
HEADER = """@base <http://xlore.org/instance/> .
@prefix property: <http://xlore.org/property#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .

property:hasIcon rdf:type rdf:Property .
"""


def test_real_dbpedia_concept_mapping_sample(workdir: Path, shared) -> None:
    store, source = build_source(workdir, "xlore", shared("xlore/dbpedia_xlore_concept.dat"))
    assert source["quarantined"] == 0
    assert objects(store, C + "2109", RDFS_LABEL) == {
        ox.Literal("events", language="en"),
        ox.Literal("事件", language="zh"),
    }
    assert objects(store, C + "2109", "http://www.w3.org/2002/07/owl#equivalentClass") == {
        ox.NamedNode("http://dbpedia.org/ontology/Event")
    }
    # a DBpedia class XLore did not map keeps its label, and no concept is invented
    assert objects(store, "http://dbpedia.org/ontology/LunarCrater", RDFS_LABEL) == {
        ox.Literal("lunar crater", language="en")
    }


def film_dump(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "xlore.property.list.ttl").write_text(  # no @base: relative ids are properties by the file name
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        '<p12> rdfs:label "导演"@zh .\n<p13> rdfs:label "上映时间"@zh .\n<p14> rdfs:label "主演"@zh .\n',
        encoding="utf-8",
    )
    (folder / "xlore.instance.list.ttl").write_text(
        HEADER
        + "\n".join(
            [
                '<bdi1> rdfs:label "城市之街"@zh .',
                '<bdi1> rdfs:label "City Streets"@en .',
                '<bdi1> rdfs:comment "《城市之街》是1931年的美国电影。"@baidu .',
                '<bdi1> rdfs:comment "City Streets is a 1931 \\"noir\\" \\u0066ilm."@enwiki .',
                '<bdi3> rdfs:label "鲁本·马莫利安"@zh .',
                '<bdi5> rdfs:label "同名"@zh .',
                '<bdi6> rdfs:label "同名"@zh .',
                "this line is not a triple",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    hub = [f"<{I}hub> <http://xlore.org/property/p14> <{I}h{n}> ." for n in range(8)]
    (folder / "xlore.instance.infobox.ttl").write_text(
        "\n".join(
            [
                f"<{I}bdi1> <http://xlore.org/property/p12> <{I}bdi3> .",
                f'<{I}bdi1> <http://xlore.org/property/p13> "1931年"@zh .',
                f"<{I}bdi3> <http://xlore.org/property/p14> <{I}bdi4> .",
                f"<{I}bdi4> <http://xlore.org/property/p14> <{I}hub> .",
                *hub,
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    (folder / "xlore.instance.reference.ttl").write_text(
        f"<{I}bdi1> <http://xlore.org/property#hasReferedTo> <{I}bdi2> .\n", encoding="utf-8"
    )
    (folder / "xlore.taxonomy.ttl").write_text(
        "\n".join(
            [
                f"<{I}bdi1> owl:InstanceOf <{C}bdc9> .",
                f"<{C}bdc9> owl:SubClassOf <{C}bdc1> .",
                f'<{C}bdc9> rdfs:label "电影"@zh .',
                f'<{C}bdc77> rdfs:label "无关"@zh .',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return folder


def test_documented_line_shapes(workdir: Path, tmp_path: Path) -> None:
    folder = film_dump(tmp_path / "xlore")
    store, source = build_source(workdir, "xlore", folder, classes={"film": [C + "bdc9"]})
    film = I + "bdi1"
    assert objects(store, film, RDFS_LABEL) == {
        ox.Literal("城市之街", language="zh"),
        ox.Literal("City Streets", language="en"),
    }
    # abstracts: the source tag survives as a private-use subtag of a real language tag
    assert objects(store, film, "http://www.w3.org/2000/01/rdf-schema#comment") == {
        ox.Literal("《城市之街》是1931年的美国电影。", language="zh-x-baidu"),
        ox.Literal('City Streets is a 1931 "noir" film.', language="en-x-enwiki"),
    }
    # infobox properties named like schema relations land under the relation IRIs
    assert objects(store, film, relation_iri("director")) == {ox.NamedNode(I + "bdi3")}
    assert objects(store, film, relation_iri("release_date")) == {ox.Literal("1931年", language="zh")}
    # owl:InstanceOf → rdf:type (plus the domain type from options), owl:SubClassOf → rdfs:subClassOf
    assert objects(store, film, RDF_TYPE) == {ox.NamedNode(C + "bdc9"), ox.NamedNode("https://kgforge.org/class/film")}
    assert objects(store, C + "bdc9", "http://www.w3.org/2000/01/rdf-schema#subClassOf") == {ox.NamedNode(C + "bdc1")}
    entries = [json.loads(line) for line in (workdir / "film" / source["quarantine_file"]).read_text().splitlines()]
    offset = (folder / "xlore.instance.list.ttl").read_bytes().index(b"this line is not a triple")
    assert [e["location"] for e in entries] == [f"xlore.instance.list.ttl line 15 (byte {offset})"]


def test_n_hop_selection_with_fanout_cap(tmp_path: Path) -> None:
    dump = film_dump(tmp_path / "xlore")
    expected = [{"bdi1"}, {"bdi2", "bdi3"}, {"bdi4"}, {"hub"}, {"h0", "h1", "h2"}]
    for hops in (1, 2, 4):
        workdir = tmp_path / f"kg{hops}"
        store, source = build_source(workdir, "xlore", dump, seeds=["bdi1"], hops=hops, fanout_cap=3)
        wanted = set().union(*expected[: hops + 1])
        subjects = {
            q.subject.value.removeprefix(I)
            for q in store.quads_for_pattern(None, None, None, None)
            if q.subject.value.startswith(I)
        }
        assert subjects == wanted & {"bdi1", "bdi3", "bdi4", "hub"}  # those with triples of their own
        assert [source["counts"][f"hop_{h}_entities"] for h in range(hops + 1)] == [
            len(e) for e in expected[: hops + 1]
        ]
    assert source["counts"]["fanout_capped_nodes"] == 1
    # only the concepts the selection refers to come along
    assert objects(store, C + "bdc9", RDFS_LABEL) and not objects(store, C + "bdc77", RDFS_LABEL)


def test_seed_names_ambiguous_reported(tmp_path: Path) -> None:
    store, source = build_source(
        tmp_path / "kg", "xlore", film_dump(tmp_path / "xlore"), seed_names=["城市之街", "同名"], hops=0
    )
    assert objects(store, I + "bdi1", RDFS_LABEL)
    entries = [
        json.loads(line) for line in (tmp_path / "kg" / "film" / source["quarantine_file"]).read_text().splitlines()
    ]
    ambiguous = [e for e in entries if e["location"] == "seed name '同名'"]
    assert ambiguous and ambiguous[0]["reason"].startswith("ambiguous: 2 instances")
    assert not objects(store, I + "bdi5", RDFS_LABEL)


def escaped(value: str) -> str:
    return "".join({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, c) for c in value)


LINE_SHAPES = st.one_of(
    st.builds(
        lambda n, text: f'<bdi{n}> rdfs:label "{escaped(text)}"@zh .'.encode(),
        st.integers(0, 9),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    ),
    st.builds(
        lambda n, p, m: f"<{I}bdi{n}> <http://xlore.org/property/p{p}> <bdi{m}> .".encode(),
        st.integers(0, 9),
        st.integers(0, 3),
        st.integers(0, 9),
    ),
    st.builds(lambda n, m: f"<bdi{n}> owl:InstanceOf <{C}bdc{m}> .".encode(), st.integers(0, 9), st.integers(0, 3)),
    st.sampled_from(
        [
            b"this line is not a triple",
            b"",
            b"# a comment",
            b'nope:x rdfs:label "x" .',
            b'<bdi1> rdfs:label "\xff\xfe"@zh .',
            b"<bdi1> rdfs:label <bad iri> .",
        ]
    ),
)


def batch_journal(dump: Path, cuts: list[int]) -> str:
    """The journal of an extract pass over ``dump`` whose batches start at the given line indexes."""
    cfg = XloreConfig.of(dump, None, {}, {C + "bdc1": "https://kgforge.org/class/film"})
    spec = PassSpec(EXTRACT, cfg, None, parse_xlore_batch)
    lines = [line + b"\n" for line in dump.read_bytes().split(b"\n")[:-1]]
    starts = sorted({0, *(c for c in cuts if c < len(lines))})
    journal = ""
    for start, end in zip(starts, starts[1:] + [len(lines)]):
        data = b"".join(lines[start:end])
        batch = Batch(start + 1, sum(map(len, lines[:start])), data, 0)
        journal += "".join(parse_xlore_batch(batch, spec, data, 0, len(data), BatchResult(0, 0)))
    return journal


def expected_entries(dump: Path) -> list[tuple[str, str]]:
    """What the file gives, read line by line in order: ``("E", location)`` for a line that cannot be read or
    whose triple the store would refuse, ``("T", triple)`` for each triple written."""
    entries = []
    for number, offset, item in file_triples(dump):
        location = f"line {number} (byte {offset})"
        if isinstance(item, LineError):
            entries.append(("E", location))
            continue
        subject, predicate, obj = item
        try:
            entries.append(("T", f"{check_iri(subject.value)} {check_iri(predicate)} {obj.nquads()}"))
        except ValueError:
            entries.append(("E", location))
            continue
        if predicate == RDF_TYPE and obj.value == C + "bdc1":
            entries.append(("T", f"{subject.value} {RDF_TYPE} <https://kgforge.org/class/film>"))
    return entries


def journal_entries(journal: str) -> list[tuple[str, str]]:
    return [
        ("E", json.loads(line[2:])["location"]) if line[0] == "E" else (line[0], line[2:])
        for line in journal.split("\n")[:-1]
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(LINE_SHAPES, max_size=30), st.lists(st.integers(0, 40), max_size=8))
def test_batches_cut_anywhere_read_what_the_whole_file_reads(tmp_path_factory, lines, cuts) -> None:
    dump = tmp_path_factory.mktemp("xlore") / "xlore.instance.list.ttl"
    dump.write_bytes(HEADER.encode() + b"\n".join(lines) + b"\n")
    assert journal_entries(batch_journal(dump, cuts)) == expected_entries(dump)


def test_a_directive_further_down_is_honoured_by_reading_that_file_again_in_order(tmp_path: Path) -> None:
    dump = tmp_path / "xlore" / "xlore.instance.list.ttl"
    dump.parent.mkdir()
    labels = [f'<bdi{n}> rdfs:label "名{n}"@zh .' for n in range(40)]
    dump.write_text(
        HEADER + "\n".join(labels[:20] + ["@base <http://xlore.org/other/> ."] + labels[20:]) + "\n", encoding="utf-8"
    )
    store, source = build_source(tmp_path / "kg", "xlore", dump.parent, workers=2, batch_bytes=256)
    subjects = {
        q.subject.value
        for q in store.quads_for_pattern(None, ox.NamedNode(RDFS_LABEL), None, None)
        if q.subject.value.startswith("http://xlore.org/")
    }
    assert subjects == {I + f"bdi{n}" for n in range(20)} | {f"http://xlore.org/other/bdi{n}" for n in range(20, 40)}
    assert source["counts"]["files_read_in_order"] == 1 and source["counts"]["directives_after_head"] >= 1
    assert source["quarantined"] == 0


def test_a_stopped_xlore_pass_resumes_to_the_journal_of_a_whole_one(tmp_path: Path) -> None:
    dump = film_dump(tmp_path / "xlore") / "xlore.instance.infobox.ttl"
    with open(dump, "a", encoding="utf-8") as out:
        out.writelines(f"<{I}bdi{n}> <http://xlore.org/property/p14> <{I}bdi{n + 1}> .\n" for n in range(200))
    spec = PassSpec(EXTRACT, XloreConfig.of(dump, None, {}, {}), None, parse_xlore_batch)
    whole = run_resumable(dump, spec, tmp_path / "whole", workers=2, batch_bytes=512)
    stopped = run_resumable(
        dump, spec, tmp_path / "parts", workers=2, batch_bytes=512, stop_after_batches=3, checkpoint_seconds=0
    )
    assert 0 < stopped.journal.stat().st_size < whole.journal.stat().st_size
    resumed = run_resumable(dump, spec, tmp_path / "parts", workers=2, batch_bytes=512)
    assert resumed.resumed_from > 0 and resumed.journal.read_bytes() == whole.journal.read_bytes()
    assert whole.journal.read_text().split("\n")[:-1] == [
        f"T {s.value} {p} {o.nquads()}" for _, _, (s, p, o) in file_triples(dump)
    ], "the film dump's 12 lines, 200 more"
    assert whole.counts["triples_read"] == 12 + 200


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_lenient_reader_never_crashes(text: str) -> None:
    reader = TurtleLines(I, {"rdfs": "http://www.w3.org/2000/01/rdf-schema#"})
    try:
        subject, predicate, obj = reader.triple(text)
    except LineError:
        return
    assert subject.is_iri and predicate


@settings(max_examples=100, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
def test_literal_text_round_trips(value: str) -> None:
    reader = TurtleLines(I, {"rdfs": "http://www.w3.org/2000/01/rdf-schema#"})
    _, _, obj = reader.triple(f'<bdi1> rdfs:label "{escaped(value)}"@zhwiki .')
    assert obj.value == value and obj.lang == "zh-x-zhwiki"


# --- the web API client, against a real HTTP server on 127.0.0.1 ---------------------------------

API_GRAPH = {  # name → instances carrying it: (IRI, related names)
    "城市之街": [(I + "bdi1", ["鲁本·马莫利安", "同名", "不存在"])],
    "鲁本·马莫利安": [(I + "bdi3", ["城市之街", "化身博士"])],
    "化身博士": [(I + "bdi7", ["弗雷德里克·马奇"])],
    "弗雷德里克·马奇": [(I + "bdi8", [])],
    "同名": [(I + "bdi5", []), (I + "bdi6", [])],
    "坏链接": [(I + "bad iri", [])],
}
REFUSED = {"坏回复": 404}  # name → the HTTP status the API answers it with


class FakeXlore(BaseHTTPRequestHandler):
    hits: list[tuple[float, str]] = []
    quota = False
    failures = 0
    any_word = True

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        cls = type(self)
        cls.hits.append((time.monotonic(), self.path))
        query = parse_qs(urlparse(self.path).query)
        if cls.failures:
            cls.failures -= 1
            self._reply(503, b"busy")
        elif cls.quota:
            self._reply(200, QUOTA_TEXT.encode("utf-8"))
        elif query.get("instances", [""])[0] in REFUSED:
            self._reply(REFUSED[query["instances"][0]], b"not here")
        elif "instances" in query:
            word = query["instances"][0]
            found = API_GRAPH.get(word, [(I + "bdi1", ["鲁本·马莫利安"])] if cls.any_word else [])
            body = {
                "Instances": [
                    {"Label": word, "Uri": uri, "Related Instances": [{"Label": r} for r in related]}
                    for uri, related in found
                ]
            }
            self._reply(200, json.dumps(body, ensure_ascii=False).encode("utf-8"))
        else:
            self._reply(200, b"<html>not json</html>")

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    FakeXlore.hits, FakeXlore.quota, FakeXlore.failures, FakeXlore.any_word = [], False, 0, True
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeXlore)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_api_cache_rate_limit_and_quota(server: str, tmp_path: Path) -> None:
    client = XloreClient(tmp_path / "cache", base_url=server, min_interval=0.3)
    found = client.search_instances("城市之街")
    assert found[0]["Uri"] == I + "bdi1" and found[0]["Related Instances"][0]["Label"] == "鲁本·马莫利安"
    assert client.search_instances("城市之街") == found
    assert len(FakeXlore.hits) == 1  # the second answer came from the disk cache
    client.search_instances("霸王别姬")
    # at most one request per min_interval; the server clocks arrivals, and the first request's arrival also waited
    # for its connection (the second reuses it), so a loaded machine shortens the gap it sees by that much
    assert FakeXlore.hits[1][0] - FakeXlore.hits[0][0] >= 0.2
    FakeXlore.quota = True
    with pytest.raises(XloreQuotaError, match=QUOTA_TEXT):
        client.search_instances("阿甘正传")
    FakeXlore.quota = False
    assert client.search_instances("阿甘正传")[0]["Label"] == "阿甘正传"  # the quota reply was not cached
    assert len(FakeXlore.hits) == 4


def test_api_retries_then_reports_non_json(server: str, tmp_path: Path) -> None:
    client = XloreClient(tmp_path / "cache", base_url=server, min_interval=0.0, retries=2)
    FakeXlore.failures = 2
    assert client.search_instances("城市之街")[0]["Uri"] == I + "bdi1"
    assert len(FakeXlore.hits) == 3
    with pytest.raises(XloreApiError, match="not JSON"):
        client.get("sigInfo", uri=I + "eni1")
    with pytest.raises(XloreApiError, match="not JSON"):  # and it was not cached either
        client.get("sigInfo", uri=I + "eni1")


@pytest.mark.slow  # builds a store and imports an XLORE dump into it
def test_cli_import_xlore_into_an_existing_store(cli, workdir: Path, tmp_path: Path, shared) -> None:
    cli(
        "build",
        "film",
        "--no-schema-sources",
        "--source",
        f"kdconv-dialogues:{shared('kdconv/film/dev.json')}",
        "--workdir",
        str(workdir),
    )
    result = json.loads(
        cli(
            "import",
            "xlore",
            str(film_dump(tmp_path / "xlore")),
            "--domain",
            "film",
            "--seed",
            "bdi1",
            "--hops",
            "1",
            "--workers",
            "2",
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    assert result["source"]["counts"]["selected_entities"] == 3
    assert result["source"]["counts"]["workers"] == 2 and result["source"]["engine"]["workers"] == 2
    store = Snapshot.open("film", workdir).store()
    assert objects(store, I + "bdi1", relation_iri("director")) == {ox.NamedNode(I + "bdi3")}
    graphs = set(json.loads(domain_paths("film", workdir).manifest.read_text())["graphs"])
    assert any(g.endswith("/kdconv-dialogues/dev") for g in graphs) and any("/xlore/" in g for g in graphs)


def test_api_source_hops_ambiguity_and_quota(server: str, tmp_path: Path) -> None:
    FakeXlore.any_word = False
    workdir = tmp_path / "kg"
    options = {"base_url": server, "min_interval": 0.0, "hops": 1}
    store, source = build_source(workdir, "xlore-api", Path("城市之街"), **options)
    assert labelled(store) == {"bdi1", "bdi3"}  # the seed and the related instance 1 hop away that resolves uniquely
    assert objects(store, I + "bdi1", "http://xlore.org/property#hasReferedTo") == {ox.NamedNode(I + "bdi3")}
    entries = [json.loads(line) for line in (workdir / "film" / source["quarantine_file"]).read_text().splitlines()]
    assert [e["reason"] for e in entries] == ["ambiguous: 2 instances are named '同名'"]
    assert source["counts"]["names_not_found"] == 1
    # two hops further the daily quota strikes: the build fails with the quota message and keeps nothing
    FakeXlore.quota = True
    with pytest.raises(XloreQuotaError, match=QUOTA_TEXT):
        build_source(tmp_path / "kg2", "xlore-api", Path("城市之街"), **dict(options, hops=3))
    # quota lifted: the same build (same cache) finishes, asking the API only what it had not cached
    FakeXlore.quota = False
    before = len(FakeXlore.hits)
    store, source = build_source(tmp_path / "kg2", "xlore-api", Path("城市之街"), **dict(options, hops=3))
    assert labelled(store) == {"bdi1", "bdi3", "bdi7", "bdi8"}
    assert len(FakeXlore.hits) - before == source["counts"]["api_requests"] < 7


def labelled(store: ox.Store) -> set[str]:
    return {
        q.subject.value.removeprefix(I)
        for q in store.quads_for_pattern(None, ox.NamedNode(RDFS_LABEL), None, None)
        if q.subject.value.startswith(I)
    }


def test_api_source_quarantines_a_refused_name_and_a_broken_instance(server: str, tmp_path: Path) -> None:
    FakeXlore.any_word = False
    workdir = tmp_path / "kg"
    store, source = build_source(
        workdir, "xlore-api", Path("城市之街,坏链接,坏回复"), base_url=server, min_interval=0.0, hops=0
    )
    assert labelled(store) == {"bdi1"}  # the good seed lands
    entries = [json.loads(line) for line in (workdir / "film" / source["quarantine_file"]).read_text().splitlines()]
    reasons = {e["location"].rsplit("=", 1)[-1]: e["reason"] for e in entries}
    assert set(reasons) == {quote_plus("坏链接"), quote_plus("坏回复")}
    assert reasons[quote_plus("坏链接")].startswith("unusable instance: not a valid absolute IRI")
    assert reasons[quote_plus("坏回复")].startswith("unusable reply:") and "HTTP 404" in reasons[quote_plus("坏回复")]
