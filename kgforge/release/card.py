"""``README.md`` of a release: a Hugging Face dataset card (its YAML header: name, licence, languages, tasks, size,
and the ``configs`` whose ``data_files`` ``datasets.load_dataset(folder, config)`` reads), then what the release
holds, its verification figures and KG audit, and the datasheet ``kgforge corpus card`` writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl
import yaml
from polars.datatypes import DataTypeClass

from kgforge.core.jsonio import JsonObject
from kgforge.release.licences import LicenceChoice
from kgforge.release.turns import COLUMN_DOCS, SCHEMA

SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
         (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))  # fmt: skip
TASKS = ["text-generation"]  # the Hub's category for dialogue response generation


def size_category(rows: int) -> str:
    return next((name for limit, name in SIZES if rows < limit), "n>100M")


@dataclass(frozen=True)
class CardInput:
    name: str
    domain: str
    build_id: str
    kgforge_version: str
    layout_kind: str
    config: str
    task: str
    licence: LicenceChoice
    languages: tuple[str, ...]
    splits: tuple[tuple[str, int, int, str, str], ...]  # name, dialogues, turns, layout file, turns file
    verdicts: dict[str, int]
    facts_stated: int
    facts_in_graph: int
    kg_file: str | None
    kg_statements: int
    origin: str
    audit: dict[str, Any] | None
    datasheet: str
    notes: tuple[str, ...]


def header(card: CardInput) -> JsonObject:
    """The card's YAML metadata (the Hub's dataset card fields)."""
    turns = sum(s[2] for s in card.splits)
    data: dict[str, Any] = {"pretty_name": card.name, "license": card.licence.hub_id}
    if card.licence.hub_id == "other":
        data["license_name"] = card.licence.licence
        data["license_link"] = "README.md"  # the card says which sources leave it unknown
    data |= {
        "language": list(card.languages),
        "task_categories": TASKS,
        "size_categories": [size_category(turns)],
        "tags": ["knowledge-grounded-dialogue", "knowledge-graph", "kgforge", card.config],
        "dataset_info": [{"config_name": "turns", "features": [_feature(n, t) for n, t in SCHEMA.items()]}],
        "configs": [
            {
                "config_name": "turns",
                "default": True,
                "data_files": [{"split": name, "path": turn_file} for name, _, _, _, turn_file in card.splits],
            },
            {
                "config_name": card.config,
                "data_files": [{"split": name, "path": layout_file} for name, _, _, layout_file, _ in card.splits],
            },
        ],
    }
    return data


def _feature(name: str, dtype: pl.DataType | DataTypeClass) -> dict[str, Any]:
    """A turn-table column as the card's ``dataset_info`` writes it (the types ``datasets`` casts the rows to)."""
    if isinstance(dtype, pl.List):
        inner = dtype.inner
        if isinstance(inner, pl.Struct):
            return {"name": name, "list": [_feature(f.name, f.dtype) for f in inner.fields]}
        return {"name": name, "list": _hub_type(inner)}
    return {"name": name, "dtype": _hub_type(dtype)}


def _hub_type(dtype: pl.DataType | DataTypeClass) -> str:
    return next(hub for polars_type, hub in _HUB_TYPES if dtype == polars_type)


_HUB_TYPES = ((pl.String, "string"), (pl.Int32, "int32"), (pl.Int64, "int64"), (pl.Boolean, "bool"))


