"""The turn table: one row per utterance, the same columns for every dataset (docs/release.md, "The turn table").

A turn's facts are resolved in the graph: the triple as written (``head``, ``relation``, ``tail`` labels) is the
graph's fact whose subject has a name of ``head``, whose relation's label is ``relation`` and whose value (its
label, for an entity) is ``tail``, each compared in matching form (:func:`kgforge.grounding.normalise.form`:
width, script, case and spaces do not count). A fact's id is the first 16 hex digits of the sha256 of its line
in ``kg/used.nt`` (``<s> <p> o .``, UTF-8, no newline), so the turn table and the graph file join on it; a
triple the graph does not hold has no id.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

import polars as pl
from polars.datatypes import DataTypeClass

from kgforge.core.processes import can_fork, forked_map
from kgforge.core.quads import literal_term
from kgforge.grounding import GroundOptions
from kgforge.grounding.index import GroundingIndex, text_form
from kgforge.grounding.normalise import form
from kgforge.release.layouts import ReleaseLayout, Triple, Turn
from kgforge.store.tables import GraphTables

VERDICTS = ("supported", "contradicted", "unsupported", "none")
_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")

FACT = pl.Struct({"fact_id": pl.String, "head": pl.String, "relation": pl.String, "tail": pl.String})
CLAIM = pl.Struct({"head": pl.String, "relation": pl.String, "said": pl.String, "status": pl.String})
SCHEMA: dict[str, pl.DataType | DataTypeClass] = {
    "dialogue_id": pl.String,
    "turn": pl.Int32,
    "speaker": pl.String,
    "text": pl.String,
    "language": pl.String,
    "topics": pl.List(pl.String),
    "goal": pl.String,
    "facts": pl.List(FACT),
    "facts_from": pl.String,
    "verdict": pl.String,
    "claims": pl.List(CLAIM),
}
COLUMN_DOCS = {
    "dialogue_id": "the dialogue's stable id (its layout kind and the sha256 of its record)",
    "turn": "the utterance's position in the dialogue, from 0",
    "speaker": "who says it: bot / user where the layout says, else A / B in turn",
    "text": "the utterance as written",
    "language": "the dialogue's language: en when it has Latin letters and no CJK character, else zh",
    "topics": "the topics the dialogue declares (KdConv name, DuConv goal topics, DuRecDial topics)",
    "goal": "the dialogue's goal as JSON text, as the layout writes it (null: the layout has none)",
    "facts": "the facts the utterance states: fact_id (in kg/, null when the graph does not hold it), head, "
    "relation, tail",
    "facts_from": "gold (the dataset's own annotation) or grounder (kgforge ground)",
    "verdict": "the grounder's verdict on what the utterance claims: contradicted when a claim is, else "
    "unsupported when one is, else supported when one is, else none",
    "claims": "the grounder's claims: head, relation, what was said, status",
}


def fact_line(s: str, p: str, o: str, o_is_entity: bool, lang: str | None, datatype: str | None) -> str:
    """A fact as its N-Triples line, without the newline."""
    obj = f"<{o}>" if o_is_entity else literal_term(o, lang or None, datatype)
    return f"<{s}> <{p}> {obj} ."


def fact_id(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]


class FactResolver:
    """Triples as written -> the graph's facts (see the module docstring), each triple resolved once."""

    def __init__(self, index: GroundingIndex, tables: GraphTables) -> None:
        self.index = index
        self.predicates: dict[str, set[str]] = {}  # relation label in matching form -> predicate IRIs
        for iri, zh, en in tables.relations.select("iri", "zh", "en").iter_rows():
            for label in (zh, en):
                if label:
                    self.predicates.setdefault(form(label), set()).add(iri)
        self.tables = tables
        self._found: dict[Triple, tuple[str, str, str] | None] = {}
        self._by_subject: dict[str, dict[tuple[str, str], tuple[str, str, str]]] = {}

    def resolve(self, triple: Triple) -> tuple[str, str, str] | None:
        """``(s, p, o)`` of the graph's fact that ``triple`` writes (``o``: an IRI or a literal's value)."""
        if triple in self._found:
            return self._found[triple]
        head, relation, tail = form(triple[0]), form(triple[1]), text_form(triple[2])
        found = None
        for subject in self.index.entities_of.get(head, ()):
            found = self._facts(subject).get((relation, tail))
            if found is not None:
                break
        self._found[triple] = found
        return found

    def _facts(self, subject: str) -> dict[tuple[str, str], tuple[str, str, str]]:
        made = self._by_subject.get(subject)
        if made is None:
            made = {}
            for fact in self.index.facts_of.get(subject, ()):
                relation = form(fact.relation)
                for predicate in sorted(self.predicates.get(relation, ())):
                    obj = fact.value_entity if fact.value_entity is not None else fact.value
                    made.setdefault((relation, fact.value_form), (subject, predicate, obj))
            self._by_subject[subject] = made
        return made

    def resolve_rest(self) -> None:
        """Resolve, from the graph's tables, the triples the grounding index could not: facts under the schema's
        type relation (DuConv's 领域, which grounding leaves out) and subjects whose name is shorter than the index
        keeps (DuConv's film 暖). One pass over the tables, and only when some triple is left."""
        missing = [t for t, found in self._found.items() if found is None]
        if not missing:
            return
        tables = self.tables
        by_name: dict[str, list[str]] = defaultdict(list)
        for iri, label in tables.labels.select("iri", "label").iter_rows():
            by_name[form(label)].append(iri)
        heads = {form(t[0]) for t in missing}
        subjects = {iri for name in heads for iri in by_name.get(name, ())}
        relation_forms: dict[str, set[str]] = defaultdict(set)
        for relation, iris in self.predicates.items():
            for iri in iris:
                relation_forms[iri].add(relation)
        labels = tables.label_map()
        facts: dict[str, dict[tuple[str, str], tuple[str, str, str]]] = defaultdict(dict)
        rows = tables.facts.filter(pl.col("s").is_in(list(subjects))).sort("s", "p", "o")
        for subject, predicate, obj, is_entity in rows.select("s", "p", "o", "o_is_entity").iter_rows():
            value = text_form(labels.get(obj, obj) if is_entity else obj)
            for relation in relation_forms.get(predicate, ()):
                facts[subject].setdefault((relation, value), (subject, predicate, obj))
        for triple in missing:
            key = (form(triple[1]), text_form(triple[2]))
            self._found[triple] = next(
                (found for s in by_name.get(form(triple[0]), ()) if (found := facts[s].get(key)) is not None), None
            )

    def rows(self) -> pl.DataFrame:
        """The resolved facts as the graph's rows (``s, p, o, o_is_entity, o_lang, o_datatype, graph``), each
        with its N-Triples ``line`` and ``fact_id``; a fact in several graphs once, from its first graph."""
        found = sorted({f for f in self._found.values() if f is not None})
        wanted = pl.DataFrame(found, schema={"s": pl.String, "p": pl.String, "o": pl.String}, orient="row")
        rows = (
            self.tables.facts.join(wanted, on=["s", "p", "o"], how="semi")
            .sort("s", "p", "o", "graph")
            .unique(["s", "p", "o"], keep="first", maintain_order=True)
        )
        lines = [fact_line(*row) for row in rows.select("s", "p", "o", "o_is_entity", "o_lang", "o_datatype").rows()]
        return rows.with_columns(line=pl.Series(lines, dtype=pl.String), fact_id=pl.Series(map(fact_id, lines)))


