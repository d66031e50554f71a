"""Dialogue-level goal metrics (``kgforge eval DIALOGUES --goal-metrics``): whether a conversation reached its
goal, judged over whole dialogues — DuConv sessions, KdConv dialogues, DuRecDial sessions — whose bot turns are
the file's own or a system's predictions put in their place (in order).

What a turn mentions is decided by :func:`mention_matcher`: plain string matching of the dialogue's topics and
knowledge, the stand-in until the grounder (``kgforge ground``) can be passed as ``matcher``. A topic is
mentioned when its name (spaces removed) occurs in the turn; a knowledge triple ``(s, p, o)`` is used in a turn
when its value ``o`` (at least 2 characters; a long free-text value: 8 consecutive characters of it) occurs in
the turn and its subject ``s`` occurs in that turn or an earlier one of the dialogue. Both sides are compared
without spaces and in Simplified characters. ``领域`` (a topic's kind:
电影, 明星) is not knowledge a turn uses.

Per dialogue and, averaged, per file (see docs/evaluation.md for the papers' definitions):

* **goal completion** (DuConv): 2 when both goal topics are mentioned and more than two distinct knowledge triples
  are used, 1 when both topics are mentioned with two triples or fewer, 0 otherwise; with its distribution and
  the triples and properties (distinct relations) used per dialogue (DuConv's Table 5);
* **Info bands** (MSDE's Info.): the share of bot turns that use 0, 1 and 2 or more facts;
* **LS** (leading success, DuRecDial): 1 when the bot mentions the final recommendation target — the first
  『topic』 of the last recommendation goal — else 0; needs a goal sequence that names topics;
* **UTC** (user-topic consistency, DuRecDial): of the goal topics the bot mentions, the share the user profile
  does not reject (``拒绝``, ``没有接受的…``); needs a ``user_profile``;
* **Rec** (recommendation success, MSDE's Rec.): of the recommended topics the bot mentions whose outcome the
  profile records, the share accepted (``接受的…``, ``同意的…``) rather than rejected.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_container
from kgforge.core.text import to_simplified
from kgforge.evaluation.inputs import _bot_first, detect_layout, json_objects, read_slots

GOAL_LAYOUTS = ("duconv", "kdconv", "durecdial")
NOT_KNOWLEDGE = ("领域",)
MIN_VALUE = 2
TEXT_VALUE = 12  # a value longer than this is free text, used when 8 consecutive characters of it occur
TEXT_OVERLAP = 8
_QUOTED = re.compile(r"『\s*(.+?)\s*』")
_SPACES = re.compile(r"\s+")
Triple = tuple[str, str, str]


@dataclass(frozen=True)
class GoalContext:
    """What a dialogue's goal is made of, read from its record."""

    key: str
    layout: str
    knowledge: tuple[Triple, ...]
    goal_topics: tuple[str, ...] = ()  # DuConv: the two START topics; DuRecDial: the goals' quoted topics
    target: str | None = None  # DuRecDial: the final recommendation target
    recommended: tuple[str, ...] = ()  # DuRecDial: topics of recommendation goals
    rejected: tuple[str, ...] = ()  # from the user profile
    accepted: tuple[str, ...] = ()


@dataclass(frozen=True)
class TurnMentions:
    topics: frozenset[str]
    triples: frozenset[int]  # indexes into the context's knowledge


Matcher = Callable[[str, Sequence[str], GoalContext], TurnMentions]


def normal(text: str) -> str:
    """Text as it is matched: NFC, Simplified characters (DuConv's comments are partly Traditional: 兩岸 … 共識),
    no spaces (segmented and unsegmented text alike)."""
    return _SPACES.sub("", to_simplified(unicodedata.normalize("NFC", text)))


def mention_matcher(turn: str, earlier: Sequence[str], context: GoalContext) -> TurnMentions:
    """The topics and knowledge triples ``turn`` mentions (``earlier``: the dialogue's turns before it)."""
    said, before = normal(turn), normal("".join(earlier))
    names = {*context.goal_topics, *(s for s, _, _ in context.knowledge)}
    topics = frozenset(name for name in names if len(normal(name)) >= 1 and normal(name) in said)
    used = set()
    for index, (subject, relation, value) in enumerate(context.knowledge):
        if relation.strip() in NOT_KNOWLEDGE:
            continue
        target = normal(value)
        if len(target) < MIN_VALUE or not _states(said, target):
            continue
        head = normal(subject)
        if head and (head in said or head in before):
            used.add(index)
    return TurnMentions(topics, frozenset(used))


def _states(said: str, value: str) -> bool:
    if len(value) <= TEXT_VALUE:
        return value in said
    return any(value[i : i + TEXT_OVERLAP] in said for i in range(len(value) - TEXT_OVERLAP + 1))


# ---------------------------------------------------------------- reading the dialogues' goals


