"""DuRecDial's goal types and how its sessions move from one to the next, as derived counts.

A DuRecDial session is a sequence of goals (``[1]寒暄(…)-->[2]问User姓名(…)-->…``, or one goal per turn in
the LIC-2020 baseline's resource files). ``GoalTransitions`` counts, over real sessions, which goal type
opens a session and which follows which (consecutive turns of one goal count once). Only type names and
counts are kept: no utterance, topic or profile text. ``goal_transitions.tsv`` beside this module is
such a table, written by ``scripts/durecdial_goal_transitions.py`` from the DuRecDial files in
``shared/data/durecdial`` (the header names them and their checksums); ``kgforge goals --transitions``
counts another set of sessions (e.g. DuRecDial's full train file) at run time instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.files import sha256_file
from kgforge.core.jsonio import LoneSurrogateError, TextPolicy, iter_json_lines, loads
from kgforge.core.limits import read_whole

SHIPPED_TABLE = Path(__file__).with_name("goal_transitions.tsv")
START = "<start>"  # the "from" of a session's first goal in the table
TABLE_HEADER = ("from", "to", "count")

# Every goal type of DuRecDial (all_goal_type.txt, spelled as the sessions spell them: 问User姓名 where the
# goal planner's list says 问用户姓名) with an English name. DuRecDial 2.0's English goal names could not be
# checked here (its data.zip is not available): these are ours, in its style ("Q&A", "Chat about stars").
GOAL_TYPES_EN = {
    "寒暄": "Greetings",
    "问User姓名": "Ask about user's name",
    "问User性别": "Ask about user's gender",
    "问User年龄": "Ask about user's age",
    "问User爱好": "Ask about user's hobbies",
    "问天气": "Ask about weather",
    "问时间": "Ask about time",
    "问日期": "Ask about date",
    "天气信息推送": "Weather notification",
    "问答": "Q&A",
    "提问": "Ask questions",
    "关于明星的聊天": "Chat about stars",
    "电影推荐": "Movie recommendation",
    "音乐推荐": "Music recommendation",
    "播放音乐": "Play music",
    "音乐点播": "Music on demand",
    "新闻推荐": "News recommendation",
    "新闻点播": "News on demand",
    "美食推荐": "Food recommendation",
    "兴趣点推荐": "POI recommendation",
    "再见": "Say goodbye",
}
# Other spellings of the same types in DuRecDial's files: the goal planner's type list and the ACL 2020
# README example (``poi推荐``).
ALIASES = {
    "问用户姓名": "问User姓名",
    "问用户性别": "问User性别",
    "问用户年龄": "问User年龄",
    "问用户爱好": "问User爱好",
    "poi推荐": "兴趣点推荐",
    "POI推荐": "兴趣点推荐",
}
# Each goal type as DuRecDial's word-segmented files write it (the LIC-2020 resource files)
SEGMENTED_TYPES = {
    "问User姓名": "问 User 姓名",
    "问User性别": "问 User 性别",
    "问User年龄": "问 User 年龄",
    "问User爱好": "问 User 爱好",
    "问天气": "问 天气",
    "问时间": "问 时间",
    "问日期": "问 日期",
    "天气信息推送": "天气 信息 推送",
    "关于明星的聊天": "关于 明星 的 聊天",
    "电影推荐": "电影 推荐",
    "音乐推荐": "音乐 推荐",
    "播放音乐": "播放 音乐",
    "音乐点播": "音乐 点播",
    "新闻推荐": "新闻 推荐",
    "新闻点播": "新闻 点播",
    "美食推荐": "美食 推荐",
    "兴趣点推荐": "兴趣点 推荐",
}
# The goal a topic of each schema type is recommended under, or chatted about, in a sequence made from a dialogue's
# topics (a dialogue without a goal sequence of its own, written in DuRecDial's layouts)
RECOMMENDATION_BY_TYPE = {
    "film": "电影推荐",
    "song": "音乐推荐",
    "album": "音乐推荐",
    "attraction": "兴趣点推荐",
    "poi": "兴趣点推荐",
    "food": "美食推荐",
}
CHAT_BY_TYPE = {"star": "关于明星的聊天", "singer": "关于明星的聊天"}
_GOAL_PART = re.compile(r"^\s*\[\d+\]\s*([^(（]*)")


def goal_type(written: str) -> str:
    """A goal type as one name: segmentation spaces out (``问 User 姓名`` → ``问User姓名``), aliases folded."""
    name = re.sub(r"\s+", "", written)
    return ALIASES.get(name, name)


def session_goal_types(session: Any) -> list[str] | None:
    """The goal types of one DuRecDial session in order, or None when it holds no goal sequence: a
    ``goal``/``goals`` string ``[1]…-->[2]…`` (competition files, DuRecDial 2.0, the ACL 2020 release) or a
    per-turn ``goal`` list (LIC-2020 resource files: consecutive turns of one goal count once)."""
    if not isinstance(session, dict):
        return None
    goal = session.get("goal", session.get("goals"))
    if isinstance(goal, str):
        types = [m.group(1) for part in goal.split("-->") if (m := _GOAL_PART.match(part))]
    elif isinstance(goal, list) and all(isinstance(g, list) and g and isinstance(g[0], str) for g in goal):
        types = [g[0] for g in goal]
    else:
        return None
    runs = [goal_type(t) for t in types if t.strip()]
    return [t for i, t in enumerate(runs) if i == 0 or runs[i - 1] != t] or None


def iter_sessions(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, session) of a JSON-lines file of sessions, or of one JSON document holding a session or a list
    of them (the ACL 2020 README example); a line that is not JSON is an error naming file and line."""
    try:  # whole only within the file limit (kgforge.core.limits); JSON lines are read line by line below
        whole = loads(read_whole(path, "file of sessions").decode("utf-8-sig"))
    except (InputError, ValueError):  # larger, or not one JSON document (JSON lines, or not JSON), or not UTF-8
        whole = None
    if isinstance(whole, (dict, list)):
        text = TextPolicy(path)
        try:
            whole = text.value(whole, 1)
        except LoneSurrogateError as exc:
            raise InputError(f"{path}:1: {exc}") from None
        text.finish()
        yield from ((1, s) for s in (whole if isinstance(whole, list) else [whole]))
        return
    for record in iter_json_lines(path):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        yield record.line, record.value


