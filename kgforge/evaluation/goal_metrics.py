"""Dialogue-level goal metrics (``kgforge eval DIALOGUES --goal-metrics``): whether a conversation reached its
goal, judged over whole dialogues — the files of every eval layout whose dialogues have goals (a dataset's room
says how a record's goal and turns are read: :mod:`.goal_reading`) — whose bot turns are the file's own or a
system's predictions put in their place (in order).

What a turn mentions is decided by :func:`mention_matcher`: plain string matching of the dialogue's topics and
knowledge, the stand-in until the grounder (``kgforge ground``) can be passed as ``matcher``. A topic is
mentioned when its name (spaces removed) occurs in the turn; a knowledge triple ``(s, p, o)`` is used in a turn
when its value ``o`` (at least 2 characters; a long free-text value: 8 consecutive characters of it) occurs in
the turn and its subject ``s`` occurs in that turn or an earlier one of the dialogue. Both sides are compared
without spaces and in Simplified characters. ``领域`` (a topic's kind:
电影, 明星) is not knowledge a turn uses.

Per dialogue and, averaged, per file (see docs/evaluation.md for the papers' definitions):

* **goal completion** (Wu et al. 2019), where the goal names two topics a dialogue must reach
  (``GoalContext.completion``): 2 when both goal topics are mentioned and more than two distinct knowledge
  triples are used, 1 when both topics are mentioned with two triples or fewer, 0 otherwise; with its
  distribution and the triples and properties (distinct relations) used per dialogue (the paper's Table 5);
* **Info bands** (MSDE's Info.): the share of bot turns that use 0, 1 and 2 or more facts;
* **LS** (leading success, Liu et al. 2021): 1 when the bot mentions the final recommendation target
  (``GoalContext.target``) else 0; needs a goal sequence that names topics;
* **UTC** (user-topic consistency, Liu et al. 2021): of the goal topics the bot mentions, the share the user
  profile does not reject; needs a user profile;
* **Rec** (recommendation success, MSDE's Rec.): of the recommended topics the bot mentions whose outcome the
  profile records, the share accepted rather than rejected.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.checks import in_words
from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_container
from kgforge.core.text import to_simplified
from kgforge.evaluation.goal_reading import GoalContext
from kgforge.evaluation.inputs import EVAL_LAYOUTS, detect_layout, json_objects, read_slots

NOT_KNOWLEDGE = ("领域",)
MIN_VALUE = 2
TEXT_VALUE = 12  # a value longer than this is free text, used when 8 consecutive characters of it occur
TEXT_OVERLAP = 8
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class TurnMentions:
    topics: frozenset[str]
    triples: frozenset[int]  # indexes into the context's knowledge


Matcher = Callable[[str, Sequence[str], GoalContext], TurnMentions]


def normal(text: str) -> str:
    """Text as it is matched: NFC, Simplified characters (a dataset's comments may be partly Traditional: 兩岸 …
    共識), no spaces (segmented and unsegmented text alike)."""
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


def goal_layouts() -> tuple[str, ...]:
    """The eval layouts whose dialogues have goals (their :class:`~.inputs.EvalLayout` has ``goals``)."""
    return tuple(entry.name for entry in EVAL_LAYOUTS if entry.obj.goals is not None)


def goal_files() -> str:
    """What a refusal asks for: the titles of the layouts with goals (``A, B or C``)."""
    titles = [goals.title for entry in EVAL_LAYOUTS if (goals := entry.obj.goals) is not None]
    return in_words(titles)


def _completion_left_out() -> str:
    """Why goal completion was not judged: which layouts' dialogues state the two goal topics it needs."""
    stated = [goals.completion for entry in EVAL_LAYOUTS if (goals := entry.obj.goals) is not None and goals.completion]
    return "only " + " or ".join(stated) if stated else "no dialogue layout states two goal topics"


def _records(path: Path, array: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    """The file's records keyed as goal contexts are: a JSON array's by place, JSON lines' by line."""
    if not array:
        yield from ((str(line), record) for line, record in json_objects(path))
        return
    for index, record in enumerate(iter_json_container(path, list)):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        yield str(index), record.value


# ---------------------------------------------------------------- judging


@dataclass(frozen=True)
class DialogueGoals:
    key: str
    bot_turns: int
    goal_topics: tuple[str, ...]
    topics_mentioned: tuple[str, ...]
    triples_used: int
    properties_used: int
    completion: int | None  # where the goal names two topics to reach (GoalContext.completion)
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
    if layout not in goal_layouts():
        raise InputError(
            f"{path}: goal metrics judge whole dialogues: give a {goal_files()} dialogue file (this is a {layout} file)"
        )
    form = EVAL_LAYOUTS.get(layout)
    goals = form.goals
    assert goals is not None  # a layout of goal_layouts()
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
    records = list(_records(path, form.array))
    if len(records) != len(slots.dialogues):
        raise InputError(f"{path}: {len(records)} records for {len(slots.dialogues)} dialogues")
    by_dialogue: dict[int, list[str]] = {}
    for dialogue, text in zip(slots.frame["dialogue"].to_list(), turns, strict=True):
        by_dialogue.setdefault(dialogue, []).append(text)
    judged = [
        _judge(goals.context(key, record), goals.turns(record, by_dialogue.get(index, [])), matcher)
        for index, (key, record) in enumerate(records)
    ]
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
    if context.completion and context.goal_topics:
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
        left_out["goal_completion"] = _completion_left_out()
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
    """The share of dialogues with each count (goal completion's paper tabulates triples and properties used so)."""
    return {str(k): counts.count(k) / len(counts) for k in sorted(set(counts))} if counts else {}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
