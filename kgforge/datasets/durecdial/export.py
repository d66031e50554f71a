"""DuRecDial (Baidu, ACL 2020) in the layouts of the LIC-2020 baseline (PaddlePaddle/Research) tools.

* ``resource`` (``durecdial-resource``, the generative model's ``data/resource/*.txt``, word-segmented):
  ``{"conversation", "knowledge", "situation", "name", "label", "goal"}``, ``goal`` one ``[type, "", …]``
  list per turn and ``label`` who speaks first (``bot`` / ``user``). ``convert_session_to_sample.py`` cuts
  it into one sample per bot turn: it needs a conversation.
* ``resource-sample`` (``durecdial-resource-sample``, the tools' ``test.txt``): ``{"goal", "knowledge",
  "history", "response"}``, ``history`` starting with the user's name and the situation; cut from
  resource sessions exactly as that script cuts them. A new goal is a sample with that history only.
* ``lic2020`` (``durecdial-lic2020``, the competition's train/dev): ``{"goal": "[1]…-->[2]…", "knowledge",
  "user_profile", "situation", "conversation"}``, the utterance opening goal k prefixed ``[k]``. The goal
  planner (``process_data_for_goal_planning.py``) skips a session whose ``[k]`` count differs from its
  goal count: it needs a conversation.
* ``lic2020-sample`` (``durecdial-lic2020-sample``, the competition's test): ``{"goal", "knowledge",
  "user_profile", "situation", "history"}``, the goal word-segmented and reduced to its first and final
  goals (``[1] … --> ...... --> [n] …``), which the planner's ``process_sample_data`` parses; a new goal
  has an empty history.
* ``acl2020`` (``durecdial-acl2020``, the ACL 2020 release, ``DuRecDial.zip``): ``{"kg", "user_profile",
  "conversation", "goals", "situation"}`` — the competition layout under its first names.
* ``v2`` (``durecdial2``, DuRecDial 2.0's ``zh_*.txt`` and ``en_*.txt``): the competition fields plus
  ``goal_type_list`` and ``goal_topic_list`` (one entry per utterance); ``knowledge`` is the session's list
  (train) or one entry per utterance (dev/test: ``[h, r, t]``, a list of triples, or ``[]``). New goals are
  written in it with an empty conversation (the parallel zh/en export's twins).

Real sessions in any of these are written back field for field as they were, per-utterance knowledge
included; ``acl2020`` and ``v2`` sessions can also be written as ``lic2020`` (same content under the
competition's keys, per-utterance knowledge as the session's list), which the LIC-2020 goal planner reads.
"""

from __future__ import annotations

import re
from typing import Any

from kgforge.core.jsonio import JsonObject
from kgforge.core.scripts import has_cjk, is_cjk_language
from kgforge.datasets.durecdial import layouts as read_layouts
from kgforge.datasets.durecdial.goal_types import CHAT_BY_TYPE, GOAL_TYPES_EN, RECOMMENDATION_BY_TYPE, SEGMENTED_TYPES
from kgforge.datasets.durecdial.layouts import SITUATION_PROBLEM, durecdial_kind, profile_problem
from kgforge.datasets.durecdial.sequences import NEWS_OF
from kgforge.exports.formats._shape import knowledge_gold, line_breaks_problem, session_or_samples
from kgforge.exports.labels import Labels, Render
from kgforge.exports.model import Dialogue, GoldTriple, SourceDialogue
from kgforge.exports.registry import Format, Layout, ParallelExport, register
from kgforge.sources.dialogue_layouts import (
    is_triple,
    is_triples,
    layout_problem,
    session_triples,
    strings_problem,
    triples_problem,
    utterance_knowledge,
)

NO_RESPONSE = "null"  # as the tools read a sample without one
POOL = "retrieved_knowledge"
GOAL_PREFIX = re.compile(r"^\s*\[(\d+)\]")
TOPIC = re.compile(r"『\s*([^』]*?)\s*』")

