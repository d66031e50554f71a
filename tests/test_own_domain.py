"""A domain of one's own, through the CLI on real stores: `kgforge init` from a CSV, the same data as CSV,
Turtle and JSON Lines giving one graph, a domain with no schema at all, and OpenDialKG's release files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest

EX = "http://example.org/"
AUTHORS = {"p1": "Lin Qiu", "p2": "Ada Moor", "p3": "Chen Hui", "p4": "Omar Field", "p5": "Rosa Lind", "p6": "Wen Jie"}
BOOKS = [  # id, title, author ids, year, genres: 14 books + 6 authors = 20 entities
    ("b1", "The Fog City", ["p1"], 1999, ["mystery", "noir"]),
    ("b2", "River Songs", ["p1", "p2"], 2004, ["poetry"]),
    ("b3", "Salt and Iron", ["p3"], 1987, ["history"]),
    ("b4", "Night Ferry", ["p4"], 2011, ["mystery"]),
    ("b5", "The Glass Orchard", ["p5"], 2015, ["fantasy"]),
    ("b6", "Lanterns, Unlit", ["p6"], 2020, ["poetry", "essays"]),
    ("b7", "A Map of Tides", ["p2"], 1995, ["travel"]),
    ("b8", "Quiet Engines", ["p4", "p3"], 2008, ["science"]),
    ("b9", "The Last Archivist", ["p5"], 2019, ["fantasy", "mystery"]),
    ("b10", "Paper Mountains", ["p6"], 2001, ["travel"]),
    ("b11", "Winter Ledger", ["p1"], 2013, ["history"]),
    ("b12", "Small Hours", ["p2"], 1990, ["poetry"]),
    ("b13", "Copper Sky", ["p3"], 2022, ["science"]),
    ("b14", "The Borrowed Coat", ["p4"], 2006, ["noir"]),
]


def write_books_csv(path: Path) -> Path:
    lines = ["id,name,type,author,year,genre"]
    lines += [
        f'{EX}{bid},"{title}",book,{"|".join(AUTHORS[a] for a in authors)},{year},{"|".join(genres)}'
        for bid, title, authors, year, genres in BOOKS
    ]
    lines += [f"{EX}{pid},{name},person,,," for pid, name in AUTHORS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_books_turtle(path: Path) -> Path:
    lines = [f"@prefix ex: <{EX}> .", "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> ."]
    for bid, title, authors, year, genres in BOOKS:
        lines.append(
            f'ex:{bid} a ex:Book ; rdfs:label "{title}"@en ; ex:author {", ".join("ex:" + a for a in authors)} ;'
            f" ex:year {year} ; ex:genre {', '.join(json.dumps(g) + '@en' for g in genres)} ."
        )
    lines += [f'ex:{pid} a ex:Person ; rdfs:label "{name}"@en .' for pid, name in AUTHORS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_books_jsonl(path: Path) -> Path:
    records = [
        {
            "id": EX + bid,
            "name": title,
            "type": "book",
            "author": [AUTHORS[a] for a in authors],
            "year": year,
            "genre": genres,
        }
        for bid, title, authors, year, genres in BOOKS
    ]
    records += [{"id": EX + pid, "name": name, "type": "person"} for pid, name in AUTHORS.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def triples(cli, domain: str, workdir: Path, out: Path) -> set[str]:
    cli("export-rdf", domain, "--format", "nt", "--out", str(out), "--workdir", str(workdir))
    return {str(q.triple) for q in ox.parse(path=out, format=ox.RdfFormat.N_TRIPLES)}


def goals_then_export(cli, domain: str, n: int, workdir: Path, folder: Path) -> list[dict]:
    """`kgforge goals` (KdConv-style paths) then `kgforge export --format jsonl` of them: the exported dialogues,
    checked to be one per goal, in order."""
    goals, out = folder / f"{domain}.goals.jsonl", folder / f"{domain}.jsonl"
    cli(
        "goals",
        domain,
        "--n",
        str(n),
        "--style",
        "kdconv",
        "--hops",
        "1..2",
        "--out",
        str(goals),
        "--workdir",
        str(workdir),
    )
    written = [json.loads(line) for line in goals.read_text().splitlines()]
    assert len(written) == n
    cli("export", domain, "--goals", str(goals), "--format", "jsonl", "--out", str(out), "--workdir", str(workdir))
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["goal_id"] for e in exported] == [g["goal_id"] for g in written]
    return exported


@pytest.mark.slow  # init and three builds through the CLI, compared
def test_init_build_query_from_a_csv_and_the_same_graph_from_turtle_and_jsonl(tmp_path, workdir, cli):
    csv_file = write_books_csv(tmp_path / "books.csv")
    init = cli("init", "books", "--from", str(csv_file), "--workdir", str(workdir), "--json")
    inferred = json.loads(init.stdout)
    assert inferred["relations"]["author"]["kind"] == "entity"
    assert inferred["relations"]["year"] == {"zh": "year", "en": "year", "kind": "literal", "datatype": "xsd:integer"}
    assert inferred["relations"]["genre"]["kind"] == "literal"
    assert inferred["type_relation"] == "type" and set(inferred["types"]) == {"book", "person"}
    assert inferred["settings"]["records"] == {"id": "id", "label": "name", "separator": "|"}
    assert inferred["language"] == "en"
    schema_file = workdir / "books" / "schema.toml"
    assert Path(inferred["schema"]) == schema_file and "inferred = true" in schema_file.read_text()
    again = cli("init", "books", "--from", str(csv_file), "--workdir", str(workdir), check=False)
    assert again.returncode == 1 and "exists already" in again.stderr

    build = json.loads(cli("build", "books", "--source", f"csv:{csv_file}", "--workdir", str(workdir), "--json").stdout)
    assert build["records_ok"] == 20 and build["records_bad"] == 0
    answer = cli(
        "query",
        "books",
        "SELECT ?name ?title ?year WHERE { ?book kgr:author ?a ; rdfs:label ?title ; kgr:year ?year . "
        "?a rdfs:label ?name } ORDER BY ?year",
        "--bind",
        "name@en=Ada Moor",
        "--format",
        "json",
        "--workdir",
        str(workdir),
    )
    rows = json.loads(answer.stdout)["results"]["bindings"]
    assert [(r["title"]["value"], int(r["year"]["value"])) for r in rows] == [
        ("Small Hours", 1990),
        ("A Map of Tides", 1995),
        ("River Songs", 2004),
    ]
    assert all(r["year"]["datatype"] == "http://www.w3.org/2001/XMLSchema#integer" for r in rows)
    typed = cli(
        "query",
        "books",
        "SELECT (COUNT(?b) AS ?n) WHERE { ?b a kgc:book }",
        "--format",
        "csv",
        "--workdir",
        str(workdir),
    )
    assert typed.stdout.split()[-1] == "14"

    from_csv = triples(cli, "books", workdir, tmp_path / "csv.nt")
    for kind, path in (
        ("rdf", write_books_turtle(tmp_path / "books.ttl")),
        ("jsonl", write_books_jsonl(tmp_path / "books.jsonl")),
    ):
        domain = f"books_{kind}"
        cli("build", domain, "--schema", str(schema_file), "--source", f"{kind}:{path}", "--workdir", str(workdir))
        assert triples(cli, domain, workdir, tmp_path / f"{kind}.nt") == from_csv, kind
    assert len(from_csv) > 20 * 3


def test_a_domain_without_schema_builds_and_every_stage_works_on_what_was_inferred(tmp_path, workdir, cli):
    csv_file = write_books_csv(tmp_path / "books.csv")
    build = cli("build", "shelf", "--source", f"csv:{csv_file}", "--workdir", str(workdir))
    assert "inferred" in build.stdout and "note: the schema of domain 'shelf' was inferred" in build.stderr
    manifest = json.loads((workdir / "shelf" / "manifest.json").read_text())
    assert manifest["schema"]["inferred"] is True
    assert Path(manifest["schema"]["path"]).parent == (workdir / "shelf" / "store").resolve()

    stats = json.loads(cli("stats", "shelf", "--workdir", str(workdir), "--json").stdout)
    assert stats["schema_inferred"] is True and stats["entities"] == 14
    assert stats["entities_by_type"] == {"book": 14, "person": 6}
    query = cli(
        "query",
        "shelf",
        'SELECT ?t WHERE { ?b kgr:genre "noir"@en ; rdfs:label ?t } ORDER BY ?t',
        "--format",
        "csv",
        "--workdir",
        str(workdir),
    )
    assert query.stdout.splitlines()[1:] == ["The Borrowed Coat", "The Fog City"]
    derive = json.loads(cli("derive", "shelf", "--workdir", str(workdir), "--json").stdout)
    assert derive["pairs"] > 0
    exported = goals_then_export(cli, "shelf", 6, workdir, tmp_path)
    wrote = {(title, AUTHORS[a]) for _, title, authors, _, _ in BOOKS for a in authors}
    for dialogue in exported:
        assert dialogue["path"] and all(t in dialogue["triples"] for t in dialogue["path"])
        authored = {(t["s_label"], t["o_label"]) for t in dialogue["triples"] if t["p_label"] == "author"}
        assert authored and authored <= wrote
    # derive published a new build: the inferred schema went with it, and the stages still find it
    assert json.loads(cli("stats", "shelf", "--workdir", str(workdir), "--json").stdout)["schema_inferred"] is True
    cli("derive", "shelf", "--workdir", str(workdir))
    cli("derive", "shelf", "--workdir", str(workdir))
    assert json.loads(cli("stats", "shelf", "--workdir", str(workdir), "--json").stdout)["entities"] == 14


@pytest.mark.slow  # builds OpenDialKG's release files, then goals and an export
def test_opendialkg_release_builds_and_goals_and_jsonl_export_work(tmp_path, workdir, cli, shared):
    entities_file = shared("opendialkg/opendialkg_entities.head5000.txt")
    relations = shared("opendialkg/opendialkg_relations.txt").read_text(encoding="utf-8").splitlines()
    names = [n for n in entities_file.read_text(encoding="utf-8").splitlines() if n.strip()][:40]
    forward = [r for r in relations if r and not r.startswith("~")][:6]
    assert len(names) == 40 and len(forward) == 6
    release = tmp_path / "opendialkg"
    release.mkdir()
    shutil.copyfile(entities_file, release / "opendialkg_entities.txt")
    # the triples blob is not in the sample: its documented layout, both directions, over the sample's real names
    # two facts from each name, so each takes part in about four: enough to be a goal topic (goals.MIN_TOPIC_FACTS)
    facts = [
        (names[i], forward[(i + k) % len(forward)], names[(i * 7 + k) % len(names)])
        for i in range(len(names))
        for k in (3, 11)
    ]
    facts = [f for f in facts if f[0] != f[2]]
    lines = [f"{s}\t{r}\t{o}" for s, r, o in facts] + [f"{o}\t~{r}\t{s}" for s, r, o in facts]
    (release / "opendialkg_triples.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")

    build = json.loads(
        cli("build", "odkg", "--source", f"opendialkg:{release}", "--workdir", str(workdir), "--json").stdout
    )
    assert build["schema"]["inferred"] is True and build["records_bad"] == 0
    count = cli(
        "query",
        "odkg",
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o . ?p a rdf:Property }",
        "--format",
        "csv",
        "--workdir",
        str(workdir),
    )
    assert int(count.stdout.split()[-1]) == len(set(facts))  # each bidirectional pair is one fact, kept forward
    stats = json.loads(cli("stats", "odkg", "--workdir", str(workdir), "--json").stdout)
    assert stats["entity_nodes"] == len({s for s, _, _ in facts} | {o for _, _, o in facts})
    labels = cli(
        "query",
        "odkg",
        "SELECT (COUNT(DISTINCT ?e) AS ?n) WHERE { ?e rdfs:label ?l FILTER STRSTARTS(STR(?e), STR(kge:)) }",
        "--format",
        "csv",
        "--workdir",
        str(workdir),
    )
    listed = {n.strip() for n in entities_file.read_text(encoding="utf-8").splitlines() if n.strip()}
    assert int(labels.stdout.split()[-1]) == len(listed)  # every listed entity, with facts or without

    for dialogue in goals_then_export(cli, "odkg", 5, workdir, tmp_path):
        said = {(t["s_label"], t["p_label"], t["o_label"]) for t in dialogue["triples"] if t["p_label"] in forward}
        assert dialogue["path"] and said and said <= set(facts)  # forward, as the release states them


@pytest.mark.parametrize("variant", ["zh-hant", "zh-tw", "zh-hk", "zh-mo"])
def test_a_traditional_label_is_converted_and_preferred_over_mul(tmp_path, workdir, cli, variant):
    entity = {
        "type": "item",
        "id": "Q900001",
        "labels": {
            variant: {"language": variant, "value": "霧城之夜"},
            "mul": {"language": "mul", "value": "Fog City Night"},
        },
        "aliases": {variant: [{"language": variant, "value": "霧之城"}]},
        "descriptions": {},
        "claims": {},
    }
    dump = tmp_path / "dump.json"
    dump.write_text("[\n" + json.dumps(entity, ensure_ascii=False) + "\n]\n", encoding="utf-8")
    cli("build", "wd", "--source", f"wikidata:{dump}", "--workdir", str(workdir))
    rows = cli(
        "query",
        "wd",
        "SELECT ?p ?name WHERE { ?e ?p ?name FILTER(isLiteral(?name)) } ORDER BY ?p ?name",
        "--format",
        "json",
        "--workdir",
        str(workdir),
    )
    found = {
        (b["p"]["value"].rsplit("#", 1)[-1], b["name"]["value"], b["name"].get("xml:lang"))
        for b in json.loads(rows.stdout)["results"]["bindings"]
    }
    assert ("label", "雾城之夜", "zh-hans") in found  # converted, and chosen over mul for zh
    assert ("label", "Fog City Night", "mul") in found  # en falls back to mul as before
    assert ("altLabel", "霧城之夜", variant) in found  # the original kept as an alias
    assert ("altLabel", "雾之城", "zh-hans") in found and ("altLabel", "霧之城", variant) in found
    assert not any(p == "label" and lang == variant for p, _, lang in found)