def readme(card: CardInput) -> str:
    head = yaml.safe_dump(header(card), allow_unicode=True, sort_keys=False, width=1000)
    lines = [
        "---",
        head.rstrip("\n"),
        "---",
        "",
        f"# {card.name}",
        "",
        f"Dialogues in the {card.layout_kind} layout, for {card.task}, grounded in the knowledge graph of domain "
        f"`{card.domain}` (build `{card.build_id}`), released by kgforge {card.kgforge_version}. "
        f"Dialogues from: {card.origin}.",
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        'turns = load_dataset("path/to/this/folder", "turns")  # one row per utterance, every dataset alike',
        f'dialogues = load_dataset("path/to/this/folder", "{card.config}")  # the {card.layout_kind} layout',
        "```",
        "",
        "| split | dialogues | turns | layout file | turn table |",
        "|---|---|---|---|---|",
        *(f"| {n} | {d:,} | {t:,} | `{lf}` | `{tf}` (and `.parquet`) |" for n, d, t, lf, tf in card.splits),
        "",
        f"The `{card.config}` files are exactly what the dataset's baselines read. `croissant.json` describes every "
        "file (Croissant 1.1, with its sha256 and Responsible-AI fields); `release.json` lists every file's sha256 "
        "(`kgforge release check FOLDER` checks them all).",
        "",
        "## The turn table",
        "",
        "| column | meaning |",
        "|---|---|",
        *(f"| `{name}` | {doc} |" for name, doc in COLUMN_DOCS.items()),
        "",
        *_verification(card),
        *_licence(card),
        *_audit(card.audit),
        *([f"Note: {note}" for note in card.notes] + [""] if card.notes else []),
        "---",
        "",
        *("#" + line if line.startswith("#") else line for line in card.datasheet.splitlines()),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def _verification(card: CardInput) -> list[str]:
    turns = sum(card.verdicts.values())
    rows = [f"| {v} | {n:,} | {n / turns:.1%} |" for v, n in card.verdicts.items()] if turns else []
    share = f"{card.facts_in_graph / card.facts_stated:.1%}" if card.facts_stated else "–"
    return [
        "## Verification",
        "",
        "Every turn's claims were checked against the graph by kgforge's grounder (`kgforge ground`); its verdict:",
        "",
        "| verdict | turns | share |",
        "|---|---|---|",
        *rows,
        "",
        f"Facts stated by the turns: {card.facts_stated:,}, of which {card.facts_in_graph:,} ({share}) are facts of "
        "the graph (they have a `fact_id`)"
        + (f"; `{card.kg_file}` holds {card.kg_statements:,} statements." if card.kg_file else "."),
        "",
    ]


def _licence(card: CardInput) -> list[str]:
    choice = card.licence
    why = (
        "the most restrictive licence among the graph's sources"
        if choice.chosen_by == "sources"
        else "chosen by the author; every source's licence allows it"
    )
    lines = ["## Licence", "", f"**{choice.licence}** ({why}; kgforge docs/release.md has the table it follows)."]
    if choice.unchecked:
        lines.append(
            f"The licence of {', '.join(choice.unchecked)} is not known, so the terms were not checked against "
            "it: read that source's own terms before using this release."
        )
    return [*lines, ""]


def _audit(audit: dict[str, Any] | None) -> list[str]:
    if audit is None:
        return [
            "## KG accuracy audit",
            "",
            "No audit was given (`kgforge audit sample`, then `kgforge audit import`, then `--audit`).",
            "",
        ]
    total = audit["accuracy"]
    lines = [
        "## KG accuracy audit",
        "",
        f"{total['correct']} of {total['items']} sampled triples were judged correct by the majority of "
        f"{audit['raters']} rater(s): accuracy {total['accuracy']:.1%}, Wilson 95% interval "
        f"[{total['low']:.1%}, {total['high']:.1%}] (sample of build `{audit['build_id']}`, seed {audit['seed']}"
        + (", stratified by relation" if audit.get("by") == "relation" else "")
        + ").",
        "",
    ]
    if audit.get("fleiss_kappa") is not None:
        lines += [f"Agreement between the raters: Fleiss' κ = {audit['fleiss_kappa']:.3f}.", ""]
    lines += ["| relation | correct | items | accuracy | Wilson 95% |", "|---|---|---|---|---|"]
    lines += [
        f"| {r['relation']} | {r['correct']} | {r['items']} | {r['accuracy']:.1%} | [{r['low']:.1%}, {r['high']:.1%}] |"
        for r in audit["per_relation"]
    ]
    return [*lines, ""]