RESOURCE = Layout(
    "resource",
    "durecdial-resource",
    "LIC-2020 baseline sessions: conversation, knowledge, situation, name, label, per-turn goal list",
    needs_conversation=True,
    segmented=True,
)
RESOURCE_SAMPLE = Layout(
    "resource-sample",
    "durecdial-resource-sample",
    "LIC-2020 baseline samples: goal list, knowledge, history (name, situation, utterances), response",
    needs_conversation=False,
    segmented=True,
    cut_from="resource",
)
LIC2020 = Layout(
    "lic2020",
    "durecdial-lic2020",
    "LIC-2020 competition sessions: goal string, knowledge, user_profile, situation, conversation",
    needs_conversation=True,
    cut_from=("acl2020", "v2"),
)
LIC2020_SAMPLE = Layout(
    "lic2020-sample",
    "durecdial-lic2020-sample",
    "LIC-2020 competition test samples: first and final goal, knowledge, user_profile, situation, history",
    needs_conversation=False,
    segmented=True,
)
ACL2020 = Layout(
    "acl2020",
    "durecdial-acl2020",
    "ACL 2020 release sessions (DuRecDial.zip): kg, user_profile, conversation, goals, situation",
    needs_conversation=True,
)
V2 = Layout(
    "v2",
    "durecdial2",
    "DuRecDial 2.0 sessions (zh_*.txt, en_*.txt): goal, knowledge (session or per "
    "utterance), user_profile, situation, conversation, goal_type_list, goal_topic_list",
    needs_conversation=False,
)
NO_TOPIC = {"", "NULL", "null", "None"}  # what goal_topic_list holds for an utterance without a topic


