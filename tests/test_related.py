"""kgforge related: exact top-k in the model's geometry, on a model trained on the KdConv travel store."""

from __future__ import annotations

import json

import polars as pl
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kgforge.core.quads import QuadWriter
from kgforge.core.vocab import RDFS_LABEL, entity_iri, graph_iri, relation_iri
from kgforge.embed import EmbedConfig, embed
from kgforge.embed.bundle import Bundle
from kgforge.embed.related import related, search_topk, top_related
from kgforge.publish.transaction import add_graphs
from kgforge.store.layout import domain_paths, staged_build, write_lock
from kgforge.store.manifest import GraphEntry
from kgforge.store.snapshot import Snapshot

KB_TRAVEL = "kdconv/travel/kb_travel.json"
ATTRACTION = "https://kgforge.org/class/attraction"


@pytest.fixture(scope="module")
def travel(tmp_path_factory, shared):
    """A travel store built by the real CLI and a RotatE bundle trained on it."""
    from tests.conftest import run_cli

    workdir = tmp_path_factory.mktemp("kg")
    run_cli("build", "travel", "--source", f"kdconv:{shared(KB_TRAVEL)}", "--workdir", str(workdir))
    config = EmbedConfig(model="RotatE", dim=64, epochs=25, learning_rate=0.02, threads=1)
    summary = embed(Snapshot.open("travel", workdir), config, progress=False)
    return workdir, summary


@pytest.fixture(scope="module")
def shared():
    from tests.conftest import shared_file

    return shared_file


@pytest.mark.slow  # trains a model on the real travel store
def test_gugong_returns_other_attractions_not_itself(travel, cli):
    workdir, _ = travel
    answer = json.loads(cli("related", "travel", "故宫", "--workdir", str(workdir), "--json").stdout)
    assert answer["method"] == "embedding" and answer["metric"] == "l2"
    assert answer["query"]["label"] == "故宫"
    labels = [row["label"] for row in answer["results"]]
    assert len(labels) == 10 and "故宫" not in labels
    assert answer["query"]["iri"] not in [row["iri"] for row in answer["results"]]
    bundle = Bundle.open(workdir / "travel" / "models" / "default")
    types = dict(zip(bundle.entities["iri"], bundle.entities["types"].to_list()))
    assert all(ATTRACTION in types[row["iri"]] for row in answer["results"])
    scores = [row["score"] for row in answer["results"]]
    assert scores == sorted(scores, reverse=True)
    # A fresh process reloading the bundle gives the same answer as this process.
    here = related(Snapshot.open("travel", workdir), "故宫", device="cpu")
    assert [(r["iri"], r["score"]) for r in here.results] == [(r["iri"], r["score"]) for r in answer["results"]]
    by_iri = json.loads(cli("related", "travel", answer["query"]["iri"], "--workdir", str(workdir), "--json").stdout)
    assert by_iri["results"] == answer["results"]


@pytest.mark.slow  # on a model trained on the real travel store
def test_exclude_neighbours_and_type_filter(travel):
    workdir, _ = travel
    bundle = Bundle.open(workdir / "travel" / "models" / "default")
    gugong = bundle.entities.filter(pl.col("label") == "故宫")["id"][0]
    linked = set(bundle.triples.filter(pl.col("h") == gugong)["t"]) | set(
        bundle.triples.filter(pl.col("t") == gugong)["h"]
    )
    plain = related(Snapshot.open("travel", workdir), "故宫", k=20)
    assert linked & {bundle.iri_to_id[r["iri"]] for r in plain.results}  # nearby attractions are close
    far = related(Snapshot.open("travel", workdir), "故宫", k=20, exclude_neighbours=True)
    assert not linked & {bundle.iri_to_id[r["iri"]] for r in far.results}
    typed = related(Snapshot.open("travel", workdir), "故宫", k=5, type_="attraction")
    assert len(typed.results) == 5
    with pytest.raises(Exception, match="matches no entity type"):
        related(Snapshot.open("travel", workdir), "故宫", type_="film")


