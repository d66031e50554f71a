"""The metrics beyond the official five, each against its reference implementation on the same input:
CIDEr-D (pycocoevalcap), METEOR (NLTK), Distinct-n for any n, the embedding metrics (a direct numpy
computation on a small vector file the test writes), BERTScore (a tiny random BERT the test builds, against a
direct torch computation), BLEURT (a tiny random regression checkpoint, against its logits computed directly); and the metric registry (aliases, did you mean, plug-ins by entry point)."""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from kgforge.core.errors import ArgumentError
from kgforge.evaluation import METRICS, EvalOptions, EvalReport, evaluate
from kgforge.evaluation.caption import meteor_stages
from kgforge.evaluation.embedding import read_vectors
from kgforge.evaluation.registry import MetricRegistry

WORDS = ["我", "喜欢", "这部", "电影", "他", "是", "导演", "一位", "演员", "好", "的", "吧", "看", "去"]


def corpus(size: int = 60, seed: int = 3) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(size):
        gold = [rng.choice(WORDS) for _ in range(rng.randint(1, 10))]
        pred = [w if rng.random() < 0.6 else rng.choice(WORDS) for w in gold][: rng.randint(0, 11)]
        pairs.append((pred, gold))
    return pairs


def write_pairs(path: Path, pairs) -> Path:
    path.write_text("".join(f"{' '.join(p)}\t{' '.join(g)}\n" for p, g in pairs), encoding="utf-8")
    return path


def per_response(tmp_path: Path, pairs, **options) -> tuple[EvalReport, list[dict]]:
    source = write_pairs(tmp_path / "pairs.tsv", [(p or ["空"], g) for p, g in pairs])
    out = tmp_path / "scores.jsonl"
    report = evaluate(source, out=out, options=EvalOptions(**options))
    return report, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_cider_d_equals_pycocoevalcap(tmp_path):
    from pycocoevalcap.cider.cider import Cider

    pairs = [(p or ["空"], g) for p, g in corpus()]
    report, rows = per_response(tmp_path, pairs, metrics=("cider",))
    gts = {i: [" ".join(g)] for i, (_, g) in enumerate(pairs)}
    res = {i: [" ".join(p)] for i, (p, _) in enumerate(pairs)}
    score, scores = Cider().compute_score(gts, res)
    assert report.metrics["cider"] == pytest.approx(score, abs=1e-6)
    assert [row["cider"] for row in rows] == pytest.approx(list(scores), abs=1e-6)
    assert evaluate(tmp_path / "pairs.tsv", options=EvalOptions(metrics=("CIDEr-D",))).metrics[
        "cider"
    ] == pytest.approx(score, abs=1e-6)  # the alias


@pytest.mark.slow  # NLTK's METEOR over a corpus, side by side
def test_meteor_equals_nltk_with_the_stages_that_run(tmp_path):
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score

    english = [
        (["the", "cats", "are", "sitting", "on", "mats"], ["a", "cat", "sat", "on", "the", "mat"]),
        (["he", "directed", "films"], ["he", "is", "a", "film", "director"]),
        (["running", "quickly", "home"], ["he", "runs", "home", "quickly"]),
    ]
    pairs = english + [(p or ["空"], g) for p, g in corpus(30)]
    report, rows = per_response(tmp_path, pairs, metrics=("meteor",))
    stages = meteor_stages()
    assert report.resources["meteor_stages"] == stages and stages[:2] == ["exact", "stem"]

    class NoSynonyms:
        @staticmethod
        def synsets(word, *args, **kwargs):
            return []

    wordnet = NoSynonyms()
    if "synonym" in stages:
        from nltk.corpus import wordnet
    expected = [meteor_score([g], p, stemmer=PorterStemmer(), wordnet=wordnet) for p, g in pairs]
    assert [row["meteor"] for row in rows] == pytest.approx(expected, abs=1e-6)
    assert rows[0]["meteor"] > 0.3  # cats~cat, mats~mat by the stem stage