@register
class DuRecDial(Format):
    name = "durecdial"
    description = "DuRecDial sessions and samples as the LIC-2020 baseline tools read them (JSON lines)"
    layouts = (RESOURCE, RESOURCE_SAMPLE, LIC2020, LIC2020_SAMPLE, ACL2020, V2)
    goal_layout = "lic2020-sample"
    reads_dialogues = True
    type_facts = False  # DuRecDial states types through its goal types (电影推荐), not as facts
    marks = ("『", "』")  # a goal's topic in brackets, in DuRecDial 2.0's English files too
    pool_budgets = (32,)  # a session states ~20 triples, most about one star and their many comments
    parallel = ParallelExport("DuRecDial 2.0's parallel layout", "kgforge.datasets.durecdial.parallel")

    # ---------------------------------------------------------------- new goals

    def goal_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        steps = sequence_steps(dialogue)
        knowledge = dialogue.knowledge
        profile = goal_profile(dialogue, render.labels)
        written = situation_text(dialogue.situation, render.language)
        situation = render.text(re.sub(r"\s+", "", written)) if render.segmenter else written  # cut afresh
        if layout is RESOURCE_SAMPLE:
            key = "姓名" if is_cjk_language(render.language) else "name"
            given = profile.get(key)
            name = given if isinstance(given, str) else ""
            goal = [[f" {step_type(step, render)} ", "", ""] for step in steps]
            return [
                {"goal": goal, "knowledge": knowledge, "history": [name.strip(), situation], "response": NO_RESPONSE}
            ]
        if layout is V2:
            return [
                {
                    "user_profile": profile,
                    "knowledge": knowledge,
                    "conversation": [],
                    "goal": goal_string(steps, render),
                    "situation": written,
                    "goal_type_list": [],
                    "goal_topic_list": [],
                }
            ]
        return [
            {
                "goal": first_and_final_goal(steps, render),
                "knowledge": knowledge,
                "user_profile": profile,
                "situation": situation,
                "history": [],
            }
        ]

    # ---------------------------------------------------------------- real dialogues

    def detect(self, record: Any) -> Layout | None:
        kind = durecdial_kind(record)
        return next((layout for layout in self.layouts if layout.kind == kind), None)

    def source_dialogue(self, record: Any, line: int, layout: Layout) -> SourceDialogue | str:
        if layout in (ACL2020, V2):
            return release_dialogue(record, line, layout)
        problem = layout_problem(layout.kind, record)
        if problem:
            return problem
        texts_key = "conversation" if layout in (RESOURCE, LIC2020) else "history"
        texts = list(record[texts_key]) + ([record["response"]] if isinstance(record.get("response"), str) else [])
        topics = TOPIC.findall(record["goal"]) if isinstance(record["goal"], str) else []
        return SourceDialogue(
            line,
            layout.kind,
            record,
            topic_names=list(dict.fromkeys(t for t in topics if t)),
            texts=texts,
            gold=knowledge_gold(record),
            segmented=layout.segmented,
        )

    def dialogue_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        assert dialogue.source is not None  # a real dialogue, read from its source
        record = dialogue.source.record
        if layout is LIC2020 and dialogue.source.layout != LIC2020.kind:
            return [{**as_lic2020(record), POOL: dialogue.knowledge}]
        return session_or_samples(
            dialogue,
            layout,
            render,
            POOL,
            (record.get("name", ""), record.get("situation", "")),
            first_turn=0 if record.get("label") == "bot" else 1,
        )

    def keeps(self, written: dict[str, Any], source: dict[str, Any], triple: Any) -> bool:
        """A release session cut to the competition layout has its triples in the session's list (moved from
        ``kg`` or from the utterances): kept when that list holds the triple as written."""
        if super().keeps(written, source, triple):
            return True
        cut = (
            "kg" in source
            and "kg" not in written
            or utterance_knowledge(source) is not None
            and utterance_knowledge(written) is None
        )
        return cut and [triple.head, triple.relation, triple.tail] in (written.get("knowledge") or [])

    # ---------------------------------------------------------------- what the tools need

    def check(self, record: dict[str, Any], layout: Layout) -> list[str]:
        if layout in (ACL2020, V2):
            return release_problems(record, layout)
        problems = [p for p in [triples_problem(record, "knowledge")] if p]
        if layout in (RESOURCE, RESOURCE_SAMPLE):
            problems += _resource_problems(record, layout)
        else:
            problems += _lic2020_problems(record, layout)
        breaks = line_breaks_problem(record, ("goal", "knowledge", "conversation", "history", "response", "situation"))
        return problems + ([breaks] if breaks else [])


def _resource_problems(record: dict[str, Any], layout: Layout) -> list[str]:
    goal = record.get("goal")
    problems = (
        []
        if is_triples(goal) and goal
        else ["'goal' must be a non-empty list of 3-string lists (the tools read goal[0][1] and goal[0][2])"]
    )
    if layout is RESOURCE:
        problems += [p for p in [strings_problem(record, "conversation", non_empty=True)] if p]
        problems += [
            f"'{key}' must be a string"
            for key in ("name", "situation", "label")
            if not isinstance(record.get(key), str)
        ]
        if record.get("label") == "user" and len(record.get("conversation") or []) < 2:
            problems.append("a session the user opens needs a second utterance: the bot's turns are the samples")
    else:
        problems += [p for p in [strings_problem(record, "history")] if p]
        if "response" in record and not isinstance(record["response"], str):
            problems.append("'response' must be a string")
    return problems


def _lic2020_problems(record: dict[str, Any], layout: Layout) -> list[str]:
    goal = record.get("goal")
    if not isinstance(goal, str):
        return ["'goal' must be a '[1]…-->[2]…' string"]
    parts = goal.split("-->")
    problems = []
    if any("]" not in part for part in parts if part.strip() != "......"):
        problems.append("every goal must start '[k]'")
    problems += [p for p in [profile_problem(record)] if p]
    if not isinstance(record.get("situation"), str):
        problems.append(SITUATION_PROBLEM)
    if layout is LIC2020:
        problem = strings_problem(record, "conversation", non_empty=True)
        if problem:
            return problems + [problem]
        opened = sum(1 for u in record["conversation"] if GOAL_PREFIX.match(u))
        if opened != len(parts):
            problems.append(
                f"{len(parts)} goals but {opened} utterances open one with '[k]': the goal planner skips such a session"
            )
    else:
        problems += [p for p in [strings_problem(record, "history")] if p]
        needed = 3 if "......" in goal else 2
        if len(parts) < needed:
            problems.append("a sample's goal must give its first and final goals: '[1] … --> ...... --> [n] …'")
    return problems


