"""Knowledge metrics: which facts a response states, whether the graph holds them, and how much of the
dialogue's gold knowledge it expresses.

**Mentions.** One Aho-Corasick automaton (pyahocorasick) holds every label and alias (``rdfs:label``,
``skos:altLabel``) of the domain's entities, every short value of its facts (relations of kind ``entity`` or
``literal``, leaving out the schema's ``type_relation`` and ``stop_relations``: 领域 电影, 性别 女 … are not
knowledge a response shows), and the names and values of the dialogues' own knowledge. Words that name a
relation or a type of the schema ("导演", "电影") are read as such, never as values. A response is matched
leftmost-longest; segmented text in its unsegmented form, each match beginning and ending on a word boundary
(see ``segmentation.match_form``). Forms shorter than ``min_chars`` (2) are not matched. A mention of one of
the dialogue's own topics names the topic; it is not a fact mention.

**Fact mentions.** A mention ``m`` of another entity or value is a fact stated about the dialogue's topics:

* *true* when some topic ``t`` has a fact ``(t, p, m)`` or ``(m, p, t)`` in the graph (or, unless
  ``graph_only``, in the dialogue's own knowledge, e.g. DuConv goal triples the graph lacks);
* *contradicted* — a hallucination — when it is not true and some topic ``t`` has values for a relation
  ``p`` whose values elsewhere in the graph include ``m``, but not ``m``: the response gives ``t`` a ``p``
  the graph does not (the graph is read as complete for a relation a topic has). The hallucination list
  names the topic, the relation, what was said (as written) and the graph's values;
* otherwise it relates to none of the topics, and is not counted.

A free-text fact of a topic (a relation of kind ``text``: comments, Information) is stated when the response
shares a run of ``text_overlap`` (8) characters with it; it counts as a true fact mention.

**Precision** = true fact mentions / fact mentions (each distinct mention once per response). **Recall** =
gold knowledge expressed / gold knowledge: the response's annotated knowledge (KdConv ``attrs``, a
``gold_knowledge`` column), else the dialogue's goal path (DuConv goal triples, a kgforge export's path),
else the dialogue knowledge the gold response expresses (DuRecDial). A gold triple is expressed when its
value occurs in the response (unsegmented; free text: ``text_overlap`` characters in common). Corpus values
are micro-averages (sums over all responses); F1 is their harmonic mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import ahocorasick
import polars as pl

from kgforge.evaluation._kgforge import (
    GraphTables,
    Schema,
    domain_paths,
    load_schema,
    read_manifest,
    read_tables,
)
from kgforge.evaluation.inputs import Dialogue, Triple
from kgforge.evaluation.segmentation import label_form, match_form

LITERAL = "\x1f"  # node keys: an entity is its IRI, a value is LITERAL + its matched form
GRAPH_VALUES_SHOWN = 5
MENTION_SCHEMA = {"row": pl.Int64, "pid": pl.Int64, "said": pl.String}
STATUS_SCHEMA = {"said": pl.String, "status": pl.String}
HALLUCINATION_SCHEMA = {"topic": pl.String, "relation": pl.String, "said": pl.String, "graph": pl.List(pl.String)}
PAIR_SCHEMA = {"a": pl.String, "b": pl.String}


@dataclass(frozen=True)
class KnowledgeOptions:
    min_chars: int = 2  # the shortest label or value matched in a response
    text_overlap: int = 8  # characters a response shares with a free-text fact to state it
    graph_only: bool = False  # true facts: the graph only (default: the graph and the dialogue's own knowledge)


class KnowledgeIndex:
    """A domain's graph made ready for matching responses: the automaton's forms, which nodes each names,
    and the facts as (topic, value) keys, built once with polars from ``read_tables``."""

    def __init__(self, tables: GraphTables, schema: Schema | None, segmented: bool,
                 options: KnowledgeOptions = KnowledgeOptions()) -> None:
        self.segmented, self.options = segmented, options
        self.tables = tables
        self._forms_of: dict[str, str] = {}
        self._kinds: dict[str, str] = {}
        self.schema = schema
        relations = tables.relations
        self.skipped_relations = _skipped_relations(schema)
        self.text_relations = set(relations.filter(pl.col("kind") == "text")["iri"].to_list())
        if schema is not None:
            self.text_relations |= {r.iri for r in schema.relations.values() if r.kind == "text"}
        # "导演", "电影": words that name a relation or a type read as that, not as a value
        self.vocabulary = {self.form_of(name) for name in _vocabulary_words(relations, schema)}
        value_relations = relations.filter(pl.col("kind") != "text",
                                           ~pl.col("iri").is_in(list(self.skipped_relations)))["iri"]
        facts = tables.domain_facts()
        self.text_facts = facts.filter(pl.col("p").is_in(list(self.text_relations))).select(t="s", text="o")
        facts = facts.filter(pl.col("p").is_in(value_relations.implode()))
        self.forms: dict[str, int] = {}
        value_keys = self._patterns(tables.labels, facts)
        facts = facts.with_columns(b=pl.when(pl.col("o_is_entity")).then(pl.col("o"))
                                   .otherwise(pl.col("o").replace_strict(value_keys, default=None)))
        self.pairs = pl.concat([facts.select(a="s", b="b"), facts.filter(pl.col("o_is_entity")).select(a="o", b="s")])
        self.value_relations = facts.select(node="b", p="p").unique()  # which relations a value is a value of
        self.topic_relations = facts.select(t="s", p="p")  # which relations a topic has values for (semi-joined)
        self.facts = facts.select("s", "p", "b")

    def _patterns(self, labels: pl.DataFrame, facts: pl.DataFrame) -> dict[str, str]:
        """Fills ``forms`` and ``pattern_nodes`` with every entity label and every literal value; returns
        each literal value's node key."""
        pattern_nodes = [(self._form_id(label), iri) for iri, label in labels.select("iri", "label").unique().iter_rows()]
        value_keys = {}
        for value in facts.filter(~pl.col("o_is_entity"))["o"].unique().to_list():
            form = self.form_of(value)
            value_keys[value] = LITERAL + form
            pattern_nodes.append((self._form_id(value, form), LITERAL + form))
        self.pattern_nodes = pl.DataFrame(pattern_nodes, schema={"pid": pl.Int64, "node": pl.String},
                                          orient="row").unique()
        return value_keys

    def _form_id(self, text: str, form: str | None = None) -> int:
        form = self.form_of(text) if form is None else form
        return self.forms.setdefault(form, len(self.forms))

    def form_of(self, text: str) -> str:
        """``label_form(text)``, remembered: the same names and values come back many times."""
        form = self._forms_of.get(text)
        if form is None:
            form = self._forms_of[text] = label_form(text, self.segmented)
        return form

    @classmethod
    def for_domain(cls, domain: str, workdir: str | None, segmented: bool,
                   options: KnowledgeOptions = KnowledgeOptions()) -> "KnowledgeIndex":
        paths = domain_paths(domain, workdir)
        manifest = read_manifest(paths)
        schema = load_schema(manifest.schema.path)
        return cls(read_tables(paths), schema, segmented, options)

    def relation_kind(self, relation_label: str) -> str:
        """``text`` (free text), ``skipped`` (type and stop relations) or ``value``, for a relation's label."""
        kind = self._kinds.get(relation_label)
        if kind is None:
            iri = self.schema.relation_for(relation_label).iri if self.schema is not None else None
            kind = "text" if iri in self.text_relations else "skipped" if iri in self.skipped_relations else "value"
            self._kinds[relation_label] = kind
        return kind

    # ---------------------------------------------------------------- one evaluation

    def assess(self, texts: list[str], golds: list[str | None], row_dialogues: list[int | None],
               row_gold: list[list[Triple] | None], dialogues: list[Dialogue]) -> pl.DataFrame:
        """Per response: ``k_mentions, k_true, k_gold, k_expressed`` and the lists ``mentions`` and
        ``hallucinations`` (see the module docstring)."""
        context = _Context(self, dialogues)
        mentions, forms = context.mentions(texts)
        statuses, hallucinations = context.judge(mentions, row_dialogues)
        stated, gold_sizes, expressed = [], [], []
        for row, form in enumerate(forms):
            dialogue = row_dialogues[row]
            stated.append(context.text_facts_stated(form, dialogue) if dialogue is not None else 0)
            gold = context.gold_for(row_gold[row], dialogue, golds[row])
            gold_sizes.append(len(gold))
            expressed.append(sum(context.expresses(form, triple) for triple in gold))
        rows = pl.DataFrame({"row": range(len(forms)), "texts": stated, "k_gold": gold_sizes, "k_expressed": expressed},
                            schema={"row": pl.Int64, "texts": pl.Int64, "k_gold": pl.Int64, "k_expressed": pl.Int64})
        said = statuses.sort("row", "pid").group_by("row", maintain_order=True).agg(
            values=pl.len(), true=(pl.col("status") == "true").sum(), mentions=pl.struct("said", "status"))
        wrong = hallucinations.group_by("row", maintain_order=True).agg(
            hallucinations=pl.struct("topic", "relation", "said", "graph"))
        return rows.join(said, on="row", how="left").join(wrong, on="row", how="left").sort("row").select(
            k_mentions=pl.col("values").fill_null(0) + pl.col("texts"),
            k_true=pl.col("true").fill_null(0) + pl.col("texts"),
            k_gold="k_gold", k_expressed="k_expressed",
            mentions=pl.col("mentions").fill_null(pl.lit([], pl.List(pl.Struct(STATUS_SCHEMA)))),
            hallucinations=pl.col("hallucinations").fill_null(pl.lit([], pl.List(pl.Struct(HALLUCINATION_SCHEMA)))),
        )


