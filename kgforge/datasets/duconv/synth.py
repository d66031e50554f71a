"""DuConv-style synthesis: a leader who steers from START to the two goal topics along the goal path, and a
follower; released as DuConv sessions (``goal``, ``knowledge``, ``conversation``, word-segmented as DuConv's
files are) with each turn's ``claims``, ``verdicts`` and ``facts``."""

from __future__ import annotations

import json
from typing import Any

from kgforge.core.jsonio import JsonObject
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue
from kgforge.exports.registry import format_named
from kgforge.goals.record import Goal
from kgforge.synth.model import GoalMaterial, Turn, TurnCheck
from kgforge.synth.realise import Chooser, Exchange, Say, facts_about, not_in_order, path_rows
from kgforge.synth.styles import OutputLayout, register_module_style

ROLES = ("leader", "follower")
KINDS = ("one_step", "two_step")


def goal_fields(material: GoalMaterial, dialogue: Dialogue, goal: Goal, render: Render, layout: str) -> None:
    fmt = format_named("duconv")
    material.fields["goal"] = fmt.goal_records(dialogue, fmt.layout("sample"), render)[0]["goal"]


def prompt_values(material: GoalMaterial) -> dict[str, str | int]:
    return {
        "topic_a": material.topic_names[0],
        "topic_b": material.topic_names[-1],
        "goal": json.dumps(material.fields["goal"], ensure_ascii=False),
        "turns": 8,
    }


def opener(material: GoalMaterial) -> str:
    return ROLES[0]


def reached(material: GoalMaterial, turns: list[Turn]) -> str | None:
    """The two goal topics mentioned, the first before the second."""
    return not_in_order(material.topic_names, [t.text for t in turns])


def record(material: GoalMaterial, turns: list[Turn], checks: list[TurnCheck], layout: str) -> JsonObject:
    return {
        "goal": material.fields["goal"],
        "knowledge": material.knowledge,
        "conversation": [turn.text for turn in turns],
        "claims": [list(check.claims) for check in checks],
        "verdicts": [check.verdict for check in checks],
        "facts": [[fact.as_dict() for fact in check.facts] for check in checks],
    }


PHRASES: dict[str, dict[str, Any]] = {  # per language, per move: variants (a phrase or a pair)
    "zh": {
        "open": (("你好！你知道{a}吗？", "不太了解，给我讲讲吧。"), ("最近看过{a}吗？", "还没有，说说看。")),
        "ack": ("原来是这样。", "嗯，挺有意思的。", "哦，这个我还真不知道。"),
        "turn": (("说到{b}，你了解吗？", "听说过，不过不太熟。"), ("再给你聊聊{b}吧。", "好啊。")),
        "close": (("有空可以多了解一下{b}。", "好的，谢谢你！"), ("今天聊得很开心。", "我也是，再见！")),
    },
    "en": {
        "open": (("Hi! Do you know {a}?", "Not much, tell me about it."), ("Have you heard of {a}?", "No, tell me.")),
        "ack": ("I see.", "Interesting.", "I did not know that."),
        "turn": (("Speaking of {b}, do you know it?", "A little."), ("Let me tell you about {b}.", "Sure.")),
        "close": (("You might look into {b} some time.", "I will, thanks!"), ("Nice talking to you.", "Bye!")),
    },
}


def plan(material: GoalMaterial) -> list[Exchange]:
    """Greeting and the first topic; up to two of its facts; the goal path; the second topic and up to two of
    its facts; a goodbye. The leader states, the follower acknowledges."""
    words = PHRASES["en" if material.language.startswith("en") else "zh"]
    pick = Chooser(material)
    leader, follower = ROLES
    a, b = material.topic_names[0], material.topic_names[-1]

    def pair(phrases: tuple[tuple[str, str], ...]) -> Exchange:
        first, second = pick(phrases)
        return Exchange((Say(leader, first.format(a=a, b=b)), Say(follower, second.format(a=a, b=b))), needed=True)

    def stating(row: dict[str, Any], topic: str, most: int = 0) -> Exchange:
        return Exchange((Say(leader, row=row), Say(follower, pick(words["ack"]))), topic=topic, most=most)

    exchanges = [pair(words["open"])]
    exchanges += [stating(row, "a", 2) for row in facts_about(material, material.topics[0])]
    exchanges += [stating(row, "path") for row in path_rows(material)]
    exchanges.append(pair(words["turn"]))
    exchanges += [stating(row, "b", 2) for row in facts_about(material, material.topics[-1])]
    return [*exchanges, pair(words["close"])]


STYLE = register_module_style(__name__, OutputLayout("session", "duconv-session", segmented=True))