def _records(path: Path, layout: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if layout == "kdconv":
        for record in iter_json_container(path, list):
            if record.error:
                raise InputError(f"{path}:{record.line}: {record.error}")
            yield record.line, record.value
    else:
        yield from json_objects(path)


def _triples(value: Any) -> tuple[Triple, ...]:
    """Triples as lists, or KdConv's attrs objects (``name``, ``attrname``, ``attrvalue``)."""
    if not isinstance(value, list):
        return ()
    rows = [[t.get("name"), t.get("attrname"), t.get("attrvalue")] if isinstance(t, dict) else t for t in value]
    return tuple((str(t[0]), str(t[1]), str(t[2])) for t in rows if isinstance(t, list) and len(t) >= 3)


def goal_context(key: str, layout: str, record: dict[str, Any]) -> GoalContext:
    if layout == "duconv":
        goal = record.get("goal") or []
        topics = tuple(goal[0][1:3]) if goal and goal[0] and goal[0][0] == "START" else ()
        return GoalContext(key, layout, _triples(record.get("knowledge")), topics)
    if layout == "kdconv":
        attrs = [t for m in record.get("messages", []) if isinstance(m, dict) for t in _triples(m.get("attrs") or [])]
        return GoalContext(
            key, layout, tuple(dict.fromkeys(attrs)), (str(record.get("name", "")),) if record.get("name") else ()
        )
    return _durecdial_context(key, record)


def _durecdial_context(key: str, record: dict[str, Any]) -> GoalContext:
    goal = record.get("goals", record.get("goal"))
    steps = goal.split("-->") if isinstance(goal, str) else []
    topics = tuple(dict.fromkeys(t for step in steps for t in _QUOTED.findall(step)))
    recommending = [step for step in steps if "推荐" in step.split("(")[0]]
    recommended = tuple(dict.fromkeys(t for step in recommending for t in _QUOTED.findall(step)[:1]))
    target = recommended[-1] if recommended else None
    given = record.get("user_profile")
    profile: dict[str, Any] = given if isinstance(given, dict) else {}

    def values(keep: Callable[[str], bool]) -> tuple[str, ...]:
        found = []
        for name, value in profile.items():
            if keep(name):
                found += [str(v).strip() for v in (value if isinstance(value, list) else [value]) if str(v).strip()]
        return tuple(found)

    rejected = values(lambda name: name == "拒绝" or name.startswith(("没有接受", "拒绝")))
    accepted = values(lambda name: name.startswith(("接受", "同意")))
    knowledge = _triples(record.get("knowledge", record.get("kg")))
    return GoalContext(key, "durecdial", knowledge, topics, target, recommended, rejected, accepted)


# ---------------------------------------------------------------- judging


@dataclass(frozen=True)
class DialogueGoals:
    key: str
    bot_turns: int
    goal_topics: tuple[str, ...]
    topics_mentioned: tuple[str, ...]
    triples_used: int
    properties_used: int
    completion: int | None  # DuConv only
    facts_per_turn: tuple[int, ...]
    leading_success: int | None
    user_topic_consistency: float | None
    recommendation_success: float | None


@dataclass(frozen=True)
class GoalReport:
    path: str
    layout: str
    predictions: str | None
    matcher: str
    dialogues: tuple[DialogueGoals, ...]
    summary: dict[str, Any] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)

    def to_dict(self, per_dialogue: bool = True) -> dict[str, Any]:
        found = asdict(self)
        if not per_dialogue:
            found.pop("dialogues")
        return found


def judge_goals(
    dialogue_file: Path, predictions: Path | None = None, matcher: Matcher = mention_matcher, layout: str = "auto"
) -> GoalReport:
    """Goal metrics of every dialogue of ``dialogue_file``; with ``predictions`` (any response layout, one
    response per bot turn, in order) the bot turns are the predictions."""
    path = Path(dialogue_file)
    layout = detect_layout(path) if layout == "auto" else layout
    if layout not in GOAL_LAYOUTS:
        raise InputError(
            f"{path}: goal metrics judge whole dialogues: give a DuConv, KdConv or DuRecDial "
            f"dialogue file (this is a {layout} file)"
        )
    slots = read_slots(path, layout)
    turns = slots.frame["text"].to_list()
    if predictions is not None:
        predicted = read_slots(Path(predictions)).frame["text"].to_list()
        if len(predicted) != len(turns):
            raise InputError(
                f"{predictions} has {len(predicted)} responses but {path} has {len(turns)} bot turns: "
                "a prediction takes the place of each bot turn, in order, so the counts must be equal"
            )
        turns = predicted
    records = list(_records(path, layout))
    if len(records) != len(slots.dialogues):
        raise InputError(f"{path}: {len(records)} records for {len(slots.dialogues)} dialogues")
    by_dialogue: dict[int, list[str]] = {}
    for dialogue, text in zip(slots.frame["dialogue"].to_list(), turns, strict=True):
        by_dialogue.setdefault(dialogue, []).append(text)
    judged = []
    for index, (line, record) in enumerate(records):
        context = goal_context(str(line) if layout != "kdconv" else str(index), layout, record)
        conversation = _conversation(layout, record, by_dialogue.get(index, []))
        judged.append(_judge(context, conversation, matcher))
    summary, left_out = summarise(judged, layout)
    return GoalReport(
        str(path),
        layout,
        str(predictions) if predictions else None,
        getattr(matcher, "__qualname__", str(matcher)),
        tuple(judged),
        summary,
        left_out,
    )


