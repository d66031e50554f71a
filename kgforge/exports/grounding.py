"""Real dialogues against a graph: what they are about, which of their gold triples the graph holds.

* **Topics.** A dialogue declares some (DuConv's goal ``START A B``, KdConv's ``name``, DuRecDial's
  『…』 goal topics), resolved by name (also without a trailing ``（disambiguation）`` and ignoring case).
  For KdConv and DuRecDial the entities its utterances name are topics too, found by exact match of
  their labels (Aho-Corasick, leftmost-longest; word-segmented text is matched with its cuts taken out).
  Class nodes (电影, 歌手) are never topics. A name that is also an ordinary word (jieba knows it as a
  frequent word: 喜欢, 英雄, 后来) or has two characters only is taken only in quotes (《喜欢》), when the
  dialogue declares it, or when it is a graph neighbour of a topic found without doubt.
* **Gold triples** (``attrs``, ``knowledge``) are resolved to stored facts by name, vectorised: that gives
  the coverage report and, with ``--refresh-attrs``, the values a newer graph gives them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.progress import by_line
from kgforge.core.text import jieba_module, matchable, normalise_label
from kgforge.exports.assemble import PATH_SCHEMA, TOPIC_SCHEMA, Context, Grounded
from kgforge.exports.model import SourceDialogue, dialogue_ids
from kgforge.exports.registry import Format, Layout
from kgforge.goals.graph import EntityIndex, strip_qualifier

MIN_NAME_CHARS = 2
SHORT_NAME_CHARS = 2  # names this short are doubtful on their own
COMMON_WORD_FREQ = 100  # jieba frequency from which a name is an ordinary word first
QUOTES = (("《", "》"), ("“", "”"), ("「", "」"), ("『", "』"), ('"', '"'), ("〈", "〉"))
GOLD_SCHEMA = {"dialogue": pl.Int64, "g": pl.Int64, "head": pl.String, "relation": pl.String, "tail": pl.String}


@dataclass
class SourceFile:
    """A file of real dialogues as read: the readable ones, the rest with their line and reason."""

    fmt: Format
    layout: Layout
    dialogues: list[SourceDialogue]
    rejected: list[dict[str, Any]]
    records_in: int
    ids: list[str] = field(default_factory=list)


def read_sources(path: Path, fmt: Format, layout: Layout) -> SourceFile:
    dialogues, rejected, records_in = [], [], 0
    for record in by_line(fmt.read(path), path):
        records_in += 1
        if record.error:
            rejected.append({"file": str(path), "line": record.line, "reason": record.error})
            continue
        found = fmt.source_dialogue(record.value, record.line, layout)
        if isinstance(found, str):
            rejected.append(
                {
                    "file": str(path),
                    "line": record.line,
                    "reason": f"not a {layout.kind} dialogue: {found}",
                    "record": record.value,
                }
            )
        else:
            dialogues.append(found)
    ids = dialogue_ids([d.record for d in dialogues], layout.kind)
    return SourceFile(fmt, layout, dialogues, rejected, records_in, ids)


# ---------------------------------------------------------------- topics


@dataclass
class Grounding:
    grounded: Grounded
    index: EntityIndex
    topics_not_in_graph: list[dict[str, Any]]


def ground(ctx: Context, source: SourceFile, class_iris: set[str]) -> Grounding:
    """Each dialogue's topics (declared ones first, then those its utterances name, in order of first
    mention) and its goal path, as far as the graph holds them."""
    segmented = source.layout.segmented
    index = EntityIndex.from_tables(ctx.tables, segmented=segmented, exclude=class_iris)
    declared, missing = {}, []
    for i, dialogue in enumerate(source.dialogues):
        found = []
        for name in dialogue.topic_names:
            iris = index.resolve(name)
            if not iris:
                missing.append({"dialogue_id": source.ids[i], "line": dialogue.line, "topic": name})
            found += [iri for iri in iris[:1] if iri not in found]
        declared[i] = found
    mentions = Mentions(index, ctx).find(source.dialogues, declared) if source.fmt.finds_mentions else {}
    rows, meta = [], {}
    for i, dialogue in enumerate(source.dialogues):
        placed = dict.fromkeys(declared[i], 0)  # each topic on the utterance that first names it
        for m, iri in mentions.get(i, ()):
            placed.setdefault(iri, m)
        rows += [(i, position, iri, m) for position, (iri, m) in enumerate(placed.items())]
        meta[i] = {"kind": source.layout.kind, "source": dialogue}
    topics = pl.DataFrame(rows, schema={**TOPIC_SCHEMA, "message": pl.Int64}, orient="row")
    paths = resolve_triples(ctx, index, [(i, t) for i, d in enumerate(source.dialogues) for t in d.path])
    paths = paths.drop_nulls("s").select(list(PATH_SCHEMA))
    return Grounding(Grounded(topics, paths, source.ids, meta), index, missing)


class Mentions:
    """The entities each utterance names (see the module docstring)."""

    def __init__(self, index: EntityIndex, ctx: Context) -> None:
        self.index = index
        self.ctx = ctx
        self.short: dict[str, list[str]] = {}  # 倩女幽魂（1987年张国荣、王祖贤主演电影） is written 倩女幽魂
        for name in (n for n in index.names if n.endswith(("）", ")"))):
            short = strip_qualifier(name)
            if short != name:
                bucket = self.short.setdefault(short, [])
                bucket += [iri for iri in index.names[name] if iri not in bucket]
        names = [name for name in {**index.names, **self.short} if len(name) >= MIN_NAME_CHARS]
        self.patterns = sorted(names, key=lambda name: (-len(name), name))  # leftmost-longest

    def iris(self, name: str) -> list[str]:
        """The IRIs a matched name stands for: as a label, as a label without its disambiguation, or
        ignoring case (the match itself ignores ASCII case)."""
        return [*self.index.names.get(name, ()), *self.short.get(name, ())] or self.index.lookup_folded(name)

    def find(self, dialogues: list[SourceDialogue], declared: dict[int, list[str]]) -> dict[int, list[tuple[int, str]]]:
        """Per dialogue, the (utterance, IRI) of each entity its utterances name, in order."""
        out: dict[int, list[tuple[int, str]]] = {}
        texts = [
            (i, m, matchable(normalise_label(text) if d.segmented else text))
            for i, d in enumerate(dialogues)
            for m, text in enumerate(d.texts)
        ]
        if not texts or not self.patterns:
            return out
        frame = pl.DataFrame(texts, schema={"dialogue": pl.Int64, "message": pl.Int64, "text": pl.String}, orient="row")
        found = (
            frame.with_columns(
                name=pl.col("text").str.extract_many(self.patterns, leftmost=True, ascii_case_insensitive=True)
            )
            .explode("name")
            .drop_nulls("name")
            .with_row_index("hit")
        )
        if found.is_empty():
            return out
        iris = pl.DataFrame(
            [(name, iri) for name in found["name"].unique().to_list() for iri in self.iris(name)],
            schema={"name": pl.String, "iri": pl.String},
            orient="row",
        )
        hits = found.join(iris, on="name").with_columns(doubtful=pl.col("name").is_in(self._doubtful(found["name"])))
        hits = hits.with_columns(quoted=pl.col("hit").is_in(self._quoted(hits.filter("doubtful"))))
        declared_rows = pl.DataFrame(
            [(i, iri) for i, iris in declared.items() for iri in iris],
            schema={"dialogue": pl.Int64, "iri": pl.String},
            orient="row",
        )
        sure = pl.concat([declared_rows, hits.filter(~pl.col("doubtful") | pl.col("quoted")).select("dialogue", "iri")])
        near = self._neighbours(sure, hits.filter("doubtful"))
        kept = (
            hits.join(declared_rows.with_columns(declared=pl.lit(True)), on=["dialogue", "iri"], how="left")
            .join(near.with_columns(near=pl.lit(True)), on=["dialogue", "iri"], how="left")
            .filter(
                ~pl.col("doubtful")
                | pl.col("quoted")
                | pl.col("declared").fill_null(False)
                | pl.col("near").fill_null(False)
            )
            .sort("dialogue", "message", "hit")
        )
        for i, m, iri in kept.select("dialogue", "message", "iri").iter_rows():
            out.setdefault(i, []).append((m, iri))
        return out

    @staticmethod
    def _doubtful(names: pl.Series) -> list[str]:
        freq = jieba_module().dt
        freq.check_initialized()
        return [
            n for n in names.unique().to_list() if len(n) <= SHORT_NAME_CHARS or freq.FREQ.get(n, 0) >= COMMON_WORD_FREQ
        ]

    @staticmethod
    def _quoted(hits: pl.DataFrame) -> list[int]:
        """The hits whose utterance quotes their name (《喜欢》)."""
        return [
            hit
            for hit, text, name in hits.select("hit", "text", "name").iter_rows()
            if any(f"{left}{name}{right}" in text for left, right in QUOTES)
        ]

    def _neighbours(self, sure: pl.DataFrame, doubtful: pl.DataFrame) -> pl.DataFrame:
        """(dialogue, iri) for each doubtful mention linked by a fact to a topic of the same dialogue found
        without doubt: the dialogue's (doubtful, sure) pairs, looked up among the entity facts."""
        pairs = (
            doubtful.select("dialogue", "iri")
            .unique()
            .join(sure.unique().rename({"iri": "near"}), on="dialogue")
            .filter(pl.col("iri") != pl.col("near"))
        )
        if pairs.is_empty():
            return pairs.select("dialogue", "iri")
        edges = (
            self.ctx.tables.domain_facts()
            .filter(
                pl.col("o_is_entity"),
                pl.col("s").is_in(pairs["iri"].implode()) | pl.col("o").is_in(pairs["iri"].implode()),
            )
            .select("s", "o")
        )
        linked = pl.concat(
            [
                pairs.join(edges, left_on=["iri", "near"], right_on=["s", "o"], how="semi"),
                pairs.join(edges, left_on=["near", "iri"], right_on=["s", "o"], how="semi"),
            ]
        )
        return linked.select("dialogue", "iri").unique()


