"""KdConv-style synthesis: two speakers walking the facts of the goal's topics, topic to topic along its path;
released as KdConv dialogues (one JSON array of ``name`` and ``messages``), each message with the ``attrs`` the
grounder found (KdConv leaves the key out where a message states nothing), its ``claims``, ``verdict`` and
``facts``."""

from __future__ import annotations

from typing import Any

from kgforge.core.jsonio import JsonObject
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue
from kgforge.goals.record import Goal
from kgforge.synth.model import GoalMaterial, Turn, TurnCheck
from kgforge.synth.realise import LONG_VALUE, Chooser, Exchange, Say, facts_about, not_in_order, path_rows
from kgforge.synth.styles import OutputLayout, register_module_style

ROLES = ("A", "B")
KINDS = ("path",)


def goal_fields(material: GoalMaterial, dialogue: Dialogue, goal: Goal, render: Render, layout: str) -> None:
    material.fields["name"] = material.topic_labels[0]


def prompt_values(material: GoalMaterial) -> dict[str, str | int]:
    return {"goal": " → ".join(material.topic_labels), "turns": 4 + 4 * len(material.topics)}


def opener(material: GoalMaterial) -> str:
    return ROLES[0]


def reached(material: GoalMaterial, turns: list[Turn]) -> str | None:
    """The path's topics mentioned in the path's order."""
    return not_in_order(material.topic_names, [t.text for t in turns])


def record(material: GoalMaterial, turns: list[Turn], checks: list[TurnCheck], layout: str) -> JsonObject:
    messages = []
    for turn, check in zip(turns, checks, strict=True):
        attrs = [{"name": f.labels[0], "attrname": f.labels[1], "attrvalue": f.labels[2]} for f in check.facts]
        messages.append(
            {"message": turn.text}
            | ({"attrs": attrs} if attrs else {})
            | {"claims": list(check.claims), "verdict": check.verdict, "facts": [f.as_dict() for f in check.facts]}
        )
    return {"name": material.fields["name"], "messages": messages}


PHRASES: dict[str, dict[str, Any]] = {  # per language, per move: variants (a phrase or a pair)
    "zh": {
        "open": (("你知道{t}吗？", "知道，我们聊聊{t}吧。"), ("你去过{t}吗？", "去过，可以跟你说说{t}。")),
        "next": (("聊聊{t}吧。", "好的。"), ("那{t}呢？", "我也知道一些。")),
        "link": ("还有什么相关的吗？", "接下来聊什么？"),
        "ask": ("{t}的{r}是什么？", "你知道{t}的{r}吗？"),
        "tell": ("能介绍一下{t}吗？", "再说说{t}吧。"),
        "close": (("谢谢你，我知道了很多。", "不客气。"), ("今天聊得真开心。", "我也是。")),
    },
    "en": {
        "open": (("Do you know {t}?", "Yes, let us talk about {t}."), ("Have you been to {t}?", "I have.")),
        "next": (("What about {t}?", "I know a bit."), ("Let us talk about {t}.", "Sure.")),
        "link": ("Anything related?", "What next?"),
        "ask": ("What is the {r} of {t}?", "Do you know the {r} of {t}?"),
        "tell": ("Tell me about {t}.", "What else about {t}?"),
        "close": (("Thanks, I learned a lot.", "You are welcome."), ("Nice talking.", "Same here.")),
    },
}


def plan(material: GoalMaterial) -> list[Exchange]:
    """The first topic brought up; per topic up to three of its facts, asked by A and answered by B; the path's
    fact leading to the next topic, then that topic; a closing exchange."""
    words = PHRASES["en" if material.language.startswith("en") else "zh"]
    pick = Chooser(material)
    asker, teller = ROLES
    links = path_rows(material)
    exchanges: list[Exchange] = []
    for i, (topic, name) in enumerate(zip(material.topics, material.topic_names)):
        if i:
            leading = [row for row in links if topic in (row["s"], row["o"])]
            exchanges += [Exchange((Say(asker, pick(words["link"])), Say(teller, row=row))) for row in leading]
        first, second = pick(words["open" if i == 0 else "next"])
        exchanges.append(Exchange((Say(asker, first.format(t=name)), Say(teller, second.format(t=name))), True))
        for row in facts_about(material, topic):
            asked = pick(words["tell"] if len(row["o_label"]) >= LONG_VALUE else words["ask"])
            exchange = (Say(asker, asked.format(t=name, r=row["p_label"])), Say(teller, row=row))
            exchanges.append(Exchange(exchange, topic=topic, most=3))
    first, second = pick(words["close"])
    return [*exchanges, Exchange((Say(asker, first), Say(teller, second)), True)]


STYLE = register_module_style(__name__, OutputLayout("dialogues", "kdconv", array=True))