@pytest.mark.parametrize("n", [1, 3, 4, 5, 7])
def test_distinct_n_for_any_n(tmp_path, n):
    pairs = corpus(40, seed=n)
    report, rows = per_response(tmp_path, pairs, metrics=(f"distinct-{n}",))
    preds = [p or ["空"] for p, _ in pairs]
    keys = ["".join(p[i : i + n]) for p in preds for i in range(len(p) - n + 1)]  # the official key: tokens joined
    assert report.metrics[f"distinct{n}"] == pytest.approx(len(set(keys)) / len(keys) if keys else 0.0)
    first = [p[i : i + n] for p in preds[:1] for i in range(len(p) - n + 1)]
    if first:
        assert rows[0][f"distinct{n}"] == pytest.approx(len({"".join(g) for g in first}) / len(first))


def write_vectors(path: Path, words: list[str], matrix: np.ndarray, binary: bool) -> Path:
    if binary:
        with open(path, "wb") as handle:
            handle.write(f"{len(words)} {matrix.shape[1]}\n".encode())
            for word, row in zip(words, matrix, strict=True):
                handle.write(word.encode("utf-8") + b" " + struct.pack(f"<{len(row)}f", *row) + b"\n")
    else:
        path.write_text(
            f"{len(words)} {matrix.shape[1]}\n"
            + "".join(
                word + " " + " ".join(repr(float(x)) for x in row) + "\n"
                for word, row in zip(words, matrix, strict=True)
            ),
            encoding="utf-8",
        )
    return path


def reference_embedding(vectors: dict[str, np.ndarray], pred: list[str], gold: list[str]) -> tuple:
    """The three metrics straight from their definitions (Liu et al. 2016)."""
    a = np.array([vectors[w] for w in pred if w in vectors])
    b = np.array([vectors[w] for w in gold if w in vectors])
    if not len(a) or not len(b):
        return None, None, None

    def cos(x, y):
        return float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))

    def extreme(m):
        return np.array([col.max() if abs(col.max()) >= abs(col.min()) else col.min() for col in m.T])

    sims = np.array([[cos(x, y) for y in b] for x in a])
    greedy = (np.mean([row.max() for row in sims]) + np.mean([col.max() for col in sims.T])) / 2
    return cos(a.sum(axis=0), b.sum(axis=0)), cos(extreme(a), extreme(b)), greedy


@pytest.mark.parametrize("binary", [False, True])
def test_embedding_metrics_equal_numpy(tmp_path, binary):
    rng = np.random.default_rng(7)
    known = WORDS[:-2]  # 吧, 看 ... two words have no vector
    matrix = rng.normal(size=(len(known), 8)).astype(np.float32)
    path = write_vectors(tmp_path / ("v.bin" if binary else "v.txt"), known, matrix, binary)
    vectors = {w: matrix[i].astype(np.float64) for i, w in enumerate(known)}
    assert set(read_vectors(path).index) == set(known)
    pairs = corpus(50)
    report, rows = per_response(tmp_path, pairs, vectors=path)
    for (pred, gold), row in zip(pairs, rows, strict=True):
        average, extrema, greedy = reference_embedding(vectors, pred or ["空"], gold)
        for name, value in (("embedding_average", average), ("vector_extrema", extrema), ("greedy_matching", greedy)):
            assert (row[name] is None) == (value is None)
            if value is not None:
                assert row[name] == pytest.approx(value, abs=1e-6)
    assert (
        report.resources["vectors"]["dim"] == 8
        and report.resources["vectors"]["tokens_known"] < report.resources["vectors"]["tokens"]
    )
    no_vectors = evaluate(tmp_path / "pairs.tsv")
    assert "vectors" in no_vectors.left_out["greedy_matching"]


def test_bad_vector_file_names_its_line(tmp_path, cli):
    bad = tmp_path / "v.txt"
    bad.write_text("2 3\n我 1 2 3\n他 1 x 3\n", encoding="utf-8")
    source = write_pairs(tmp_path / "pairs.tsv", corpus(3))
    done = cli("eval", str(source), "--vectors", str(bad), "--no-out", check=False)
    assert done.returncode == 1 and f"{bad}:3: a vector value is not a number" in done.stderr
    assert "Traceback" not in done.stderr


def tiny_bert(folder: Path) -> Path:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("bert_score")
    import torch

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({ch for w in WORDS for ch in w})]
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=64).save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    transformers.BertModel(config).save_pretrained(folder)
    return folder