@pytest.mark.slow  # on a model trained on the real travel store
def test_unknown_name_gets_close_label_suggestions(travel, cli):
    workdir, _ = travel
    result = cli("related", "travel", "故宮", "--workdir", str(workdir), check=False)  # traditional 宮
    assert result.returncode == 1
    assert "did you mean" in result.stderr and "故宫" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # rebuilds the real travel store after training
def test_entity_added_after_training_falls_back_to_graph_neighbours(travel, tmp_path_factory, shared):
    from tests.conftest import run_cli

    workdir = tmp_path_factory.mktemp("kg-later")
    run_cli("build", "travel", "--source", f"kdconv:{shared(KB_TRAVEL)}", "--workdir", str(workdir))
    embed(
        Snapshot.open("travel", workdir),
        EmbedConfig(model="DistMult", dim=16, epochs=2, threads=1, evaluation="none"),
        progress=False,
    )
    paths = domain_paths("travel", workdir)
    new, gugong = entity_iri("新景点测试"), entity_iri("故宫")
    graph = graph_iri("test", "later")
    with write_lock(paths), staged_build(paths) as staging:
        with QuadWriter(staging / "quads" / "later.nq", graph) as writer:
            writer.literal(new, RDFS_LABEL, "新景点测试", lang="zh")
            writer.iri(new, relation_iri("nearby"), gugong)
        add_graphs(
            Snapshot.open(paths),
            staging,
            {graph: GraphEntry(kind="test", quads_file="quads/later.nq", quads=writer.count)},
            {"test": {}},
        )
    answer = related(Snapshot.open("travel", workdir), "新景点测试")
    assert answer.method == "graph-neighbours" and "after model" in answer.notice
    assert [row["iri"] for row in answer.results] == [gugong]
    assert related(Snapshot.open("travel", workdir), new).results == answer.results  # by IRI too
    assert top_related(paths, new, 3) == []


@pytest.mark.slow  # on a model trained on the real travel store
def test_top_related_library_call(travel):
    workdir, _ = travel
    paths = domain_paths("travel", workdir)
    bundle = Bundle.open(paths.models / "default")
    gugong = bundle.entities.filter(pl.col("label") == "故宫")["iri"][0]
    rows = top_related(paths, gugong, 3)
    assert len(rows) == 3 and all(isinstance(score, float) for _, _, score in rows)
    assert gugong not in [iri for iri, _, _ in rows]
    assert [(iri, label) for iri, label, _ in rows] == [
        (r["iri"], r["label"]) for r in related(Snapshot.open("travel", workdir), gugong, k=3).results
    ]


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(5, 60),
    dim=st.integers(1, 8),
    k=st.integers(1, 8),
    chunk=st.integers(1, 17),
    metric=st.sampled_from(["cosine", "l2"]),
    seed=st.integers(0, 10**6),
)
@example(rows=16, dim=1, k=1, chunk=1, metric="l2", seed=381)  # |q|²-2q·v+|v|² cancels to 0 near a neighbour
@example(rows=5, dim=1, k=1, chunk=1, metric="l2", seed=0)  # a chunk of excluded rows must stay excluded
@example(rows=26, dim=1, k=1, chunk=1, metric="l2", seed=58)  # neighbours 1.1e-4 apart, past cdist's 25 rows
def test_chunked_search_equals_brute_force(rows, dim, k, chunk, metric, seed):
    generator = torch.Generator().manual_seed(seed)
    vectors = torch.randn(rows, dim, generator=generator)
    if metric == "cosine":
        vectors = torch.nn.functional.normalize(vectors, dim=1)
    queries = vectors[:3]
    exclude = [torch.tensor([i, (i + 1) % rows]) for i in range(3)]
    scores, ids = search_topk(vectors, queries, k, metric, exclude=exclude, chunk_rows=chunk, query_batch=2)
    # the reference distances by differences: past 25 rows cdist itself switches to |q|²-2q·v+|v|² and its
    # cancellation (a distance of 1e-4 read as 0), which the search corrects for (_exact_l2)
    exact = "donot_use_mm_for_euclid_dist"
    full = queries @ vectors.t() if metric == "cosine" else -torch.cdist(queries, vectors, compute_mode=exact)
    for i in range(3):
        full[i, exclude[i]] = float("-inf")
    expected = full.topk(min(k, rows), dim=1).values
    assert torch.allclose(scores, expected, atol=1e-4)
    for i in range(3):
        returned = {int(j) for j, score in zip(ids[i], scores[i]) if score > float("-inf")}
        assert not returned & set(exclude[i].tolist())