def verdict(claims: Iterable[dict[str, Any]]) -> str:
    statuses = {c.get("status") for c in claims}
    return next((v for v in ("contradicted", "unsupported", "supported") if v in statuses), "none")


def language(texts: list[str]) -> str:
    joined = "".join(texts)
    return "en" if _LATIN.search(joined) and not _CJK.search(joined) else "zh"


@dataclass
class TurnRows:
    """The turn table being made, dialogue after dialogue, as flat columns: one value a turn, one a dialogue, and
    one row a fact or a claim with the turn it belongs to. Polars nests them once at the end (made a row at a
    time from Python lists of dicts, the table took half a release's time)."""

    turns: dict[str, list[Any]]  # dialogue_id, turn, speaker, text, facts_from, verdict
    dialogues: dict[str, list[Any]]  # dialogue_id, language, topics, goal
    facts: dict[str, list[Any]]  # row, head, relation, tail
    claims: dict[str, list[Any]]  # row, head, relation, said, status

    @classmethod
    def empty(cls) -> TurnRows:
        return cls(
            {k: [] for k in ("dialogue_id", "turn", "speaker", "text", "facts_from", "verdict")},
            {k: [] for k in ("dialogue_id", "language", "topics", "goal")},
            {k: [] for k in ("row", "head", "relation", "tail")},
            {k: [] for k in ("row", "head", "relation", "said", "status")},
        )

    @property
    def stated(self) -> list[Triple]:
        """Every fact stated, as written, in table order."""
        return list(zip(self.facts["head"], self.facts["relation"], self.facts["tail"]))

    def add(self, dialogue_id: str, topics: list[str], goal: str | None, turns: list[Turn]) -> None:
        for key, value in zip(self.dialogues, (dialogue_id, language([t.text for t in turns]), topics, goal)):
            self.dialogues[key].append(value)
        t, f, c = self.turns, self.facts, self.claims
        for i, turn in enumerate(turns):
            row = len(t["turn"])
            for key, cell in zip(t, (dialogue_id, i, turn.speaker, turn.text, turn.facts_from, verdict(turn.claims))):
                t[key].append(cell)
            for head, relation, tail in turn.facts:
                for key, cell in zip(f, (row, head, relation, tail)):
                    f[key].append(cell)
            for claim in turn.claims:
                said = (row, str(claim.get("name", "")), claim.get("attrname"), str(claim.get("said", "")))
                for key, cell in zip(c, (*said, str(claim.get("status", "")))):
                    c[key].append(cell)

    def frame(self, resolver: FactResolver, ids: dict[tuple[str, str, str], str]) -> pl.DataFrame:
        """The table, each fact with its id (``ids``: a resolved fact's ``(s, p, o)`` -> its id)."""
        found = [resolver.resolve(t) for t in self.stated]
        fact_ids = [ids.get(f) if f is not None else None for f in found]
        string = pl.String
        facts = _nested(
            pl.DataFrame({**self.facts, "fact_id": fact_ids}, schema_overrides={"row": pl.UInt32, "fact_id": string}),
            "facts",
            FACT,
        )
        claims = _nested(
            pl.DataFrame(self.claims, schema_overrides={"row": pl.UInt32, "relation": string}), "claims", CLAIM
        )
        dialogues = pl.DataFrame(
            self.dialogues,
            schema={"dialogue_id": string, "language": string, "topics": pl.List(string), "goal": string},
        ).unique("dialogue_id", keep="first", maintain_order=True)
        turns = pl.DataFrame(self.turns, schema_overrides={"turn": pl.Int32}).with_row_index("row")
        table = (
            turns.join(dialogues, on="dialogue_id", how="left", maintain_order="left")
            .join(facts, on="row", how="left", maintain_order="left")
            .join(claims, on="row", how="left", maintain_order="left")
        )
        return table.select(
            [
                pl.col(n).fill_null(pl.lit([], dtype=t)) if n in ("facts", "claims") else pl.col(n)
                for n, t in SCHEMA.items()
            ]
        ).cast(pl.Schema(SCHEMA))