@pytest.mark.slow  # loads a transformers model and bert-score
def test_bertscore_on_a_tiny_random_model(tmp_path, cli):
    """The end-to-end path with a real (tiny, random) model; the values equal greedy cosine matching of the
    last layer's token vectors, [CLS] and [SEP] left out, computed here with torch."""
    model = tiny_bert(tmp_path / "tiny")
    import torch
    from transformers import AutoModel, AutoTokenizer

    pairs = corpus(8)
    source = write_pairs(tmp_path / "pairs.tsv", [(p or ["空"], g) for p, g in pairs])
    done = cli(
        "eval",
        str(source),
        "--model-path",
        str(model),
        "--metrics",
        "bertscore_p,bertscore_r,bertscore_f1",
        "--out",
        str(tmp_path / "s.jsonl"),
        "--json",
        env={"HF_HUB_OFFLINE": "1"},
    )
    report = json.loads(done.stdout)
    assert report["model"]["layer"] == 2
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()]
    tokenizer, network = AutoTokenizer.from_pretrained(model), AutoModel.from_pretrained(model).eval()

    def embed(text: str) -> torch.Tensor:
        with torch.no_grad():
            states = network(**tokenizer(text, return_tensors="pt")).last_hidden_state[0, 1:-1]
        return states / states.norm(dim=-1, keepdim=True)

    for row in rows:
        sims = embed(row["prediction"]) @ embed(row["gold"]).T
        p, r = float(sims.max(dim=1).values.mean()), float(sims.max(dim=0).values.mean())
        assert row["bertscore_p"] == pytest.approx(p, abs=1e-5) and row["bertscore_r"] == pytest.approx(r, abs=1e-5)
        assert row["bertscore_f1"] == pytest.approx(2 * p * r / (p + r), abs=1e-5)


def test_bertscore_without_a_model_says_which_flag(tmp_path, cli):
    source = write_pairs(tmp_path / "pairs.tsv", corpus(3))
    done = cli("eval", str(source), "--metrics", "bertscore_f1", "--no-out", check=False)
    assert done.returncode == 1 and "--model-path" in done.stderr and "kgforge[bertscore]" in done.stderr


def tiny_bleurt(folder: Path) -> Path:
    """A BLEURT-shaped checkpoint as the PyTorch ports save it: a BERT with one regression output and a
    WordPiece tokenizer, randomly initialised (seeded), small enough to run in a second."""
    transformers = pytest.importorskip("transformers")
    import torch

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted({ch for w in WORDS for ch in w})]
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=24).save_pretrained(folder)
    torch.manual_seed(1)
    # weights wider than BERT's 0.02 so that the random scores differ visibly from pair to pair
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_labels=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=24,
        initializer_range=0.5,
    )
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    return folder


@pytest.mark.slow  # loads a transformers checkpoint
def test_bleurt_on_a_tiny_random_checkpoint(tmp_path, cli):
    """Through ``kgforge eval``: each score equals the checkpoint's logit for (gold, prediction) tokenised as
    one pair, computed here one pair at a time (equal up to float32 rounding: kgforge scores padded batches); long pairs are
    cut to the model's length and counted."""
    model = tiny_bleurt(tmp_path / "bleurt")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    pairs = [(p or ["空"], g) for p, g in corpus(40)] + [(WORDS * 2, WORDS)]  # the last pair is too long
    source = write_pairs(tmp_path / "pairs.tsv", pairs)
    done = cli(
        "eval",
        str(source),
        "--bleurt-path",
        str(model),
        "--metrics",
        "bleurt",
        "--out",
        str(tmp_path / "s.jsonl"),
        "--json",
        env={"HF_HUB_OFFLINE": "1"},
    )
    report = json.loads(done.stdout)
    assert report["bleurt"]["max_length"] == 24 and report["bleurt"]["pairs_truncated"] >= 1
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(pairs)
    tokenizer = AutoTokenizer.from_pretrained(model)
    network = AutoModelForSequenceClassification.from_pretrained(model).eval()
    expected = []
    for row in rows:
        with torch.no_grad():
            encoded = tokenizer(row["gold"], row["prediction"], truncation=True, max_length=24, return_tensors="pt")
            expected.append(float(network(**encoded).logits[0, 0]))
        # float32: a pair scored in a padded batch and alone differ in the 7th digit (BLAS summation order)
        assert row["bleurt"] == pytest.approx(expected[-1], abs=1e-5)
    assert len({round(x, 3) for x in expected}) > 20  # the scores differ by pair: the texts reach the model
    assert report["metrics"]["bleurt"] == pytest.approx(float(np.mean(expected)), abs=1e-5)