def test_bundle_saved_in_format_1_still_loads_and_answers_the_same():
    """tests/fixtures/bundle_v1 was written by kgforge 0.1.0 (format 1) from a made-up graph; keep it loading."""
    from pathlib import Path

    from kgforge.embed.bundle import entity_vectors
    from kgforge.embed.related import RelatedIndex

    folder = Path(__file__).parent / "fixtures" / "bundle_v1"
    bundle = Bundle.open(folder, verify=True)
    index = RelatedIndex(bundle, "cpu")
    expected = json.loads((folder / "expected_related.json").read_text(encoding="utf-8"))
    for label, rows in expected.items():
        entity = index.labels.index(label)
        got = index.top([entity], len(rows))[0]
        assert [index.iris[i] for i, _ in got] == [iri for iri, _ in rows]
        assert [round(score, 4) for _, score in got] == pytest.approx([score for _, score in rows], abs=1e-4)
    model = bundle.model()
    assert torch.allclose(entity_vectors(model, bundle.metric), bundle.vectors)


def test_a_lookup_in_a_bundle_never_loads_pykeen():
    """PyKEEN and scikit-learn take seconds to import; a related-entity search reads vectors and tables only."""
    import subprocess
    import sys
    from pathlib import Path

    folder = Path(__file__).parent / "fixtures" / "bundle_v1"
    probe = (
        "import sys; from kgforge.embed.bundle import Bundle; from kgforge.embed.related import RelatedIndex; "
        f"index = RelatedIndex(Bundle.open({str(folder)!r}), 'cpu'); index.top([0], 3); "
        "print(sorted(m for m in ('pykeen', 'sklearn') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def url_labels(tmp_path_factory):
    """A small bundle (PyKEEN's Nations graph) whose first entities are labelled like IRIs: one with a
    space (not a valid IRI), one a valid IRI that is no entity's IRI."""
    from pykeen.datasets import Nations

    from kgforge.embed import train_bundle, triple_set_from_ids

    factory = Nations()
    triple_set = triple_set_from_ids(
        factory.training.mapped_triples,
        factory.validation.mapped_triples,
        factory.testing.mapped_triples,
        list(factory.training.entity_to_id),
        list(factory.training.relation_to_id),
    )
    iris = triple_set.entities["iri"].to_list()
    labels = {iri: f"nation {iri}" for iri in iris} | {iris[0]: "http://x y", iris[1]: "http://example.org/site"}
    workdir = tmp_path_factory.mktemp("kg-urls")
    config = EmbedConfig(model="DistMult", dim=8, epochs=1, threads=1, evaluation="none")
    train_bundle(triple_set, config, domain_paths("nations", workdir).models / "default", labels=labels, progress=False)
    return workdir, iris


def test_labels_that_look_like_iris_resolve_as_labels(url_labels, cli):
    workdir, iris = url_labels
    assert related(domain_paths("nations", workdir), "http://x y", k=2).query.iri == iris[0]
    assert related(domain_paths("nations", workdir), "http://example.org/site", k=2).query.iri == iris[1]
    answer = json.loads(cli("related", "nations", "http://x y", "--workdir", str(workdir), "--json").stdout)
    assert answer["query"] == {"text": "http://x y", "iri": iris[0], "label": "http://x y"}
    missing = cli("related", "nations", "http://no such y", "--workdir", str(workdir), check=False)
    assert missing.returncode == 1 and "no entity" in missing.stderr and "Traceback" not in missing.stderr