def _nested(flat: pl.DataFrame, name: str, struct: pl.Struct) -> pl.DataFrame:
    """``flat``'s rows grouped by ``row`` into one list of ``struct`` a row, in their order."""
    fields = [f.name for f in struct.fields]
    return flat.group_by("row", maintain_order=True).agg(pl.struct(fields).alias(name))


# as kgforge ground: the fewest dialogues a grounding process is given at once, the parts each takes in turn, and
# the dialogues grounded at a time (a whole part's grounded records, held, were new memory to fault in)
PART_DIALOGUES, PARTS_PER_WORKER, GROUNDED_AT_ONCE = 500, 16, 25


def ground_turns(
    index: GroundingIndex, layout: ReleaseLayout, records: list[dict[str, Any]], workers: int | None
) -> tuple[list[tuple[str | None, list[Turn]]], list[str]]:
    """Each record's goal and turns, grounded by the layout's grounder in processes forked from this one (they
    read the index where it is, as ``kgforge ground``'s do) and sent back as turns, not as grounded records
    (a tenth of the bytes); and the declared topics the graph does not name."""
    wanted = GroundOptions(workers=workers).processes()
    processes = max(1, min(wanted, len(records) // PART_DIALOGUES)) if can_fork() else 1
    size = max(PART_DIALOGUES, -(-len(records) // (processes * PARTS_PER_WORKER)))
    parts = [records[at : at + size] for at in range(0, len(records), size)] or [records]
    done = forked_map(partial(_ground_part, index, layout), parts, processes, "kgforge release (grounding)")
    return [made for turns, _ in done for made in turns], [t for _, missing in done for t in missing]


def _ground_part(
    index: GroundingIndex, layout: ReleaseLayout, records: list[dict[str, Any]]
) -> tuple[list[tuple[str | None, list[Turn]]], list[str]]:
    made, missing = [], []
    for at in range(0, len(records), GROUNDED_AT_ONCE):
        grounded, not_in_graph = layout.ground(index, records[at : at + GROUNDED_AT_ONCE])
        made += [(layout.goal(record), layout.turns(record)) for record in grounded]
        missing += not_in_graph
    return made, missing


def turn_rows(grounded: Iterable[tuple[str | None, list[Turn]]], ids: list[str], topics: list[list[str]]) -> TurnRows:
    """The turn table's rows of grounded dialogues (each its goal and turns; ``ids``, ``topics``: each one's)."""
    rows = TurnRows.empty()
    for (goal, turns), dialogue_id, declared in zip(grounded, ids, topics, strict=True):
        rows.add(dialogue_id, declared, goal, turns)
    return rows
