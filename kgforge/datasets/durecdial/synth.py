"""DuRecDial-style synthesis: a recommender (the bot) and a seeker (the user) through the goal sequence, with
the user's profile and the situation; each turn marks the goal it serves. Released in a DuRecDial layout:
``lic2020`` (the competition's sessions, which the LIC-2020 goal planner reads: ``goal``, ``knowledge``,
``user_profile``, ``situation``, ``conversation`` with ``[k]`` opening goal k), ``v2`` (DuRecDial 2.0: the same
and ``goal_type_list``, ``goal_topic_list``) or ``acl2020`` (the ACL 2020 release's keys), each session with its
turns' ``claims``, ``verdicts`` and ``facts`` (claim spans count from the start of the utterance as written, its
``[k]`` included)."""

from __future__ import annotations

import json
import re
from typing import Any

from kgforge.core.jsonio import JsonObject
from kgforge.datasets.durecdial.export import sequence_steps, situation_text
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue
from kgforge.goals.record import Goal
from kgforge.synth.model import GoalMaterial, Turn, TurnCheck
from kgforge.synth.realise import Exchange, Say, facts_about, not_in_order, path_rows
from kgforge.synth.styles import OutputLayout, register_module_style

ROLES = ("recommender", "seeker")
KINDS = ("sequence",)
OPENED_BY_THE_BOT = "寒暄"  # DuRecDial's loaders: the bot speaks first when the first goal is a greeting


def goal_fields(material: GoalMaterial, dialogue: Dialogue, goal: Goal, render: Render, layout: str) -> None:
    english = material.language.startswith("en")
    material.steps = sequence_steps(dialogue)
    own = goal.extra.get("goal_string_en" if english else "goal_string")
    material.fields["goal"] = own if isinstance(own, str) else _goal_string(material.steps, english)
    profile = goal.extra.get("profile_en" if english else "profile", dialogue.profile)
    material.fields["user_profile"] = profile if isinstance(profile, dict) else {}
    material.fields["situation"] = situation_text(goal.extra.get("situation"), material.language)
    given = goal.extra.get("situation")
    situation = given if isinstance(given, dict) else {}
    text = material.fields["situation"]
    weekday = re.search(r"星期[一二三四五六日天]|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday", text)
    material.fields["weekday"] = weekday[0] if weekday else ""
    material.fields["daytime"] = re.sub(r"[\d:]+", "", str(situation.get("time", ""))).strip()
    material.context = " ".join([material.fields["situation"], json.dumps(material.fields["user_profile"])])


def _goal_string(steps: list[dict[str, Any]], english: bool) -> str:
    def one(i: int, step: dict[str, Any]) -> str:
        kind = step.get("type_en") if english and step.get("type_en") else step["type"]
        return f"[{i}]{kind}" + (f"(『{step['topic_label']}』)" if step.get("topic_label") else "")

    return "-->".join(one(i, step) for i, step in enumerate(steps, start=1))


def prompt_values(material: GoalMaterial) -> dict[str, str | int]:
    return {
        "goal": material.fields["goal"],
        "opener": opener(material),
        "profile": json.dumps(material.fields["user_profile"], ensure_ascii=False),
        "situation": material.fields["situation"],
        "turns": 2 * len(material.steps) + 2,
    }


def opener(material: GoalMaterial) -> str:
    return ROLES[0] if material.steps and material.steps[0]["type"] == OPENED_BY_THE_BOT else ROLES[1]


def reached(material: GoalMaterial, turns: list[Turn]) -> str | None:
    """Every goal of the sequence served, in order (each turn's goal number never goes back), and each goal's
    topic named in that goal's turns."""
    marks = [turn.goal or 0 for turn in turns]
    if any(b < a for a, b in zip(marks, marks[1:])):
        return "goal not reached: the turns go back to an earlier goal"
    for k, step in enumerate(material.steps, start=1):
        served = [turn.text for turn in turns if turn.goal == k]
        if not served:
            return f"goal not reached: no turn serves goal [{k}] {step['type']}"
        name = step.get("topic_label")
        if name and not_in_order([name], served):
            return f"goal not reached: goal [{k}] {step['type']} never names 『{name}』"
    return None