# ---------------------------------------------------------------- gold triples against the graph


def gold_frame(dialogues: Iterable[SourceDialogue]) -> pl.DataFrame:
    rows = [(i, g, t.head, t.relation, t.tail) for i, d in enumerate(dialogues) for g, t in enumerate(d.gold)]
    return pl.DataFrame(rows, schema=GOLD_SCHEMA, orient="row")


class GoldResolver:
    """Name triples (columns ``dialogue``, ``g``, ``head``, ``relation``, ``tail``) against the stored facts:
    heads by name, relations by the schema, tails as an entity's name or the literal itself."""

    def __init__(self, ctx: Context, index: EntityIndex, triples: pl.DataFrame) -> None:
        self.triples = triples
        self.index = index
        heads = _exploded("head", "s", {h: index.lookup(h) for h in triples["head"].unique().to_list()})
        self.facts = (
            ctx.tables.domain_facts()
            .filter(pl.col("s").is_in(heads["s"].implode()))
            .select("s", "p", "o", "o_is_entity")
            .unique(["s", "p", "o"])
        )
        relations = pl.DataFrame({"relation": triples["relation"].unique()}).with_columns(
            p=pl.col("relation").map_elements(lambda r: ctx.schema.relation_for(r).iri, return_dtype=pl.String)
        )
        self.keyed = triples.join(heads, on="head").join(relations, on="relation")

    def resolved(self) -> pl.DataFrame:
        """Every input row with the fact it states (``s``, ``p``, ``o``, ``o_is_entity``; null when none)."""
        tails = _exploded(
            "tail",
            "o",
            {
                t: [*self.index.lookup(t), normalise_label(t, self.index.segmented), t]
                for t in self.keyed["tail"].unique().to_list()
            },
        )
        found = (
            self.keyed.join(tails, on="tail")
            .join(self.facts, on=["s", "p", "o"], how="inner")
            .unique(["dialogue", "g"], keep="first", maintain_order=True)
        )
        return self.triples.join(
            found.select("dialogue", "g", "s", "p", "o", "o_is_entity"), on=["dialogue", "g"], how="left"
        )

    def values(self, rows: pl.DataFrame) -> pl.DataFrame:
        """For ``rows`` (``dialogue``, ``g``), every value the graph gives their head and relation."""
        return self.keyed.join(rows.select("dialogue", "g"), on=["dialogue", "g"], how="semi").join(
            self.facts, on=["s", "p"], how="inner"
        )


def resolve_triples(ctx: Context, index: EntityIndex, triples: list[tuple[int, list[str]]]) -> pl.DataFrame:
    """``GoldResolver.resolved`` for (dialogue, [head, relation, tail]) pairs."""
    frame = pl.DataFrame([(d, g, *t) for g, (d, t) in enumerate(triples)], schema=GOLD_SCHEMA, orient="row")
    return GoldResolver(ctx, index, frame).resolved()


def _exploded(key: str, value: str, mapping: dict[str, list[str]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(k, v) for k, values in mapping.items() for v in dict.fromkeys(values)],
        schema={key: pl.String, value: pl.String},
        orient="row",
    )