def test_bleurt_without_a_checkpoint_says_which_flag(tmp_path, cli):
    source = write_pairs(tmp_path / "pairs.tsv", corpus(3))
    done = cli("eval", str(source), "--metrics", "bleurt", "--no-out", check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--bleurt-path" in done.stderr and "kgforge[bleurt]" in done.stderr


def test_bleurt_refuses_a_model_that_is_not_a_regression_checkpoint(tmp_path, cli):
    """A plain encoder (BERTScore's kind of model) or the bleurt-pytorch layout: one line naming the flag."""
    source = write_pairs(tmp_path / "pairs.tsv", corpus(3))
    encoder = tiny_bert(tmp_path / "encoder")
    done = cli("eval", str(source), "--bleurt-path", str(encoder), "--metrics", "bleurt", "--no-out", check=False)
    assert done.returncode != 0 and "--bleurt-path" in done.stderr and "Traceback" not in done.stderr
    ported = tmp_path / "bleurt20"
    ported.mkdir()
    (ported / "config.json").write_text(json.dumps({"model_type": "bleurt"}), encoding="utf-8")
    done = cli("eval", str(source), "--bleurt-path", str(ported), "--metrics", "bleurt", "--no-out", check=False)
    assert done.returncode != 0 and "bleurt-pytorch layout" in done.stderr and "Traceback" not in done.stderr


def test_registry_aliases_did_you_mean_and_plugins(tmp_path, monkeypatch):
    assert METRICS.metric("CIDEr-D").name == "cider" and METRICS.metric("dist-2").name == "distinct2"
    with pytest.raises(ArgumentError, match="did you mean 'meteor'"):
        METRICS.metric("meteorr")
    # a plug-in package: an entry point in the group kgforge.metrics, found in an installed distribution
    (tmp_path / "myplugin.py").write_text(
        "def length(batch):\n    '''tokens in the prediction'''\n    return batch.lexical.lengths['pred_len']\n",
        encoding="utf-8",
    )
    info = tmp_path / "myplugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[kgforge.metrics]\nlength = myplugin:length\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = MetricRegistry("metric", entry_point_group="kgforge.metrics")
    metric = registry.metric("length")
    assert metric.description == "tokens in the prediction" and metric.needs == ()
    sys.modules.pop("myplugin", None)


def reference_hits(groups, k):
    """Hits@k straight from its definition with numpy: the gold candidate's rank (stable on ties) below k."""
    found = []
    for scores, labels in groups:
        order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
        found.append(bool(np.asarray(labels)[order[:k]].any()))
    return float(np.mean(found))


def test_hits_at_k_in_three_layouts(tmp_path, cli):
    rng = random.Random(11)
    groups = []
    for _ in range(40):
        size = 10
        labels = [0] * size
        labels[rng.randrange(size)] = 1
        groups.append(([round(rng.random(), 1) for _ in range(size)], labels))  # rounded: ties happen
    per_record = tmp_path / "cands.jsonl"
    per_record.write_text(
        "".join(json.dumps({"id": i, "scores": s, "labels": lab}) + "\n" for i, (s, lab) in enumerate(groups)),
        encoding="utf-8",
    )
    per_row = tmp_path / "cands.csv"
    per_row.write_text(
        "context_id,score,label\n"
        + "".join(f"c{i},{x},{y}\n" for i, (s, lab) in enumerate(groups) for x, y in zip(s, lab, strict=True)),
        encoding="utf-8",
    )
    plain = tmp_path / "cands.txt"
    plain.write_text("".join(f"{y}\t{x}\n" for s, lab in groups for x, y in zip(s, lab, strict=True)), encoding="utf-8")
    for args in ([str(per_record)], [str(per_row)], [str(plain), "--group-size", "10"]):
        found = json.loads(cli("eval", "--candidates", *args, "--json").stdout)
        assert found["contexts"] == 40 and found["candidates"] == 400
        assert found["hits"]["hits@1"] == pytest.approx(reference_hits(groups, 1))
        assert found["hits"]["hits@3"] == pytest.approx(reference_hits(groups, 3))
    done = cli("eval", "--candidates", str(plain), check=False)
    assert done.returncode == 1 and "--group-size" in done.stderr
