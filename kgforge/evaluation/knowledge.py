"""Knowledge metrics: which facts a response states, whether the graph holds them, and how much of the
dialogue's gold knowledge it expresses — all read by the grounder (``kgforge.grounding``, the rules of
``kgforge ground``, see docs/grounding.md).

**Facts stated.** Each response is grounded as one message of its dialogue, with the dialogue's topics in
focus (the entities its names resolve to in the graph): the graph facts it states, and its claims. A
*fact mention* is a claim that is ``supported`` (a fact of an entity in focus, *true*) or ``contradicted``
(a value said for an entity in focus whose relation holds other values: a number with another unit or
number, an entity of the kind of the subject's values, or a short literal that is a value of that relation
elsewhere in the graph — 法国 for a film made in 美国 — while no entity in focus holds it). Unless
``graph_only``, a triple of the dialogue's own knowledge that the graph lacks (a DuConv goal triple) is
true too when the response states it by the rule ``kgforge ground --format duconv`` uses (its object as
whole words, a list object by a part, free text by overlap). Each distinct triple counts once per response.
The relations of the schema's ``stop_relations`` (性别 女) are no knowledge a response shows and are left out.

**Hallucinations** are the ``contradicted`` claims: the entity in focus, the relation, what was said (as
written) and the graph's values.

**Precision** = true fact mentions / fact mentions. **Recall** = gold triples stated / gold triples, with
triple identity: a gold triple counts when the response is grounded to that very triple (subject, relation
and value in matching form), not when its value merely occurs. Gold triples are the response's annotated
knowledge (KdConv ``attrs``, a ``gold_knowledge`` column), else the dialogue's goal path (DuConv goal triples,
a kgforge export's path), else the dialogue knowledge the gold response states (DuRecDial). Corpus values are
micro-averages (sums over all responses); F1 is their harmonic mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl
from polars.datatypes import DataTypeClass

from kgforge.core.progress import iterate
from kgforge.core.schema import Schema
from kgforge.evaluation.inputs import Dialogue, Triple
from kgforge.grounding import kept
from kgforge.grounding.facts import Fact
from kgforge.grounding.index import TEXT_CHARS, GroundingIndex, make_fact
from kgforge.grounding.matching import DialogueMatcher, MatchOptions, jieba_cuts, word_cuts
from kgforge.grounding.normalise import form, surface
from kgforge.grounding.scoring import attr_key
from kgforge.grounding.sessions import stated_span
from kgforge.store.snapshot import Snapshot

GRAPH_VALUES_SHOWN = 5
STATUS_SCHEMA: dict[str, pl.DataType | DataTypeClass] = {"said": pl.String, "status": pl.String}
HALLUCINATION_SCHEMA: dict[str, pl.DataType | DataTypeClass] = {
    "topic": pl.String,
    "relation": pl.String,
    "said": pl.String,
    "graph": pl.List(pl.String),
}
ROW_SCHEMA: dict[str, pl.DataType | DataTypeClass] = {
    "k_mentions": pl.Int64,
    "k_true": pl.Int64,
    "k_gold": pl.Int64,
    "k_expressed": pl.Int64,
    "mentions": pl.List(pl.Struct(STATUS_SCHEMA)),
    "hallucinations": pl.List(pl.Struct(HALLUCINATION_SCHEMA)),
}


@dataclass(frozen=True)
class KnowledgeOptions:
    min_chars: int = 2  # the shortest name matched in a response
    text_overlap: int = MatchOptions().overlap_chars  # characters shared with a free-text fact to state it (0: never)
    graph_only: bool = False  # true facts: the graph only (default: the graph and the dialogue's own knowledge)


@dataclass
class _Judged:
    """One response: its fact mentions (triple key -> said, status) and hallucinations."""

    mentions: dict[tuple[str, ...], tuple[str, str]] = field(default_factory=dict)
    hallucinations: list[dict[str, object]] = field(default_factory=list)

    def true_keys(self) -> set[tuple[str, ...]]:
        return {key for key, (_, status) in self.mentions.items() if status == "true"}


class KnowledgeIndex:
    """A domain's graph made ready for judging responses: the grounder's index (names automaton, facts)."""

    def __init__(
        self,
        grounding: GroundingIndex,
        schema: Schema | None,
        segmented: bool,
        options: KnowledgeOptions = KnowledgeOptions(),
    ) -> None:
        self.segmented, self.options, self.schema, self.grounding = segmented, options, schema, grounding
        # a response naming an entity and saying a fact of it expresses the link from the topic too (a goal
        # path's step), where KdConv's annotators mark the fact only
        self.match = MatchOptions(
            overlap_chars=options.text_overlap or MatchOptions().overlap_chars, link_beside_facts=True
        )
        self.skipped = _stop_relation_names(schema)

    @classmethod
    def for_snapshot(
        cls, snapshot: Snapshot, segmented: bool, options: KnowledgeOptions = KnowledgeOptions()
    ) -> KnowledgeIndex:
        """The knowledge index of ``snapshot``'s build: the grounding index kept beside it, unless ``options``
        asks for another shortest name."""
        if options.min_chars == GroundingIndex.min_name_chars:  # the index kept beside the build is made so
            return cls(kept.load_index(snapshot), snapshot.schema, segmented, options)
        grounding = GroundingIndex.from_snapshot(snapshot)
        grounding.min_name_chars = options.min_chars
        return cls(grounding, snapshot.schema, segmented, options)

    def assess(
        self,
        texts: list[str],
        golds: list[str | None],
        row_dialogues: list[int | None],
        row_gold: list[list[Triple] | None],
        dialogues: list[Dialogue],
    ) -> pl.DataFrame:
        """Per response: ``k_mentions, k_true, k_gold, k_expressed`` and the lists ``mentions`` and
        ``hallucinations`` (see the module docstring)."""
        own = _OwnKnowledge(self, dialogues)
        rows = []
        judged_rows = zip(texts, golds, row_dialogues, row_gold, strict=True)
        for text, gold_text, d, annotated in iterate(judged_rows, "judge knowledge", len(texts)):
            dialogue = dialogues[d] if d is not None else None
            judged = self.judge(text, dialogue, own.facts(d))
            gold = self._gold(annotated, dialogue, gold_text, own.facts(d))
            true = judged.true_keys()
            rows.append(
                {
                    "k_mentions": len(judged.mentions),
                    "k_true": len(true),
                    "k_gold": len(gold),
                    "k_expressed": sum(key in true for key in gold),
                    "mentions": [{"said": said, "status": status} for said, status in judged.mentions.values()],
                    "hallucinations": judged.hallucinations,
                }
            )
        return pl.DataFrame(rows, schema=ROW_SCHEMA)

    def judge(self, text: str, dialogue: Dialogue | None, own: list[tuple[Triple, Fact]]) -> _Judged:
        """The fact mentions and hallucinations of one response (see the module docstring)."""
        judged = _Judged()
        if dialogue is None:
            return judged
        matcher = DialogueMatcher(self.grounding, dialogue.topics, self.match)
        _, claims = matcher.message(text)
        for claim in claims:
            if (
                claim.relation in self.skipped
                or claim.status == "unsupported"
                or (not self.options.text_overlap and form(claim.relation or "") in self.grounding.text_relation_names)
            ):
                continue
            subject = self.grounding.label(claim.subject)
            if claim.status == "supported":
                judged.mentions.setdefault(
                    triple_key((subject, claim.relation or "", claim.graph[0])), (claim.said, "true")
                )
            else:
                key = ("contradicted", form(subject), claim.relation or "", form(claim.said))
                if key not in judged.mentions:
                    judged.mentions[key] = (claim.said, "contradicted")
                    judged.hallucinations.append(
                        {
                            "topic": subject,
                            "relation": claim.relation,
                            "said": claim.said,
                            "graph": list(claim.graph[:GRAPH_VALUES_SHOWN]),
                        }
                    )
        if not self.options.graph_only and own:
            said = surface(text)
            cuts = word_cuts(said) if self.segmented else jieba_cuts(self.grounding, said.form)
            for triple, fact in own:
                if fact.text and not self.options.text_overlap:
                    continue  # --text-overlap 0: free text is never stated
                if (
                    stated_span(fact, said, dialogue.topics, self.grounding.relation_words, self.match, cuts)
                    is not None
                ):
                    judged.mentions.setdefault(triple_key(triple), (triple[2], "true"))
        return judged

    def _gold(
        self,
        annotated: list[Triple] | None,
        dialogue: Dialogue | None,
        gold_text: str | None,
        own: list[tuple[Triple, Fact]],
    ) -> list[tuple[str, ...]]:
        if annotated is not None:
            triples = annotated
        elif dialogue is None:
            triples = []
        elif dialogue.gold:
            triples = dialogue.gold
        elif gold_text is None:
            triples = []
        else:  # the dialogue knowledge the gold response states, by the same rules
            return sorted(self.judge(gold_text, dialogue, own).true_keys())
        return list(dict.fromkeys(triple_key(t) for t in triples if t[1] not in self.skipped))


def triple_key(triple: Iterable[str]) -> tuple[str, ...]:
    """A triple in matching form (width, script, case and spaces do not count): triple identity."""
    name, relation, value = triple
    return attr_key({"name": name, "attrname": relation, "attrvalue": value})


class _OwnKnowledge:
    """Each dialogue's own triples that the graph lacks (DuConv goal triples, knowledge an export carries),
    as facts the grounder's session rule can test; made once per dialogue."""

    def __init__(self, index: KnowledgeIndex, dialogues: list[Dialogue]) -> None:
        self.index, self.dialogues = index, dialogues
        self._made: dict[int, list[tuple[Triple, Fact]]] = {}

    def facts(self, d: int | None) -> list[tuple[Triple, Fact]]:
        if d is None:
            return []
        made = self._made.get(d)
        if made is None:
            dialogue = self.dialogues[d]
            text_relations = self.index.grounding.text_relation_names
            made = self._made[d] = [
                (
                    triple,
                    make_fact(triple[0], triple[1], triple[2], None, form(triple[1]) in text_relations, TEXT_CHARS),
                )
                for triple in dict.fromkeys((*dialogue.knowledge, *dialogue.gold))
                if triple[1] not in self.index.skipped and not self._in_graph(triple)
            ]
        return made

    def _in_graph(self, triple: Triple) -> bool:
        grounding = self.index.grounding
        key = triple_key(triple)
        return any(
            triple_key((grounding.label(iri), fact.relation, fact.value)) == key
            for iri in grounding.resolve(triple[0])
            for fact in grounding.facts_of.get(iri, ())
        )


def _stop_relation_names(schema: Schema | None) -> set[str]:
    """The names of the schema's type relation and stop relations: their values are no knowledge shown."""
    if schema is None:
        return set()
    names = set()
    for name in (*schema.stop_relations, schema.type_relation):
        relation = schema.relations.get(name) if name else None
        if relation is not None:
            names |= {n for n in (name, relation.zh, relation.en, *relation.aliases) if n}
    return names


def micro(numerator: Iterable[int], denominator: Iterable[int]) -> float | None:
    total = sum(denominator)
    return sum(numerator) / total if total else None
