"""DuConv (Baidu, ACL 2019): JSON lines, every string word-segmented with single spaces.

* ``session`` (train/dev, reader kind ``duconv-session``): ``{"goal", "knowledge", "conversation"}``;
  Baidu's ``convert_session_to_sample.py`` and dkn_duconv cut it into one sample per bot turn, so it
  needs a conversation.
* ``sample`` (test, ``duconv-sample``): ``{"goal", "knowledge", "history", "response"}``, read directly;
  cut from sessions as ``convert_session_to_sample.py`` does (``history = conversation[:j]``,
  ``response = conversation[j]``, j even). A new goal is a sample with an empty history.

``goal`` is ``[["START", A, B], path triples…]``; ``knowledge`` lists ``[head, relation, tail]``. Every
reader finds each topic's type in the knowledge by ``[topic, "领域", type]`` with the topic spelled exactly
as in ``goal[0]`` (a topic without one crashes the converters with ``UnboundLocalError: domain_b``), and
treats ``电影`` as a film and anything else as a person.
"""

from __future__ import annotations

from typing import Any

from kgforge.datasets.duconv.layouts import duconv_kind
from kgforge.exports.formats._shape import knowledge_gold, line_breaks_problem, session_or_samples
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue, SourceDialogue
from kgforge.exports.registry import Format, Layout, register
from kgforge.sources.dialogue_layouts import is_strings, layout_problem, strings_problem, triples_problem

TYPE_RELATION = "领域"
# A new goal has no gold response. Baidu's converters read a missing one as "null"; dkn_duconv needs the
# key, so the placeholder is written out: every reader then sees the same sample.
NO_RESPONSE = "null"
POOL = "retrieved_knowledge"

SESSION = Layout(
    "session",
    "duconv-session",
    "train/dev sessions: goal, knowledge, conversation",
    needs_conversation=True,
    segmented=True,
)
SAMPLE = Layout(
    "sample",
    "duconv-sample",
    "test samples: goal, knowledge, history, response (a new goal: empty history, response 'null')",
    needs_conversation=False,
    segmented=True,
    cut_from="session",
)


@register
class DuConv(Format):
    name = "duconv"
    description = "DuConv sessions and samples (JSON lines, word-segmented)"
    layouts = (SESSION, SAMPLE)
    goal_layout = "sample"
    reads_dialogues = True
    type_relation = TYPE_RELATION
    marks = (TYPE_RELATION,)  # its readers find a topic's type under 领域 whatever the language
    finds_mentions = False  # a DuConv dialogue's knowledge is about its two goal topics
    pool_budgets = (7, 4)

    def goal_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        topics = [render.name(iri, label) for iri, label in zip(dialogue.topics, dialogue.topic_labels)]
        goal = [["START", *topics], *dialogue.goal_path]
        return [{"goal": goal, "knowledge": dialogue.knowledge, "history": [], "response": NO_RESPONSE}]

    def detect(self, record: Any) -> Layout | None:
        kind = duconv_kind(record)
        return next((layout for layout in self.layouts if layout.kind == kind), None)

    def source_dialogue(self, record: Any, line: int, layout: Layout) -> SourceDialogue | str:
        problem = layout_problem(layout.kind, record)
        if problem:
            return problem
        texts_key = "conversation" if layout is SESSION else "history"
        texts = list(record[texts_key])
        if layout is SAMPLE and isinstance(record.get("response"), str):
            texts.append(record["response"])
        goal = record["goal"]
        return SourceDialogue(
            line,
            layout.kind,
            record,
            topic_names=goal[0][1:],
            texts=texts,
            gold=knowledge_gold(record),
            path=goal[1:],
            segmented=True,
        )

    def dialogue_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        return session_or_samples(dialogue, layout, render, POOL)

    def check(self, record: dict[str, Any], layout: Layout) -> list[str]:
        problems = [p for p in (triples_problem(record, "goal"), triples_problem(record, "knowledge")) if p]
        if layout is SESSION:
            problems += [p for p in [strings_problem(record, "conversation", non_empty=True)] if p]
        else:
            problems += [p for p in [strings_problem(record, "history")] if p]
            if not (isinstance(record.get("response"), str) and record["response"].split()):
                problems.append(
                    "'response' must be a non-empty string: dkn_duconv reads it, and the generative "
                    "reader drops a sample whose response has no word"
                )
        if not problems:
            problems += _goal_problems(record["goal"], record["knowledge"])
        breaks = line_breaks_problem(record, ("goal", "knowledge", "conversation", "history", "response"))
        return problems + ([breaks] if breaks else [])


def _goal_problems(goal: list[list[str]], knowledge: list[list[str]]) -> list[str]:
    if not goal or goal[0][0] != "START":
        return ['goal[0] must be ["START", topic A, topic B]']
    start, topics = goal[0], goal[0][1:]
    problems = []
    if topics[0] == topics[1]:
        problems.append(f"both goal topics are {topics[0]!r}: the readers give the second no type")
    typed = {s for s, p, _ in knowledge if p == TYPE_RELATION}
    problems += [
        f"goal topic {t!r} has no [{t}, {TYPE_RELATION}, …] fact in its knowledge (spelled as in goal[0])"
        for t in topics
        if t not in typed
    ]
    if not is_strings(start):
        problems.append("goal[0] must hold strings")
    return problems
