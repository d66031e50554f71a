"""`kgforge derive`: associated pairs from a polars self-join, stop-list, cap with a seeded sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge import Domain
from kgforge.core.errors import ArgumentError, SchemaError
from kgforge.core.resources import query_text
from kgforge.core.schema import load_schema
from kgforge.core.vocab import entity_iri, relation_iri
from kgforge.derive import (
    ASSOCIATED_GRAPH,
    ASSOCIATED_QUADS,
    PAIR_SCHEMA,
    DeriveOptions,
    DeriveSettings,
    _unrank_pairs,
    associate,
    associated_relation,
    options_for,
    write_pairs,
)
from kgforge.publish.transaction import check_store
from kgforge.sources.options import read_options
from kgforge.store import oxigraph
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot


def session(goal, knowledge):
    return json.dumps({"goal": goal, "knowledge": knowledge, "conversation": ["你好", "你好"]}, ensure_ascii=False)


def write_sessions(path: Path) -> Path:
    knowledge = [
        ["哈利 · 波特", "导演", "克里斯 · 哥伦布"],
        ["小鬼当家", "导演", "克里斯 · 哥伦布"],
        ["哈利 · 波特", "领域", "电影"],
        ["小鬼当家", "领域", "电影"],
        ["哈利 · 波特", "类型", "剧情"],
        ["小鬼当家", "类型", "剧情"],
        ["芳华", "类型", "剧情"],
        ["芳华", "领域", "电影"],
        ["周迅", "性别", "女"],
        ["林志玲", "性别", "女"],
        ["周迅", "出生 日期", "1974-10-18"],
        ["林志玲", "出生 日期", "1974-10-18"],
        ["周迅", "评论", "好 演员"],
        ["林志玲", "评论", "好 演员"],
        ["芳华", "评论", 'a "quoted" \\ back\\nslash\nnew line {braces}'],
        ["芳华", "标签", "\\n"],
    ]
    # a hub: six films sharing 国家 美国
    knowledge += [[f"电影{i}", "国家", "美国"] for i in range(6)]
    path.write_text(
        session(
            [
                ["START", "哈利 · 波特", "小鬼当家"],
                ["哈利 · 波特", "导演", "克里斯 · 哥伦布"],
                ["小鬼当家", "导演", "克里斯 · 哥伦布"],
            ],
            knowledge,
        )
        + "\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def built(cli, workdir, tmp_path):
    source = write_sessions(tmp_path / "sessions.jsonl")
    cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir), "--json")
    return workdir


def test_derive_pairs_shares_and_stop_list(cli, built):
    report = json.loads(cli("derive", "duconv", "--max-group", "3", "--workdir", str(built), "--json").stdout)
    rels = report["relations"]
    assert rels["导演"]["pairs"] == 1  # entity object shared
    assert rels["类型"]["pairs"] == 3  # 剧情: three films, all pairs
    assert rels["出生日期"]["pairs"] == 1  # a literal date shared by two stars
    assert "性别" not in rels and report["skipped_relations"]["性别"] == "stop-list"
    assert "领域" not in rels and report["skipped_relations"]["评论"] == "text relation"
    # the hub (6 members > cap 3) gives cap·(cap−1)/2 = 3 sampled pairs; 15 − 3 left out and reported
    assert rels["国家"] == {**rels["国家"], "groups_capped": 1, "pairs": 3, "pairs_possible": 15, "pairs_left_out": 12}
    assert report["pairs_left_out_by_cap"] == 12
    # each phase's wall and CPU seconds, for the benchmark's comparison on a shared machine
    phases = ("read", "join", "write", "load")
    assert set(report["timings"]) == {f"{p}_{unit}" for p in phases for unit in ("seconds", "cpu_seconds")}
    assert all(v >= 0 for v in report["timings"].values()) and report["timings"]["load_cpu_seconds"] > 0


def test_shared_predicate_and_object_write_the_duconv_goal_back(cli, built):
    cli("derive", "duconv", "--workdir", str(built), "--json")
    a, b = entity_iri("哈利·波特"), entity_iri("小鬼当家")
    with QueryRunner(Snapshot.open("duconv", built)) as runner:
        rows = runner.query(query_text("associated_pairs"), {"a": ox.NamedNode(b), "b": ox.NamedNode(a)}).rows
        labels = runner.query(
            "SELECT ?x ?l WHERE { ?x rdfs:label|skos:altLabel ?l }", {"x": ox.NamedNode(entity_iri("克里斯·哥伦布"))}
        )
    shares = {(r["r"].value, r["x"].value) for r in rows}
    assert (relation_iri("director"), entity_iri("克里斯·哥伦布")) in shares
    assert (relation_iri("genre"), "剧情") in shares
    assert {r.get("l").value for r in labels.rows} == {"克里斯·哥伦布", "克里斯 · 哥伦布"}
    store = Snapshot.open("duconv", built).store()
    direct = list(
        store.quads_for_pattern(
            ox.NamedNode(min(a, b)),
            ox.NamedNode(associated_relation(relation_iri("director"))),
            ox.NamedNode(max(a, b)),
            ox.NamedNode(ASSOCIATED_GRAPH),
        )
    )
    assert len(direct) == 1


def test_rerun_replaces_and_is_reproducible(cli, built):
    first = json.loads(cli("derive", "duconv", "--max-group", "3", "--workdir", str(built), "--json").stdout)
    quads_file = built / "duconv" / "quads" / "derived__associated.nq"
    content = quads_file.read_bytes()
    second = json.loads(cli("derive", "duconv", "--max-group", "3", "--workdir", str(built), "--json").stdout)
    assert quads_file.read_bytes() == content  # same seed, same sampled pairs
    manifest = json.loads((built / "duconv" / "manifest.json").read_text())
    derived = [g for g, e in manifest["graphs"].items() if e["kind"] == "derived-associated"]
    assert derived == [ASSOCIATED_GRAPH]
    assert manifest["graphs"][ASSOCIATED_GRAPH]["quads"] == second["quads"] == first["quads"]
    assert manifest["stages"]["derive"]["options"]["max_group"] == 3
    checked = check_store(Snapshot.open("duconv", built))  # the extended store holds exactly what the manifest says
    assert checked.ok, checked.problems
    assert checked.graphs[ASSOCIATED_GRAPH] == second["quads"]
    other = json.loads(
        cli("derive", "duconv", "--max-group", "3", "--seed", "9", "--workdir", str(built), "--json").stdout
    )
    assert other["relations"]["国家"]["pairs"] == 3
    # every re-run extends the checkpoint of the underived store kept beside the current one
    assert (built / "duconv" / "store" / "base-oxigraph").is_dir()
    assert check_store(Snapshot.open("duconv", built)).ok
    store = Snapshot.open("duconv", built).store()
    assert {g.value for g in store.named_graphs()} == set(manifest["graphs"])


def test_the_derived_graph_loaded_in_parts_holds_exactly_its_quads_file(built, monkeypatch):
    """Parts cut at line ends and loaded side by side on threads give the store every line of the file, once."""
    monkeypatch.setattr(oxigraph, "PART_BYTES", 1)
    monkeypatch.setattr(oxigraph.os, "cpu_count", lambda: 7)  # seven parts, whatever the machine
    report = Domain("duconv", built).derive(max_group=3)
    store_folder = (built / "duconv" / "store").resolve()
    written = list(ox.parse(path=str(store_folder / ASSOCIATED_QUADS), format=ox.RdfFormat.N_QUADS))
    store = ox.Store.read_only(str(store_folder / "oxigraph"))
    stored = list(store.quads_for_pattern(None, None, None, ox.NamedNode(ASSOCIATED_GRAPH)))
    assert len(written) == report.quads > 7 and len(stored) == len(set(stored)) and set(stored) == set(written)
    assert check_store(Snapshot.open("duconv", built)).ok


def test_derive_without_store_is_a_clear_error(cli, workdir):
    result = cli("derive", "duconv", "--workdir", str(workdir), check=False)
    assert result.returncode == 1 and "kgforge build duconv" in result.stderr


def test_max_group_below_two_is_rejected():
    with pytest.raises(ArgumentError, match="--max-group: 1 is not a whole number >= 2"):
        DeriveOptions(max_group=1)


@given(st.integers(min_value=2, max_value=400))
@settings(max_examples=60, deadline=None)
def test_unrank_pairs_is_a_bijection(n):
    total = n * (n - 1) // 2
    i, j = _unrank_pairs(np.arange(total, dtype=np.int64))
    assert (i < j).all() and (j < n).all() and (i >= 0).all()
    assert len(set(zip(i.tolist(), j.tolist()))) == total


@given(
    st.lists(
        st.tuples(st.sampled_from("abcdefgh"), st.sampled_from(["p1", "p2"]), st.sampled_from("xyz")), max_size=40
    ),
    st.integers(min_value=2, max_value=4),
    st.integers(min_value=0, max_value=3),
)
@settings(max_examples=60, deadline=None)
def test_associate_matches_brute_force_below_the_cap(rows, cap, seed):
    facts = pl.DataFrame(
        {
            "s": [r[0] for r in rows],
            "p": [r[1] for r in rows],
            "o": [r[2] for r in rows],
            "o_is_entity": [False] * len(rows),
            "o_lang": ["zh"] * len(rows),
            "o_datatype": [None] * len(rows),
            "graph": ["g"] * len(rows),
        },
        schema={
            "s": pl.String,
            "p": pl.String,
            "o": pl.String,
            "o_is_entity": pl.Boolean,
            "o_lang": pl.String,
            "o_datatype": pl.String,
            "graph": pl.String,
        },
    )
    result = associate(facts, {}, DeriveOptions(max_group=cap, seed=seed))
    got = set(result.pairs.select("a", "b", "p", "o").iter_rows())
    groups: dict[tuple[str, str], set[str]] = {}
    for s, p, o in rows:
        groups.setdefault((p, o), set()).add(s)
    for (p, o), members in groups.items():
        expected = {(a, b, p, o) for a in members for b in members if a < b}
        mine = {g for g in got if g[2:] == (p, o)}
        assert mine <= expected
        assert len(mine) == len(expected) if len(members) <= cap else len(mine) == cap * (cap - 1) // 2


def test_relation_budget_keeps_a_seeded_sample(cli, built):
    report = json.loads(cli("derive", "duconv", "--max-pairs", "1", "--workdir", str(built), "--json").stdout)
    rels = report["relations"]
    assert all(r["pairs"] <= 1 for r in rels.values())
    assert rels["类型"]["left_out_by_relation_budget"] == 2 and rels["类型"]["left_out_by_group_cap"] == 0
    assert report["pairs_left_out_by_relation_budget"] == sum(r["left_out_by_relation_budget"] for r in rels.values())
    assert report["options"]["max_pairs"] == 1


@pytest.mark.parametrize("include_derived", [False, True])
def test_quad_file_tables_equal_the_store_tables(cli, built, include_derived):
    from kgforge.store.tables import read_tables, read_tables_from_store, tables_from_quads

    cli("derive", "duconv", "--workdir", str(built))
    snap = Snapshot.open("duconv", built)
    paths, manifest, build = snap.paths, snap.manifest, snap.build
    slow = read_tables_from_store(paths, build, include_derived)
    fast = tables_from_quads(paths, manifest, build, include_derived)
    for name in ("facts", "labels", "types", "relations"):
        a, b = getattr(slow, name), getattr(fast, name)
        assert a.sort(a.columns, nulls_last=True).equals(b.sort(a.columns, nulls_last=True)), name
    (paths.root / "quads" / "derived__associated.nq").unlink()  # files unusable: the store is read instead
    fallback = read_tables(paths, manifest, build, include_derived)
    assert fallback.facts.sort(slow.facts.columns, nulls_last=True).equals(
        slow.facts.sort(slow.facts.columns, nulls_last=True)
    )


def test_derives_own_read_equals_the_tables_it_replaces(cli, built):
    """Derive reads only the source graphs' lines under a relation, each distinct object parsed once: the very
    facts and relations the whole tables give (escaped literals, language tags and datatypes included), from the
    quads files and, when one is gone, from the store."""
    from kgforge.store.tables import read_domain_facts, read_tables_from_store

    cli("derive", "duconv", "--workdir", str(built))  # a published derived graph, which the read leaves out
    snap = Snapshot.open("duconv", built)
    paths, manifest, build = snap.paths, snap.manifest, snap.build
    whole = read_tables_from_store(paths, build)
    expected = {"facts": whole.domain_facts(), "relations": whole.relations}
    assert expected["facts"]["o"].str.contains('"').any() and expected["facts"]["o_lang"].is_not_null().any()
    source = next(e for g, e in manifest.graphs.items() if e.kind == "duconv")
    for read in ("files", "store"):
        lean = read_domain_facts(paths, manifest, build)
        for name, frame in expected.items():
            got = getattr(lean, name)
            assert got.sort(frame.columns, nulls_last=True).equals(frame.sort(frame.columns, nulls_last=True)), (
                read,
                name,
            )
        if read == "files":
            (build / source.quads_file).unlink()  # the files cannot stand in for the store: it is read instead
    assert snap.domain_facts().facts.height == expected["facts"].height


def test_hub_groups_give_exactly_their_share_of_distinct_pairs():
    members = [f"https://x/e{i:03d}" for i in range(300)]
    n = len(members)
    facts = pl.DataFrame(
        {
            "s": members + members[:5],
            "p": ["p"] * n + ["q"] * 5,
            "o": ["hub"] * n + ["small"] * 5,
            "o_is_entity": [False] * (n + 5),
            "o_lang": ["zh"] * (n + 5),
            "o_datatype": [None] * (n + 5),
            "graph": ["g"] * (n + 5),
        },
        schema={
            "s": pl.String,
            "p": pl.String,
            "o": pl.String,
            "o_is_entity": pl.Boolean,
            "o_lang": pl.String,
            "o_datatype": pl.String,
            "graph": pl.String,
        },
    )
    first = associate(facts, {}, DeriveOptions(max_group=4, seed=7)).pairs
    again = associate(facts, {}, DeriveOptions(max_group=4, seed=7)).pairs
    other = associate(facts, {}, DeriveOptions(max_group=4, seed=8)).pairs
    hub = first.filter(pl.col("p") == "p")
    assert hub.height == 6 and hub.select("a", "b").n_unique() == 6
    assert (hub["a"] < hub["b"]).all() and set(hub["a"]) | set(hub["b"]) <= set(members)
    assert first.equals(again) and not first.equals(other)
    assert first.filter(pl.col("p") == "q").height == 6  # 5 members > cap 4: enumerated, 6 of 10 kept


def test_shares_that_differ_only_in_language_write_each_quad_once(tmp_path: Path) -> None:
    row = {
        "a": entity_iri("a"),
        "b": entity_iri("b"),
        "p": relation_iri("tag"),
        "o": "x",
        "o_is_entity": False,
        "o_datatype": None,
    }
    pairs = pl.DataFrame([dict(row, o_lang="en"), dict(row, o_lang="zh")], schema=PAIR_SCHEMA)
    relations = pl.DataFrame({"iri": [relation_iri("tag")], "zh": ["标签"], "en": ["tag"]})
    out = tmp_path / "pairs.nq"
    written = write_pairs(pairs, relations, out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert written == len(lines) == len(set(lines))  # the count the store check compares with
    assert sum("sharedObject" in line for line in lines) == 2  # both shared objects kept


def schema_with_derive_table(tmp_path: Path, table: str):
    """The duconv schema extended with an ``[options.derive]`` table."""
    path = tmp_path / "duconv-derive.toml"
    path.write_text(
        load_schema("duconv").path.read_text(encoding="utf-8") + f"\n[options.derive]\n{table}\n", encoding="utf-8"
    )
    return load_schema(path), path


def test_the_schemas_derive_table_sets_the_defaults_and_flags_win(tmp_path: Path) -> None:
    schema, _ = schema_with_derive_table(tmp_path, "max_group = 4\nmax_pairs = 70\nseed = 3")
    assert options_for(schema) == DeriveOptions(
        max_group=4, max_pairs=70, seed=3, stop_relations=options_for(schema).stop_relations
    )
    assert options_for(schema, max_group=6, seed=0).as_dict() | {"stop_relations": []} == {
        "max_group": 6,
        "max_pairs": 70,
        "seed": 0,
        "stop_relations": [],
        "skip_kinds": ["text"],
    }
    assert options_for(load_schema("duconv")).max_group == 10 and options_for(load_schema("duconv")).stop_relations


@pytest.mark.parametrize(
    "table,message",
    [
        ("max_grup = 4", "unknown option 'max_grup' (did you mean 'max_group'?)"),
        ('seed = "three"', "seed"),
        ("max_group = 1", "max_group"),
    ],
)
def test_a_bad_derive_table_names_the_schema_file_and_the_key(tmp_path: Path, table: str, message: str) -> None:
    schema, path = schema_with_derive_table(tmp_path, table)
    with pytest.raises(SchemaError) as caught:
        options_for(schema)
    assert str(path) in str(caught.value) and "[options.derive]" in str(caught.value)
    assert message in str(caught.value)


def test_an_options_section_that_is_not_a_table_is_named() -> None:
    with pytest.raises(SchemaError, match=r"duconv\.toml: \[options\.derive\] must be a table of keys, not int 5"):
        read_options(DeriveSettings, "duconv.toml", "derive", 5)