def record(material: GoalMaterial, turns: list[Turn], checks: list[TurnCheck], layout: str) -> JsonObject:
    prefixes = [
        f"[{t.goal}]" if t.goal and (i == 0 or turns[i - 1].goal != t.goal) else "" for i, t in enumerate(turns)
    ]
    conversation = [prefix + turn.text for prefix, turn in zip(prefixes, turns)]
    claims = [[_shifted(claim, len(p)) for claim in check.claims] for p, check in zip(prefixes, checks)]
    checked = {
        "claims": claims,
        "verdicts": [check.verdict for check in checks],
        "facts": [[fact.as_dict() for fact in check.facts] for check in checks],
    }
    fields = material.fields
    if layout == "acl2020":
        return {
            "kg": material.knowledge,
            "user_profile": fields["user_profile"],
            "conversation": conversation,
            "goals": fields["goal"],
            "situation": fields["situation"],
        } | checked
    session = {
        "goal": fields["goal"],
        "knowledge": material.knowledge,
        "user_profile": fields["user_profile"],
        "situation": fields["situation"],
        "conversation": conversation,
    }
    if layout == "v2":
        english = material.language.startswith("en")
        steps = [material.steps[(t.goal or 1) - 1] for t in turns]
        session["goal_type_list"] = [s.get("type_en") if english and s.get("type_en") else s["type"] for s in steps]
        session["goal_topic_list"] = [s.get("topic_label") or "NULL" for s in steps]
    return session | checked


def _shifted(claim: dict[str, Any], by: int) -> dict[str, Any]:
    return claim if not by else {**claim, "span": [claim["span"][0] + by, claim["span"][1] + by]}


# A goal type's phrases: (the seeker asks, the recommender offers, the seeker accepts). {x}: the goal's topic;
# {weekday}, {daytime}: the situation's (words only: a number said would have to be checked against the graph).
PHRASES: dict[str, dict[str, tuple[str, str, str]]] = {
    "zh": {
        "寒暄": ("你好！", "你好呀！最近怎么样？", "挺好的，谢谢。"),
        "问答": ("你知道{x}吗？", "当然知道{x}。", "是啊。"),
        "提问": ("你了解{x}吗？", "了解一些{x}的事。", "嗯嗯。"),
        "关于明星的聊天": ("聊聊{x}吧。", "好啊，聊聊{x}。", "我也喜欢{x}。"),
        "电影推荐": ("有好看的电影推荐吗？", "推荐你看{x}。", "好的，我会去看的。"),
        "音乐推荐": ("有好听的歌推荐吗？", "推荐你听{x}。", "好的，听起来不错。"),
        "播放音乐": ("帮我放一下{x}吧。", "好的，正在为你播放{x}。", "谢谢。"),
        "音乐点播": ("我想听{x}。", "好的，这就为你播放{x}。", "谢谢。"),
        "新闻推荐": ("{x}最近怎么样？", "给你说说{x}的近况。", "快说说。"),
        "新闻点播": ("我想听听{x}的近况。", "好的，说说{x}的近况。", "好的。"),
        "问天气": ("今天天气怎么样？", "今天天气还可以。", "谢谢。"),
        "天气信息推送": ("天气怎么样？", "给你说说今天的天气。", "谢谢。"),
        "美食推荐": ("有什么好吃的推荐吗？", "推荐你尝尝{x}。", "听起来很好吃。"),
        "兴趣点推荐": ("有什么好去处吗？", "推荐你去{x}。", "好的，我会去的。"),
        "问日期": ("今天是星期几？", "今天是{weekday}。", "谢谢。"),
        "问时间": ("现在是什么时候了？", "现在是{daytime}。", "谢谢。"),
        "再见": ("我先走了，再见！", "好的，再见，祝你生活愉快！", "再见！"),
        "": ("嗯。", "好的。", "嗯。"),
    },
    "en": {
        "寒暄": ("Hello!", "Hi! How are you?", "Fine, thanks."),
        "问答": ("Do you know {x}?", "Of course I know {x}.", "Right."),
        "提问": ("What do you know about {x}?", "A few things about {x}.", "I see."),
        "关于明星的聊天": ("Let us talk about {x}.", "Sure, {x} it is.", "I like {x} too."),
        "电影推荐": ("Any good film to watch?", "You could watch {x}.", "OK, I will watch it."),
        "音乐推荐": ("Any good song?", "You could listen to {x}.", "Sounds good."),
        "播放音乐": ("Please play {x}.", "Playing {x} for you.", "Thanks."),
        "音乐点播": ("I want to hear {x}.", "Here is {x} for you.", "Thanks."),
        "新闻推荐": ("How is {x} doing?", "Here is what {x} is up to.", "Tell me."),
        "新闻点播": ("What is {x} up to?", "Here is what {x} is up to.", "OK."),
        "问天气": ("How is the weather today?", "The weather is fine today.", "Thanks."),
        "天气信息推送": ("How is the weather?", "Here is the weather.", "Thanks."),
        "美食推荐": ("Anything good to eat?", "You could try {x}.", "Sounds tasty."),
        "兴趣点推荐": ("Anywhere nice to go?", "You could go to {x}.", "I will go."),
        "问日期": ("What day is it today?", "Today is {weekday}.", "Thanks."),
        "问时间": ("What time of day is it?", "It is {daytime}.", "Thanks."),
        "再见": ("I have to go, bye!", "Goodbye, have a nice day!", "Bye!"),
        "": ("Hmm.", "OK.", "Hmm."),
    },
}
ASK = {"zh": ("{x}的{r}是什么？", "嗯。"), "en": ("What is the {r} of {x}?", "I see.")}
WEATHER_TYPES = ("问天气", "天气信息推送")


