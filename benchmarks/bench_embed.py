"""Benchmark: kgforge embed's training loop beside PyKEEN's plain ``pipeline()``, and related-entity search.

    python benchmarks/bench_embed.py            # Kinships + UMLS, ComplEx and RotatE, 50 epochs; 1M x 256 search
    python benchmarks/bench_embed.py --small    # Kinships, ComplEx, 10 epochs; 200k x 256 search

Training: the same model class and embedding dimension on the same graph and split (a PyKEEN
dataset shipped inside the package, so it runs offline), the same number of epochs, in one
process. kgforge runs with its own settings (shared negatives scored as matrix products, softmax
cross-entropy, large batches; bf16 on a GPU); PyKEEN runs ``pipeline(dataset=..., model=...,
model_kwargs={"embedding_dim": D}, epochs=E, random_seed=S)`` with everything else at its
defaults (sLCWA, one negative per positive, batch 256). Both models are then ranked by the same
kgforge evaluator (filtered, realistic rank, all entities, both sides); PyKEEN's own reported MRR
is printed beside it. Throughput is positive training triples per second of training time
(epochs x training triples / seconds), evaluation excluded.

Search: queries per second for exact top-10 over N x 256 random unit vectors (cosine), with
``kgforge.embed.related.search_topk`` in batches of 256 queries, beside one ``torch.topk(V @ q)`` per query
(the naive way); on the CPU, and on the GPU when torch sees one. Medians of --repeats.

Writes benchmarks/results/bench_embed.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgforge.embed import EmbedConfig, build_model, pick_device, triple_set_from_ids  # noqa: E402
from kgforge.embed.evaluate import KnownTriples, rank_triples, summarise  # noqa: E402
from kgforge.embed.related import search_topk  # noqa: E402


def load_dataset(name: str):
    from pykeen.datasets import get_dataset

    return get_dataset(dataset=name)


def kgforge_run(dataset, model: str, dim: int, epochs: int, seed: int, device: str) -> dict:
    from kgforge.embed import Trainer

    triple_set = triple_set_from_ids(
        dataset.training.mapped_triples,
        dataset.validation.mapped_triples,
        dataset.testing.mapped_triples,
        list(dataset.training.entity_to_id),
        list(dataset.training.relation_to_id),
    )
    torch_device = pick_device(device)
    config = EmbedConfig(model=model, dim=dim, epochs=epochs, seed=seed, device=device).resolved(torch_device)
    torch.manual_seed(seed)
    factory = triple_set.factory()
    trained = build_model(config, factory).to(torch_device)
    trainer = Trainer(trained, factory.mapped_triples, config, torch_device, Path("/tmp/bench-embed-work"), "bench")
    trainer.save_checkpoint = lambda: None  # measure training, not the disk
    _sync(torch_device)
    start = time.perf_counter()
    trainer.fit(progress=False)
    _sync(torch_device)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "model": trained,
        "settings": {
            "batch_size": config.batch_size,
            "negatives": min(config.num_negatives, dataset.num_entities),
            "loss": "softmax cross-entropy",
            "precision": config.precision,
            "lr": config.learning_rate,
        },
    }


def pykeen_run(dataset, model: str, dim: int, epochs: int, seed: int, device: str) -> dict:
    from pykeen.pipeline import pipeline

    result = pipeline(
        dataset=dataset,
        model=model,
        model_kwargs={"embedding_dim": dim},
        epochs=epochs,
        random_seed=seed,
        device=None if device == "auto" else device,
        training_kwargs={"use_tqdm": False},
        evaluation_kwargs={"use_tqdm": False},
    )
    return {
        "seconds": result.train_seconds,
        "model": result.model,
        "pykeen_mrr": float(result.get_metric("both.realistic.inverse_harmonic_mean_rank")),
        "settings": "pipeline() defaults (sLCWA, 1 negative, batch 256, default loss and optimizer)",
    }


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def rank_metrics(model, dataset) -> dict:
    device = next(model.parameters()).device
    everything = torch.cat(
        [dataset.training.mapped_triples, dataset.validation.mapped_triples, dataset.testing.mapped_triples]
    )
    known = KnownTriples(everything, dataset.num_entities, dataset.num_relations, device)
    return summarise(rank_triples(model, dataset.testing.mapped_triples, known, 256))


def bench_training(name: str, model: str, dim: int, epochs: int, seed: int, device: str) -> dict:
    dataset = load_dataset(name)
    triples = dataset.training.num_triples
    row = {
        "dataset": name,
        "model": model,
        "dim": dim,
        "epochs": epochs,
        "train_triples": triples,
        "entities": dataset.num_entities,
    }
    for label, run in (("kgforge", kgforge_run), ("pykeen", pykeen_run)):
        result = run(dataset, model, dim, epochs, seed, device)
        metrics = rank_metrics(result["model"], dataset)
        row[label] = {
            "train_seconds": round(result["seconds"], 3),
            "triples_per_second": round(epochs * triples / result["seconds"], 1),
            "mrr": metrics["mrr"],
            "hits_at_10": metrics["hits_at_10"],
            "settings": result["settings"],
        }
        if "pykeen_mrr" in result:
            row[label]["mrr_reported_by_pykeen"] = round(result["pykeen_mrr"], 6)
        print(
            f"  {name} {model} {label:8s} {row[label]['triples_per_second']:>10,.0f} triples/s  "
            f"MRR {metrics['mrr']:.4f}  Hits@10 {metrics['hits_at_10']:.4f}  ({result['seconds']:.1f} s)",
            flush=True,
        )
    row["throughput_ratio"] = round(row["kgforge"]["triples_per_second"] / row["pykeen"]["triples_per_second"], 2)
    row["mrr_difference"] = round(row["kgforge"]["mrr"] - row["pykeen"]["mrr"], 4)
    print(f"  -> kgforge/PyKEEN throughput x{row['throughput_ratio']}, MRR difference {row['mrr_difference']:+.4f}")
    return row


def bench_search(rows: int, dim: int, queries: int, repeats: int, device: str) -> dict:
    generator = torch.Generator().manual_seed(0)
    vectors = torch.nn.functional.normalize(torch.randn(rows, dim, generator=generator), dim=1).to(device)
    query_ids = torch.randint(rows, (queries,), generator=generator)
    batch = vectors[query_ids.to(device)]
    exclude = [i.view(1) for i in query_ids]
    torch_device = torch.device(device)

    def batched() -> None:
        search_topk(vectors, batch, 10, "cosine", exclude=exclude, query_batch=1024 if device == "cuda" else 256)
        _sync(torch_device)

    naive_n = min(queries, 32)

    def naive() -> None:
        for q in batch[:naive_n]:
            (vectors @ q).topk(11)
        _sync(torch_device)

    result = {"device": device, "rows": rows, "dim": dim, "queries": queries}
    for label, fn, n in (("kgforge_batched", batched, queries), ("naive_per_query", naive, naive_n)):
        fn()  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        result[label] = {
            "median_seconds": round(statistics.median(times), 4),
            "queries_per_second": round(n / statistics.median(times), 1),
        }
        print(f"  search {device} {rows:,}x{dim} top-10 {label:16s} {result[label]['queries_per_second']:>10,.1f} q/s")
    result["ratio"] = round(
        result["kgforge_batched"]["queries_per_second"] / result["naive_per_query"]["queries_per_second"], 2
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--search-rows", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "bench_embed.json")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = str(pick_device(args.device))
    epochs = args.epochs or (10 if args.small else 50)
    runs = (
        [("kinships", "ComplEx")]
        if args.small
        else [("kinships", "ComplEx"), ("kinships", "RotatE"), ("umls", "ComplEx")]
    )
    report = {
        "machine": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "device": device,
            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        },
        "training": [],
        "search": [],
    }
    print(f"training ({device}, {torch.get_num_threads()} CPU threads, {epochs} epochs, dim {args.dim})")
    for name, model in runs:
        report["training"].append(bench_training(name, model, args.dim, epochs, args.seed, args.device))
    rows = args.search_rows or (200_000 if args.small else 1_000_000)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for search_device in devices:
        report["search"].append(
            bench_search(rows, 256, 1024 if search_device == "cuda" else 256, args.repeats, search_device)
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