# ---------------------------------------------------------------- the ACL 2020 and DuRecDial 2.0 layouts


def release_dialogue(record: dict[str, Any], line: int, layout: Layout) -> SourceDialogue | str:
    """A session of the ACL 2020 release or of DuRecDial 2.0, with its gold triples where they sit: the
    session's list (``kg``, or ``knowledge`` in 2.0 train) or each utterance's (2.0 dev/test)."""
    problem = layout_problem(layout.kind, record)
    if problem:
        return problem
    goal = record["goals" if layout is ACL2020 else "goal"]
    topics = [t for t in TOPIC.findall(goal) if t]
    types = set(record.get("goal_type_list") or [])
    topics += [
        t.strip()
        for t in record.get("goal_topic_list") or []
        if isinstance(t, str) and t.strip() not in NO_TOPIC and t not in types
    ]
    return SourceDialogue(
        line,
        layout.kind,
        record,
        topic_names=list(dict.fromkeys(topics)),
        texts=list(record["conversation"]),
        gold=release_gold(record, layout),
    )


def release_gold(record: dict[str, Any], layout: Layout) -> list[GoldTriple]:
    if layout is ACL2020:
        return knowledge_gold(record, "kg")
    per_utterance = utterance_knowledge(record)
    if per_utterance is None:
        return knowledge_gold(record)
    gold = []
    for i, (item, triples) in enumerate(zip(record["knowledge"], per_utterance)):
        nested = not is_triple(item)  # a list of triples, not the triple itself
        for j, t in enumerate(triples):
            gold.append(GoldTriple(t[0], t[1], t[2], ("knowledge", i, j) if nested else ("knowledge", i), 2, i))
    return gold


def release_problems(record: dict[str, Any], layout: Layout) -> list[str]:
    """What keeps ``record``, a session kgforge writes (from a new goal, its conversation may be empty), from
    being one of ``layout`` (:func:`kgforge.datasets.durecdial.layouts.release_problems`), tabs and line breaks
    included."""
    goal_key, knowledge_key = ("goals", "kg") if layout is ACL2020 else ("goal", "knowledge")
    problems = read_layouts.release_problems(record, layout.kind, reading=False)
    breaks = line_breaks_problem(record, (goal_key, knowledge_key, "conversation", "situation"))
    return problems + ([breaks] if breaks else [])


def as_lic2020(record: dict[str, Any]) -> JsonObject:
    """An ACL 2020 or DuRecDial 2.0 session under the LIC-2020 competition's keys (the same content:
    the goal string, the session's triples, profile, situation and conversation)."""
    return {
        "goal": record.get("goal", record.get("goals")),
        "knowledge": session_triples(record),
        "user_profile": record["user_profile"],
        "situation": record["situation"],
        "conversation": record["conversation"],
    }


def goal_profile(dialogue: Dialogue, labels: Labels) -> JsonObject:
    """A goal's user profile in the export's language: ``profile`` (DuRecDial's Chinese keys), or in an English
    export ``profile_en`` (``kgforge goals`` gives both), each entity it could only give its Chinese name
    (``profile_entities`` says which) named by the export's labels. What stays in Chinese is the export's
    language check's to refuse or list."""
    if not labels.language.startswith("en") or not isinstance(dialogue.profile_en, dict):
        return dialogue.profile or {}
    named = dialogue.profile_entities or {}

    def one(value: Any) -> Any:
        if isinstance(value, list):
            return [one(v) for v in value]
        if not isinstance(value, str) or not has_cjk(value):
            return value
        core = value.removeprefix(NEWS_OF)
        return value[: len(value) - len(core)] + labels.entity(named[core]) if core in named else value

    return {key: one(value) for key, value in dialogue.profile_en.items()}