def _skipped_relations(schema: Schema | None) -> set[str]:
    """The schema's type relation and stop relations: their values are not knowledge a response shows."""
    if schema is None:
        return set()
    return {schema.relations[r].iri for r in (*schema.stop_relations, schema.type_relation)
            if r and r in schema.relations}


def _vocabulary_words(relations: pl.DataFrame, schema: Schema | None) -> list[str]:
    """The names of the domain's relations and types, in every language and alias."""
    names = [*relations["zh"].to_list(), *relations["en"].to_list()]
    if schema is not None:
        names += [name for r in schema.relations.values() for name in (r.zh, r.en, *r.aliases)]
        names += [name for t in schema.types.values() for name in (t.zh, t.en)]
    return [name for name in names if name]


class _Context:
    """The index extended with one evaluation's dialogues: their topics, knowledge and extra forms."""

    def __init__(self, index: KnowledgeIndex, dialogues: list[Dialogue]) -> None:
        self.index = index
        self.dialogues = dialogues
        self.forms = dict(index.forms)
        entity_nodes = index.pattern_nodes.filter(~pl.col("node").str.starts_with(LITERAL))
        self.entities_of: dict[int, list[str]] = {}
        for pid, node in entity_nodes.iter_rows():
            self.entities_of.setdefault(pid, []).append(node)
        topic_rows, truth_rows = [], []
        extra_nodes: list[tuple[int, str]] = []
        for d, dialogue in enumerate(dialogues):
            for topic in dialogue.topics:
                topic_rows += [(d, node) for node in self.subject_nodes(topic, extra_nodes)]
            for head, relation, tail in (*dialogue.knowledge, *dialogue.gold):
                if index.relation_kind(relation) != "value":
                    continue
                tails = self.value_nodes(tail, extra_nodes)
                for node in self.subject_nodes(head, extra_nodes):
                    truth_rows += [(d, node, value) for value in tails]
        self.topics = pl.DataFrame(topic_rows, schema={"dialogue": pl.Int64, "t": pl.String}, orient="row").unique()
        truth = pl.DataFrame(truth_rows, schema={"dialogue": pl.Int64, "a": pl.String, "b": pl.String}, orient="row")
        self.dialogue_pairs = pl.concat([truth, truth.select("dialogue", a="b", b="a")]).unique()
        self.pattern_nodes = pl.concat([index.pattern_nodes, pl.DataFrame(
            extra_nodes, schema={"pid": pl.Int64, "node": pl.String}, orient="row")]).unique()
        self.lengths = {pid: len(form) for form, pid in self.forms.items()}
        self.automaton = ahocorasick.Automaton()
        for form, pid in self.forms.items():
            if len(form) >= index.options.min_chars and form not in index.vocabulary:
                self.automaton.add_word(form, pid)
        if len(self.automaton):
            self.automaton.make_automaton()

    def _form(self, text: str, extra_nodes: list[tuple[int, str]]) -> tuple[int, str]:
        form = self.index.form_of(text)
        if form not in self.forms:
            self.forms[form] = len(self.forms)
            extra_nodes.append((self.forms[form], LITERAL + form))
        return self.forms[form], form

    def subject_nodes(self, name: str, extra_nodes: list[tuple[int, str]]) -> list[str]:
        """The entities a dialogue's name for a topic or head stands for (its own key when the graph has none)."""
        pid, form = self._form(name, extra_nodes)
        return self.entities_of.get(pid) or [LITERAL + form]

    def value_nodes(self, value: str, extra_nodes: list[tuple[int, str]]) -> list[str]:
        pid, form = self._form(value, extra_nodes)
        return [*self.entities_of.get(pid, []), LITERAL + form]

    # ---------------------------------------------------------------- mentions

    def mentions(self, texts: list[str]) -> tuple[pl.DataFrame, list[str]]:
        """``row, pid, said``: every distinct form a response mentions (leftmost-longest, on word boundaries
        for segmented text) and how it was written; and each response's matched form."""
        rows: list[tuple[int, int, str]] = []
        forms = []
        segmented, searchable = self.index.segmented, len(self.automaton) > 0
        for row, text in enumerate(texts):
            matched = match_form(text, segmented)
            forms.append(matched.form)
            if not searchable:
                continue
            seen = set()
            for end, pid in self.automaton.iter_long(matched.form):
                start = end - self.lengths[pid] + 1
                if pid not in seen and matched.aligned(start, end):
                    seen.add(pid)
                    rows.append((row, pid, matched.said(start, end)))
        return pl.DataFrame(rows, schema=MENTION_SCHEMA, orient="row"), forms

    def judge(self, mentions: pl.DataFrame, row_dialogues: list[int | None]) -> tuple[pl.DataFrame, pl.DataFrame]:
        """``row, pid, said, status``: each fact mention's status (true / contradicted); and the hallucinations."""
        rows = pl.DataFrame({"row": range(len(row_dialogues)), "dialogue": row_dialogues},
                            schema={"row": pl.Int64, "dialogue": pl.Int64})
        candidates = (mentions.join(rows, on="row").join(self.pattern_nodes, on="pid")
                      .join(self.topics, on="dialogue"))
        topic_mentions = candidates.filter(pl.col("node") == pl.col("t")).select("row", "pid").unique()
        pairs = candidates.join(topic_mentions, on=["row", "pid"], how="anti").filter(pl.col("node") != pl.col("t"))
        graph_true = pairs.join(self.index.pairs, left_on=["t", "node"], right_on=["a", "b"], how="semi")
        true = graph_true
        if not self.index.options.graph_only:
            true = pl.concat([graph_true, pairs.join(self.dialogue_pairs, left_on=["dialogue", "t", "node"],
                                                     right_on=["dialogue", "a", "b"], how="semi")])
        conflicts = (pairs.join(true.select("row", "pid").unique(), on=["row", "pid"], how="anti")
                     .join(self.index.value_relations, on="node")
                     .join(self.index.topic_relations, on=["t", "p"], how="semi"))
        agreeing = self._agreeing(conflicts)
        true_keys = pl.concat([true.select("row", "pid"), agreeing]).unique()
        contradicted = conflicts.join(true_keys, on=["row", "pid"], how="anti")
        said = mentions.unique(["row", "pid"], keep="first")
        statuses = pl.concat([true_keys.with_columns(status=pl.lit("true")),
                              contradicted.select("row", "pid").unique().with_columns(status=pl.lit("contradicted"))])
        return (statuses.join(said, on=["row", "pid"]).select("row", "pid", "said", "status"),
                self._hallucinations(contradicted.join(said, on=["row", "pid"])))

    def _agreeing(self, conflicts: pl.DataFrame) -> pl.DataFrame:
        """``row, pid`` of the conflicting mentions that are part of one of the graph's values for the topic and
        relation, or hold one ("1958" of "1958-4-29", "北京" of "中国北京"): they agree with the graph."""
        said = conflicts.select("row", "pid", "t", "p").unique().join(self.form_frame, on="pid")
        held = said.join(self.index.facts, left_on=["t", "p"], right_on=["s", "p"]).filter(
            pl.col("b").str.starts_with(LITERAL)).with_columns(value=pl.col("b").str.slice(len(LITERAL)))
        return held.filter(pl.col("value").str.contains(pl.col("form"), literal=True)
                           | pl.col("form").str.contains(pl.col("value"), literal=True)).select("row", "pid").unique()

    @cached_property
    def form_frame(self) -> pl.DataFrame:
        return pl.DataFrame({"form": list(self.forms), "pid": list(self.forms.values())},
                            schema={"form": pl.String, "pid": pl.Int64})

    def _hallucinations(self, contradicted: pl.DataFrame) -> pl.DataFrame:
        """``row, topic, relation, said, graph``: each contradicted mention with the topic and relation it
        contradicts and the graph's values for them (labels)."""
        cases = contradicted.select("row", "t", "p", "said").unique().sort("row", "said", "t", "p")
        held = (cases.select("t", "p").unique().join(self.index.facts, left_on=["t", "p"], right_on=["s", "p"])
                .sort("b").group_by("t", "p").agg(values=pl.col("b").head(GRAPH_VALUES_SHOWN)))
        names = self._labels(set(cases["t"].to_list()) | set(cases["p"].to_list())
                             | {v for values in held["values"].to_list() for v in values})
        def named(node: pl.Expr) -> pl.Expr:
            return node.replace_strict(names, default=node, return_dtype=pl.String)

        return cases.join(held, on=["t", "p"], how="left", maintain_order="left").select(
            "row", topic=named(pl.col("t")), relation=named(pl.col("p")), said="said",
            graph=pl.col("values").fill_null(pl.lit([], pl.List(pl.String))).list.eval(named(pl.element())))

    def _labels(self, nodes: set[str]) -> dict[str, str]:
        tables = self.index.tables
        wanted = [n for n in nodes if not n.startswith(LITERAL)]
        found = (tables.labels.filter(pl.col("iri").is_in(wanted)).sort("iri", pl.col("preferred").not_(), "label")
                 .unique("iri", keep="first"))
        names = dict(zip(found["iri"].to_list(), found["label"].to_list()))
        for iri, zh, en in tables.relations.filter(pl.col("iri").is_in(wanted)).select("iri", "zh", "en").iter_rows():
            names[iri] = zh or en or iri
        names.update({n: n.removeprefix(LITERAL) for n in nodes if n.startswith(LITERAL)})
        return names

    # ---------------------------------------------------------------- free text and gold knowledge

    def text_facts_stated(self, form: str, dialogue: int) -> int:
        return sum(self.overlaps(form, text) for text in self.dialogue_texts.get(dialogue, ()))

    @cached_property
    def dialogue_texts(self) -> dict[int, list[str]]:
        """The free-text facts of each dialogue's topics (graph and own knowledge), in matched form."""
        graph = self.topics.join(self.index.text_facts, on="t").group_by("dialogue").agg(pl.col("text").unique())
        texts: dict[int, list[str]] = {d: values for d, values in graph.iter_rows()}
        for d, dialogue in enumerate(self.dialogues):
            own = [tail for _, relation, tail in dialogue.knowledge if self.index.relation_kind(relation) == "text"]
            if own:
                texts[d] = texts.get(d, []) + own
        return {d: list(dict.fromkeys(self.index.form_of(text) for text in values))
                for d, values in texts.items()}

    def overlaps(self, form: str, text: str) -> bool:
        """Whether ``form`` and ``text`` share a run of ``text_overlap`` characters (all of the shorter one's)."""
        size = min(self.index.options.text_overlap, len(text))
        return size > 0 and any(form[i:i + size] in text for i in range(len(form) - size + 1))

    def gold_for(self, annotated: list[Triple] | None, dialogue: int | None, gold: str | None) -> list[Triple]:
        if annotated is not None:
            return annotated
        if dialogue is None:
            return []
        own = self.dialogues[dialogue]
        if own.gold:
            return own.gold
        if gold is None:
            return []
        gold_form = match_form(gold, self.index.segmented).form
        return [t for t in dict.fromkeys(own.knowledge) if self.expresses(gold_form, t)]

    def expresses(self, form: str, triple: Triple) -> bool:
        value = self.index.form_of(triple[2])
        if self.index.relation_kind(triple[1]) == "text" and len(value) > self.index.options.text_overlap:
            return self.overlaps(form, value)
        return bool(value) and value in form


def micro(numerator: Iterable[int], denominator: Iterable[int]) -> float | None:
    total = sum(denominator)
    return sum(numerator) / total if total else None