def _conversation(layout: str, record: dict[str, Any], bot: list[str]) -> list[tuple[bool, str]]:
    """The dialogue's turns as (is the bot's, text), the bot's turns replaced by ``bot`` in order."""
    if layout == "kdconv":
        messages = [str(m.get("message", "")) for m in record.get("messages", []) if isinstance(m, dict)]
        return [(False, messages[0])] + [(True, text) for text in bot] if messages else []
    conversation = [str(t) for t in record.get("conversation") or []]
    first = 0 if (layout == "duconv" or _bot_first(record)) else 1
    replies = iter(bot)
    return [
        (j % 2 == first % 2 and j >= first, next(replies) if (j % 2 == first % 2 and j >= first) else text)
        for j, text in enumerate(conversation)
    ]


def _judge(context: GoalContext, conversation: list[tuple[bool, str]], matcher: Matcher) -> DialogueGoals:
    topics: set[str] = set()
    used: set[int] = set()
    per_turn = []
    earlier: list[str] = []
    for is_bot, text in conversation:
        if is_bot:
            found = matcher(text, earlier, context)
            topics |= found.topics
            used |= found.triples
            per_turn.append(len(found.triples))
        earlier.append(text)
    properties = len({context.knowledge[i][1] for i in used})
    completion = None
    if context.layout == "duconv" and context.goal_topics:
        reached = all(topic in topics for topic in context.goal_topics)
        completion = 0 if not reached else 2 if len(used) > 2 else 1
    ls = utc = rec = None
    if context.target is not None:
        ls = int(context.target in topics)
    mentioned_goal_topics = [t for t in context.goal_topics if t in topics]
    if context.rejected or context.accepted:
        if mentioned_goal_topics:
            utc = sum(not _in_profile(t, context.rejected) for t in mentioned_goal_topics) / len(mentioned_goal_topics)
        outcomes = [
            _in_profile(t, context.accepted)
            for t in context.recommended
            if t in topics and (_in_profile(t, context.accepted) or _in_profile(t, context.rejected))
        ]
        rec = sum(outcomes) / len(outcomes) if outcomes else None
    return DialogueGoals(
        context.key,
        len(per_turn),
        context.goal_topics,
        tuple(sorted(topics)),
        len(used),
        properties,
        completion,
        tuple(per_turn),
        ls,
        utc,
        rec,
    )


def _in_profile(topic: str, values: tuple[str, ...]) -> bool:
    name = normal(topic)
    return any(name == normal(v) or (len(normal(v)) >= 2 and normal(v) in name) for v in values)


def summarise(judged: Sequence[DialogueGoals], layout: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Per-file figures, and the metrics left out with the reason."""
    summary: dict[str, Any] = {
        "dialogues": len(judged),
        "bot_turns": sum(d.bot_turns for d in judged),
        "triples_used": _mean([d.triples_used for d in judged]),
        "properties_used": _mean([d.properties_used for d in judged]),
        "triples_distribution": _shares([d.triples_used for d in judged]),
        "properties_distribution": _shares([d.properties_used for d in judged]),
    }
    left_out = {}
    completions = [d.completion for d in judged if d.completion is not None]
    if completions:
        summary["goal_completion"] = _mean(completions)
        summary["completion_distribution"] = {str(k): completions.count(k) / len(completions) for k in (0, 1, 2)}
    else:
        left_out["goal_completion"] = "only DuConv sessions state two goal topics (goal[0] = START, a, b)"
    turns = [n for d in judged for n in d.facts_per_turn]
    if turns:
        summary["info_bands"] = {
            "0": sum(n == 0 for n in turns) / len(turns),
            "1": sum(n == 1 for n in turns) / len(turns),
            "2+": sum(n >= 2 for n in turns) / len(turns),
        }
    for name, values, why in (
        ("leading_success", [d.leading_success for d in judged], "no goal sequence naming a recommendation target"),
        ("user_topic_consistency", [d.user_topic_consistency for d in judged], "no user profile (user_profile)"),
        (
            "recommendation_success",
            [d.recommendation_success for d in judged],
            "no accepted/rejected recommendation recorded in a user profile",
        ),
    ):
        known = [v for v in values if v is not None]
        if known:
            summary[name] = _mean(known)
            summary[f"{name}_dialogues"] = len(known)
        else:
            left_out[name] = why
    return summary, left_out


def _shares(counts: Sequence[int]) -> dict[str, float]:
    """The share of dialogues with each count (DuConv's Table 5 tabulates triples and properties used so)."""
    return {str(k): counts.count(k) / len(counts) for k in sorted(set(counts))} if counts else {}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