def goal_string(steps: list[dict[str, Any]], render: Render) -> str:
    """``[1] 寒暄 --> [2] 电影推荐 ( 『 苏州河 』 )``: every goal of a sequence, in the render's language."""

    def one(i: int, step: dict[str, Any]) -> str:
        kind = step_type(step, render)
        topic = f" ( 『 {step['topic_label']} 』 )" if step.get("topic_label") else ""
        return f"[{i}] {kind}{topic}"

    return " --> ".join(one(i, step) for i, step in enumerate(steps, start=1))


def situation_text(situation: Any, language: str) -> str:
    """A goal's situation as DuRecDial writes it, in ``language``: the goal generator gives a string, or
    ``{"text": …, "en": {"text": …}}`` (a goal without one, or a dialogue object from before goals had one:
    empty)."""
    if isinstance(situation, str):
        return situation
    if not isinstance(situation, dict):
        return ""
    if not language.startswith("zh") and isinstance(situation.get(language[:2]), dict):
        return situation[language[:2]].get("text") or ""
    return situation.get("text") or ""


# ---------------------------------------------------------------- goal sequences


def sequence_steps(dialogue: Dialogue) -> list[dict[str, Any]]:
    """The DuRecDial goal sequence of a dialogue: its own, or one made from its topics and their types."""
    labels = dict(zip(dialogue.topics, dialogue.topic_labels))
    if dialogue.sequence:
        return [
            dict(step, topic_label=labels.get(step["topic"], step.get("topic_label"))) for step in dialogue.sequence
        ]
    steps = [("问答", 0)]
    for i in range(1, len(dialogue.topics)):
        kind = dialogue.topic_types[i] or ""
        steps.append((RECOMMENDATION_BY_TYPE.get(kind) or CHAT_BY_TYPE.get(kind) or "提问", i))
    out = [
        {"type": t, "type_en": GOAL_TYPES_EN[t], "topic": dialogue.topics[i], "topic_label": dialogue.topic_labels[i]}
        for t, i in steps
    ]
    return out + [{"type": "再见", "type_en": GOAL_TYPES_EN["再见"], "topic": None, "topic_label": None}]


def first_and_final_goal(steps: list[dict[str, Any]], render: Render) -> str:
    """``[1] 问答 ( 『 周迅 』 ) --> ...... --> [3] 电影 推荐 ( 『 苏州河 』 )``: a test sample's goal, word-segmented
    as the goal planner parses it; the final goal is the last one before 再见."""
    numbered = [(i, step) for i, step in enumerate(steps, start=1) if step["type"] != "再见"] or list(
        enumerate(steps, 1)
    )
    chosen = [numbered[0], numbered[-1]] if len(numbered) > 1 else numbered * 2

    def one(i: int, step: dict[str, Any]) -> str:
        topic = f" ( 『 {render.name(step['topic'], step['topic_label'])} 』 )" if step.get("topic_label") else ""
        return f"[{i}] {step_type(step, render)}{topic}"

    return f"{one(*chosen[0])} --> ...... --> {one(*chosen[1])}"


def step_type(step: dict[str, Any], render: Render) -> str:
    """A goal step's type as the layout writes it: in English DuRecDial 2.0's name (``type_en``: Movie
    recommendation); in Chinese as DuRecDial's resource files segment it (兴趣点 推荐, where a segmenter cuts
    兴趣 点 推荐) in a segmented layout."""
    kind = step["type"]
    if render.language.startswith("en"):
        return step.get("type_en") or GOAL_TYPES_EN.get(kind) or kind
    return SEGMENTED_TYPES.get(kind, kind) if render.segmenter else render.text(kind)