def plan(material: GoalMaterial) -> list[Exchange]:
    """Per goal: its opening exchange (the seeker asks and the recommender offers, or the recommender offers
    and the seeker accepts, whoever opened the dialogue speaking first in every exchange); the weather report
    for a weather goal; one fact of the goal's topic."""
    language = "en" if material.language.startswith("en") else "zh"
    words, ask = PHRASES[language], ASK[language]
    bot, user = ROLES
    bot_first = opener(material) == bot
    weather = [row for row in path_rows(material) if row.get("p_label", "")[:1].isdigit()]
    exchanges: list[Exchange] = []
    for k, step in enumerate(material.steps, start=1):
        name = step.get("topic_label") or ""
        values = {
            "x": name,
            "weekday": material.fields.get("weekday", ""),
            "daytime": material.fields.get("daytime", ""),
        }
        asks, offers, accepts = (p.format(**values) for p in words.get(step["type"], words[""]))
        if step["type"] in WEATHER_TYPES and weather:
            said = (Say(bot, row=weather[0], goal=k), Say(user, accepts, goal=k))
            exchanges.append(Exchange(said if bot_first else (Say(user, asks, goal=k), said[0]), topic=f"{k}", most=1))
        opening = (Say(bot, offers, goal=k), Say(user, accepts, goal=k))
        exchanges.append(
            Exchange(opening if bot_first else (Say(user, asks, goal=k), opening[0]), True, topic=f"{k}", most=1)
        )
        for row in facts_about(material, step["topic"]) if step.get("topic") and step["type"] != "再见" else []:
            question = ask[0].format(x=name, r=row["p_label"])
            said = (Say(bot, row=row, goal=k), Say(user, ask[1], goal=k))
            pair = said if bot_first else (Say(user, question, goal=k), said[0])
            exchanges.append(Exchange(pair, topic=f"{k}+", most=1))
    return exchanges


STYLE = register_module_style(
    __name__,
    OutputLayout("lic2020", "durecdial-lic2020"),
    OutputLayout("v2", "durecdial2"),
    OutputLayout("acl2020", "durecdial-acl2020"),
    marks_goals=True,
)