@dataclass(frozen=True)
class GoalTransitions:
    """How often each goal type opens a session (``starts``) and follows another (``counts``), and where
    those counts come from (``sources``: file names and sha256, or the table they were read from)."""

    starts: dict[str, int]
    counts: dict[tuple[str, str], int]
    sessions: int = 0
    sources: tuple[str, ...] = ()
    unread: list[str] = field(default_factory=list)  # "file:line: why" of sessions without a goal sequence

    @property
    def types(self) -> list[str]:
        seen = set(self.starts) | {t for pair in self.counts for t in pair}
        return sorted(seen)

    def pairs(self) -> set[tuple[str, str]]:
        return set(self.counts)

    def following(self, kind: str) -> dict[str, int]:
        return {b: n for (a, b), n in self.counts.items() if a == kind}

    @classmethod
    def from_sessions(cls, files: Iterable[Path]) -> GoalTransitions:
        starts: Counter[str] = Counter()
        counts: Counter[tuple[str, str]] = Counter()
        sessions, sources, unread = 0, [], []
        for path in files:
            path = Path(path)
            sources.append(f"{path.name} sha256:{sha256_file(path)}")
            for line, session in iter_sessions(path):
                types = session_goal_types(session)
                if not types:
                    unread.append(f"{path}:{line}: no goal sequence ('goal' or 'goals')")
                    continue
                sessions += 1
                starts[types[0]] += 1
                counts.update(zip(types, types[1:]))
        if not sessions:
            raise InputError(f"no DuRecDial session with a goal sequence in {', '.join(sources) or 'no file'}")
        return cls(dict(starts), dict(counts), sessions, tuple(sources), unread)

    @classmethod
    def read_table(cls, path: Path = SHIPPED_TABLE) -> GoalTransitions:
        """A table ``write_table`` wrote: ``#`` comment lines (sources, sessions), then ``from to count`` rows."""
        starts: dict[str, int] = {}
        counts: dict[tuple[str, str], int] = {}
        sources, sessions = [], 0
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.startswith("# source: "):
                sources.append(line.removeprefix("# source: "))
            elif line.startswith("# sessions: "):
                sessions = int(line.removeprefix("# sessions: "))
            elif line.strip() and not line.startswith("#") and tuple(line.split("\t")) != TABLE_HEADER:
                cells = line.split("\t")
                if len(cells) != 3 or not cells[2].isdigit():
                    raise InputError(f"{path}:{number}: expected 'from<TAB>to<TAB>count'")
                a, b, n = goal_type(cells[0]) if cells[0] != START else START, goal_type(cells[1]), int(cells[2])
                if a == START:
                    starts[b] = starts.get(b, 0) + n
                else:
                    counts[(a, b)] = counts.get((a, b), 0) + n
        if not starts:
            raise InputError(f"{path}: no '{START}' rows: not a goal transition table")
        return cls(starts, counts, sessions, tuple(sources) or (str(path),))

    @classmethod
    def load(cls, path: Path | None = None) -> GoalTransitions:
        """The shipped table, a table of one's own (``*.tsv``), or sessions counted now (anything else)."""
        if path is None:
            return cls.read_table()
        return cls.read_table(path) if path.suffix == ".tsv" else cls.from_sessions([path])

    def table_text(self) -> str:
        lines = [
            "# DuRecDial goal-type transitions: how often a goal type opens a session (from <start>) and",
            "# follows another, counted over real sessions (consecutive turns of one goal count once).",
            "# Written by scripts/durecdial_goal_transitions.py; only type names and counts are kept.",
            *[f"# source: {s}" for s in self.sources],
            f"# sessions: {self.sessions}",
            "\t".join(TABLE_HEADER),
        ]
        rows = [(START, b, n) for b, n in self.starts.items()] + [(a, b, n) for (a, b), n in self.counts.items()]
        lines += [f"{a}\t{b}\t{n}" for a, b, n in sorted(rows, key=lambda r: (r[0] != START, r[0], -r[2], r[1]))]
        return "\n".join(lines) + "\n"
