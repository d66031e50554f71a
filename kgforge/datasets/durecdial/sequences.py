"""DuRecDial-style goal sequences drawn from the goal types and transitions of real sessions.

Each sequence is a walk over ``GoalTransitions`` (which type opens a session, which follows which,
weighted by how often the sessions do it) that ends at 再见; every transition of a walk occurs in the
sessions counted. A goal type that needs a topic gets one from the graph as the sessions pick theirs: one
star the dialogue is about (问答, 关于明星的聊天, 提问, news of that star), films and songs linked to that
star, a food and a restaurant (兴趣点) whose 特色菜 it is, the song just recommended for 播放音乐. A type the
graph cannot fill at that point is not drawn there (the walk takes another transition the sessions make,
or is drawn again). Recommendations are accepted, some after a rejected first proposal. Each sequence
comes with a user profile (the ``--profiles`` given, or one drawn from a template and the graph) and a
situation (date and time, place, and what the user brings up when the session opens with 寒暄), in Chinese
and English; what has no English label keeps its Chinese one and is listed in ``lang_fallback``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.jsonio import JsonObject
from kgforge.core.quarantine import warn
from kgforge.core.records import Record
from kgforge.datasets.durecdial.goal_types import GOAL_TYPES_EN, GoalTransitions
from kgforge.goals.graph import EntityIndex, GoalGraph, _triple, make_goal
from kgforge.goals.record import Goal

PROFILE_TEMPLATE = Path(__file__).with_name("profile_template.toml")
BYE = "再见"
MAX_GOALS = 10  # the longest DuRecDial session has 8 goals (the goal planner reads [1]..[8])
TRIES_PER_GOAL = 30
STALLED = 5000  # walks in a row without a new sequence: the graph has no more to give (the shortfall says so)
REJECT_SHARE = 0.3  # of recommendations whose first proposal the user turns down (our choice; see docs/goals.md)
# What a goal type talks about; the types not named here have no topic (寒暄, 问User姓名, 问天气, 再见, …).
SLOT = {
    "问天气": "weather",
    "天气信息推送": "weather",
    "问答": "star",
    "关于明星的聊天": "star",
    "提问": "star",
    "新闻推荐": "news",
    "新闻点播": "news",
    "电影推荐": "film",
    "音乐推荐": "song",
    "音乐点播": "song",
    "播放音乐": "played",
    "美食推荐": "food",
    "兴趣点推荐": "poi",
}
PROPOSED = {"电影推荐", "音乐推荐", "美食推荐", "兴趣点推荐", "新闻推荐"}  # the bot proposes: accepted or rejected
# schema type ids of each kind of topic (DuRecDial's schema, and DuConv's and KdConv's where they match)
KINDS = {
    "star": ("star", "singer"),
    "film": ("film",),
    "song": ("song", "album"),
    "food": ("food",),
    "poi": ("poi", "attraction"),
}
PROFILE_KEYS_EN = {
    "姓名": "name",
    "性别": "gender",
    "年龄区间": "age range",
    "职业状态": "occupation",
    "居住地": "residence",
    "喜欢的明星": "liked stars",
    "喜欢的电影": "liked movies",
    "喜欢的音乐": "liked music",
    "喜欢的poi": "liked POI",
    "喜欢的新闻": "liked news",
    "接受的电影": "accepted movies",
    "没有接受的电影": "rejected movies",
    "接受的音乐": "accepted music",
    "没有接受的音乐": "rejected music",
    "同意的美食": "accepted food",
    "同意的poi": "accepted POI",
    "同意的新闻": "accepted news",
    "同意的电影": "accepted movies",
    "同意的音乐": "accepted music",
    "拒绝": "rejected",
}
LIKES_KEYS = ("喜欢的明星", "喜欢的电影", "喜欢的音乐", "喜欢的poi", "likes", "liked")  # what a profile likes
NEWS_OF = "news of "  # an English profile's accepted news: "news of Xun Zhou"
DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
WEEKDAYS = [
    ("星期一", "Monday"),
    ("星期二", "Tuesday"),
    ("星期三", "Wednesday"),
    ("星期四", "Thursday"),
    ("星期五", "Friday"),
    ("星期六", "Saturday"),
    ("星期日", "Sunday"),
]
# the profile keys a session's accepted and rejected proposals go to, by kind of topic
ACCEPTED_KEY = {
    "film": "接受的电影",
    "song": "接受的音乐",
    "food": "同意的美食",
    "poi": "同意的poi",
    "news": "同意的新闻",
}
REJECTED_KEY = {"film": "没有接受的电影", "song": "没有接受的音乐"}
REFUSABLE = [("电影", "movies", "电影推荐"), ("音乐", "music", "音乐推荐"), ("新闻", "news", "新闻推荐")]


# ---------------------------------------------------------------- what the graph offers


@dataclass(frozen=True)
class Weather:
    """One of DuRecDial's weather facts (``[天津, 2018-11-25, 晴, 西南风, …]``: the date is the relation) and
    what it says is good to eat or hear in that weather (适合吃, 适合听), for 问天气 and what follows it."""

    fact: tuple[str, str, str, bool]  # city, date relation, weather, whether the weather is an entity
    date: str
    suits: dict[str, list[tuple[str, tuple[str, str, str]]]]  # food / song → [(item, fact)]


def weather_reports(graph: GoalGraph, by_kind: dict[str, list[str]]) -> list[Weather]:
    """The graph's weather facts, found by their relation: a date (DuRecDial names no weather relation)."""
    dated = {iri: label for iri, label in graph.labels.items() if iri in graph.relation_kinds and DATE.fullmatch(label)}
    facts = graph.base_facts.filter(pl.col("p").is_in(list(dated))).sort("s", "p", "o")
    suits_iris = {
        r.iri: kind
        for r in graph.schema.relations.values()
        for kind, name in (("food", "适合吃"), ("song", "适合听"))
        if r.zh == name
    }
    suits: dict[str, dict[str, list[tuple[str, tuple[str, str, str]]]]] = {}
    for s, p, o in (
        graph.base_facts.filter(pl.col("p").is_in(list(suits_iris)))
        .select("s", "p", "o")
        .sort("s", "p", "o")
        .iter_rows()
    ):
        if o in set(by_kind[suits_iris[p]]):
            suits.setdefault(s, {}).setdefault(suits_iris[p], []).append((o, (s, p, o)))
    reports = []
    for s, p, o, is_entity in facts.select("s", "p", "o", "o_is_entity").iter_rows():
        year, month, day = (int(x) for x in dated[p].split("-"))
        reports.append(Weather((s, p, o, is_entity), dt.date(year, month, day).isoformat(), suits.get(o, {})))
    return reports


@dataclass
class Material:
    """The graph's topics by kind and the facts linking them (both directions), read once."""

    graph: GoalGraph
    by_kind: dict[str, list[str]]
    linked: dict[tuple[str, str], list[tuple[str, tuple[str, str, str]]]]  # (iri, kind) → [(neighbour, fact)]
    news: set[str]  # stars with news facts
    english: dict[str, str]  # IRI → English label, where the graph has one
    weather: list[Weather] = field(default_factory=list)  # DuRecDial's city –date→ weather facts
    chinese: dict[str, str] = field(default_factory=dict)  # IRI → its name in the Chinese profile

    def chinese_name(self, iri: str) -> str:
        """The name the Chinese ``profile`` gives ``iri``, whatever ``--lang`` the goals are labelled in."""
        return self.chinese.get(iri, iri)

    @classmethod
    def of(cls, graph: GoalGraph) -> Material:
        kind_of = {iri: kind for iri, t in graph.topic_types.items() for kind, ids in KINDS.items() if t in ids}
        topics = pl.Series(sorted(kind_of)).to_frame("s").filter(graph.may_be_topic("s"))["s"].to_list()
        by_kind: dict[str, list[str]] = {k: [] for k in KINDS}
        for iri in topics:
            by_kind[kind_of[iri]].append(iri)
        linked: dict[tuple[str, str], list[tuple[str, tuple[str, str, str]]]] = {}
        for s, p, o in graph.topic_edges().iter_rows():
            if s in kind_of and o in kind_of:
                linked.setdefault((s, kind_of[o]), []).append((o, (s, p, o)))
                linked.setdefault((o, kind_of[s]), []).append((s, (s, p, o)))
        news_iris = [r.iri for r in graph.schema.relations.values() if r.zh == "新闻" or r.id == "news"]
        news = set(graph.base_facts.filter(pl.col("p").is_in(news_iris))["s"].to_list()) & set(by_kind["star"])
        english = (
            graph.tables.labels.filter(pl.col("lang").str.starts_with("en"))
            .sort("iri", pl.col("preferred").not_(), "label")
            .unique("iri", keep="first", maintain_order=True)
        )
        return cls(
            graph,
            by_kind,
            linked,
            news,
            dict(zip(english["iri"].to_list(), english["label"].to_list())),
            weather_reports(graph, by_kind),
            graph.labels if graph.language.startswith("zh") else graph.names_in("zh"),
        )

    def missing(self) -> dict[str, str]:
        """Goal types this graph can never give a topic, and why."""
        why = {
            "star": "no typed star",
            "news": "no star with news facts",
            "film": "no film linked to a star",
            "song": "no song linked to a star",
            "played": "no song linked to a star",
            "food": "no typed food",
            "poi": "no restaurant (poi) with a 特色菜",
        }
        can = {
            "star": bool(self.by_kind["star"]),
            "news": bool(self.news),
            "food": bool(self.by_kind["food"]),
            "weather": True,
            "poi": any(k[1] == "food" for k in self.linked if k[0] in set(self.by_kind["poi"])),
        }
        can["film"] = any(k[1] == "star" for k in self.linked if k[0] in set(self.by_kind["film"]))
        can["song"] = can["played"] = any(k[1] == "star" for k in self.linked if k[0] in set(self.by_kind["song"]))
        return {t: why[slot] for t, slot in SLOT.items() if not can[slot]}


# ---------------------------------------------------------------- one walk


@dataclass
class Walk:
    """A sequence being drawn: its goals so far and what they have settled (the star, the last items)."""

    material: Material
    rng: np.random.Generator
    star: str | None  # the star the dialogue is about, once a goal needs one (or the profile names one)
    preferred: str | None = None  # the star to take when a goal first needs one and nothing settled another
    first: str | None = None  # --topic: the topic the sequence's first goal with a topic must have
    opened: bool = False  # whether a goal with a topic was drawn yet
    steps: list[dict[str, Any]] = field(default_factory=list)
    facts: list[tuple[str, str, str]] = field(default_factory=list)
    last: dict[str, str] = field(default_factory=dict)  # kind → the item last accepted
    used: set[str] = field(default_factory=set)
    weather: Weather | None = None  # the weather report 问天气 asked for, once one did

    def pick(self, items: list[Any]) -> Any:
        return items[int(self.rng.integers(len(items)))]

    def topic(self, kind: str) -> tuple[str, list[str]] | None:
        """The topic of a goal of type ``kind`` and the proposals turned down before it, or None (not here): the
        first goal with a topic takes ``first`` when one is asked for (else the walk goes another way)."""
        found = self._topic(kind)
        if found and found[0]:
            self.opened = True
        return found

    def _topic(self, kind: str) -> tuple[str, list[str]] | None:
        slot = SLOT.get(kind)
        if slot is None:
            return "", []
        if slot == "weather":  # no topic (DuRecDial's goal names none), but the report joins the knowledge
            if self.material.weather and self.weather is None:  # in DuRecDial, one saying what suits it
                self.weather = self.pick([w for w in self.material.weather if w.suits] or self.material.weather)
                self.facts.append(self.weather.fact[:3])
            return "", []
        if slot in ("star", "news"):
            star = self._star(slot == "news")
            return (star, []) if star else None
        if slot == "played":
            return (self.last["song"], []) if "song" in self.last else None
        candidates = self._items(slot)
        if self.first is not None and not self.opened:
            candidates = [(item, fact) for item, fact in candidates if item == self.first]
        if not candidates:
            return None
        chosen, fact = self.pick(candidates)
        self._settle(slot, chosen, fact)
        rejected = []
        others = [c for c in candidates if c[0] != chosen]
        if kind in PROPOSED and others and self.rng.random() < REJECT_SHARE:
            refused, refused_fact = self.pick(others)
            rejected.append(refused)
            self.used.add(refused)
            if refused_fact:
                self.facts.append(refused_fact)
        return chosen, rejected

    def _star(self, with_news: bool) -> str | None:
        if self.first is not None and not self.opened:  # the sequence opens on the star asked for, or not here
            if self.first not in self.material.by_kind["star"] or (with_news and self.first not in self.material.news):
                return None
            self.star = self.first
        if (
            self.star is None
            and not self.last
            and self.preferred
            and (not with_news or self.preferred in self.material.news)
        ):
            self.star = self.preferred
        if self.star is None:
            item = next(reversed(self.last.values()), None)
            near = [n for n, _ in self.material.linked.get((item, "star"), [])] if item else []
            pool = near or self.material.by_kind["star"]
            pool = [s for s in pool if s in self.material.news] if with_news else pool
            if not pool:
                return None
            self.star = self.pick(sorted(pool))
            if item:
                self.facts += [f for n, f in self.material.linked.get((item, "star"), []) if n == self.star][:1]
        return self.star if not with_news or self.star in self.material.news else None

    def _items(self, slot: str) -> list[tuple[str, tuple[str, str, str] | None]]:
        """(item, the fact linking it to what the dialogue is about) for each item a goal could take."""
        suited: list[tuple[str, tuple[str, str, str] | None]] = (
            [(i, f) for i, f in self.weather.suits.get(slot, []) if i not in self.used] if self.weather else []
        )
        if suited and (slot == "food" or self.star is None):  # 问天气 → 美食推荐 / 音乐推荐: what suits the weather
            return suited
        preferred = self.preferred
        if (
            self.star is None
            and slot in ("film", "song")
            and preferred is not None
            and self.material.linked.get((preferred, slot))
        ):
            self.star = self.preferred
        anchor = self.star if slot in ("film", "song") else self.last.get("food") if slot == "poi" else None
        found: list[tuple[str, tuple[str, str, str] | None]]
        if anchor:
            found = list(self.material.linked.get((anchor, slot), []))
        elif slot in ("film", "song"):  # no star yet: an item linked to some star (who becomes the star)
            found = [(i, None) for i in self.material.by_kind[slot] if (i, "star") in self.material.linked]
        else:
            found = [(i, None) for i in self.material.by_kind[slot]]
        unique: dict[str, tuple[str, str, str] | None] = {}  # an item linked twice (two relations) counts once
        for item, fact in found:
            if item not in self.used:
                unique.setdefault(item, fact)
        return list(unique.items())

    def _settle(self, slot: str, item: str, fact: tuple[str, str, str] | None) -> None:
        self.used.add(item)
        self.last.pop(slot, None)  # re-inserted, so the most recent item comes last
        self.last[slot] = item
        if fact:
            self.facts.append(fact)
        if slot in ("film", "song") and self.star is None:
            stars = sorted(n for n, _ in self.material.linked.get((item, "star"), []))
            if stars:
                self.star = self.pick(stars)
                self.facts += [f for n, f in self.material.linked[(item, "star")] if n == self.star][:1]

    def draw(self, transitions: GoalTransitions) -> bool:
        """Walk from a session opening to 再见; False when it cannot get there (the caller draws again)."""
        options = dict(transitions.starts)
        while len(self.steps) < MAX_GOALS:
            kind = self._next(options)
            if kind is None:
                return False
            if kind == BYE:
                self.steps.append({"type": BYE, "topic": None, "rejected": []})
                return True
            options = transitions.following(kind)
        return False

    def _next(self, options: dict[str, int]) -> str | None:
        options = dict(options)
        while options:
            names = sorted(options)
            weights = np.array([options[k] for k in names], dtype=float)
            kind = names[int(self.rng.choice(len(names), p=weights / weights.sum()))]
            if kind == BYE:
                return kind
            got = self.topic(kind)
            if got is not None:
                topic, rejected = got
                self.steps.append({"type": kind, "topic": topic or None, "rejected": rejected})
                return kind
            del options[kind]
        return None


# ---------------------------------------------------------------- profiles and situations


@dataclass(frozen=True)
class Template:
    values: dict[str, Any]

    @classmethod
    def read(cls, path: Path | None = None) -> Template:
        path = path or PROFILE_TEMPLATE
        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"{path}: not a profile template: {exc}") from None
        needed = ("surnames", "given_names", "genders", "cities", "times", "ages", "first_date", "last_date")
        missing = [k for k in needed if k not in values]
        if missing:
            raise InputError(f"{path}: profile template lacks {', '.join(missing)}")
        return cls(values)


def pair(rng: np.random.Generator, items: list[list[str]]) -> tuple[str, str]:
    zh, en = items[int(rng.integers(len(items)))]
    return zh, en


def drawn_profile(
    rng: np.random.Generator, template: Template
) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """A user from the template: the profile (zh), the English form of each value, and the age group."""
    v = template.values
    surname, given, gender = pair(rng, v["surnames"]), pair(rng, v["given_names"]), pair(rng, v["genders"])
    age = v["ages"][int(rng.integers(len(v["ages"])))]
    city = pair(rng, v["cities"])
    profile = {
        "姓名": surname[0] + given[0],
        "性别": gender[0],
        "年龄区间": age["range"][0],
        "职业状态": age["occupation"][0],
        "居住地": city[0],
    }
    english = {
        surname[0] + given[0]: f"{given[1]} {surname[1]}",
        gender[0]: gender[1],
        age["range"][0]: age["range"][1],
        age["occupation"][0]: age["occupation"][1],
        city[0]: city[1],
    }
    return profile, english, age


def situation(
    rng: np.random.Generator, template: Template, age: dict[str, Any] | None, greeting: bool, date: str | None = None
) -> JsonObject:
    """Date (``date``, the weather report's, or drawn) and time, place, and (a session opening with 寒暄: as in
    DuRecDial, only those) what the user brings up; as DuRecDial writes it and in English."""
    v = template.values
    first, last = dt.date.fromisoformat(v["first_date"]), dt.date.fromisoformat(v["last_date"])
    drawn = first + dt.timedelta(days=int(rng.integers((last - first).days + 1)))
    day = dt.date.fromisoformat(date) if date else drawn
    week = WEEKDAYS[day.weekday()]
    time = pair(rng, v["times"])
    age = age or v["ages"][int(rng.integers(len(v["ages"])))]
    place = pair(rng, age["places"])
    topic = pair(rng, age["topics"]) if greeting else None
    text = f"聊天时间:{day.isoformat()} {time[0]}，{place[0]} {week[0]}" + (
        f"     聊天主题:{topic[0]}" if topic else ""
    )
    text_en = f"Chat time: {week[1]} {day.isoformat()}, {time[1]}, {place[1]}" + (
        f"; chat topic: {topic[1]}" if topic else ""
    )
    return {
        "date": day.isoformat(),
        "time": time[0],
        "place": place[0],
        "topic": topic[0] if topic else None,
        "text": text,
        "en": {
            "date": day.isoformat(),
            "time": time[1],
            "place": place[1],
            "topic": topic[1] if topic else None,
            "text": text_en,
        },
    }


def add_outcomes(
    profile: dict[str, Any], steps: list[dict[str, Any]], kinds: dict[str, str], label: Any, rng: np.random.Generator
) -> None:
    """What the session's user accepted and turned down, under DuRecDial's profile keys; a recommendation
    type the session never makes may be one the user refuses outright (``拒绝``)."""
    for step in steps:
        slot = SLOT.get(step["type"])
        if step["type"] not in PROPOSED or not step["topic"]:
            continue
        kind = kinds.get(step["topic"], slot)
        name = label(step["topic"]) + (" 的新闻" if slot == "news" else "")
        if slot in ACCEPTED_KEY and kind is not None:  # kind is slot's when the topic has none
            profile.setdefault(ACCEPTED_KEY[slot if slot == "news" else kind], []).append(name)
        for refused in step["rejected"]:
            if kind in REJECTED_KEY:
                profile.setdefault(REJECTED_KEY[kind], []).append(label(refused))
    made = {s["type"] for s in steps}
    refusable = [r for r in REFUSABLE if r[2] not in made]
    if refusable and rng.random() < REJECT_SHARE:
        profile["拒绝"] = refusable[int(rng.integers(len(refusable)))][0]


def english_profile(profile: dict[str, Any], english: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The profile with English keys and values; what has no English form is kept and returned apart."""
    missing: list[str] = []
    refused = {zh: en for zh, en, _ in REFUSABLE}

    def one(value: Any) -> Any:
        if isinstance(value, list):
            return [one(v) for v in value]
        if not isinstance(value, str):
            return value
        text = value.strip()
        news = text.endswith(" 的新闻")
        core = text.removesuffix(" 的新闻")
        found = english.get(core) or refused.get(core)
        if found is None:
            missing.append(core)
            found = core
        return NEWS_OF + found if news else found

    out = {}
    for key, value in profile.items():
        if key not in PROFILE_KEYS_EN:
            missing.append(key)
        out[PROFILE_KEYS_EN.get(key, key)] = one(value)
    return out, missing


# ---------------------------------------------------------------- the style


def sample_durecdial(
    graph: GoalGraph,
    n: int,
    seed: int,
    transitions: GoalTransitions,
    profiles: list[dict[str, Any]] | None = None,
    template: Template | None = None,
    asked: tuple[str, ...] = (),
) -> list[Goal]:
    """``n`` distinct goal sequences (fewer when the graph has no more), each opening on one of the topics
    ``asked`` for (``--topic``, in turn) when any is; see the module's docstring."""
    material = Material.of(graph)
    if not material.by_kind["star"] and not any(material.by_kind[k] for k in ("food", "poi")):
        raise KgforgeError(
            f"domain {graph.domain!r} has no typed star, film, song, food or point of interest a "
            "DuRecDial goal could be about (a schema's type relation, or a relation's domain and "
            "range, types them on import)"
        )
    template = template or Template.read()
    stars = material.by_kind["star"]
    order = [stars[i] for i in np.random.default_rng([seed, 11]).permutation(len(stars))] if stars else [None]
    users = _profile_stars(material, profiles) if profiles else None
    goals: list[Goal] = []
    seen: set[str] = set()
    last_new = 0
    for i in range(n * TRIES_PER_GOAL):
        if len(goals) == n or i - last_new > STALLED:  # the graph has no more distinct sequences
            break
        rng = np.random.default_rng([seed, 23, i])
        user = users[len(goals) % len(users)] if users else None
        # stars take turns across sequences (so all get used); a profile's is settled from the start
        first = asked[len(goals) % len(asked)] if asked else None
        preferred = None if first else order[len(goals) % len(order)]
        walk = Walk(material, rng, user[1] if user else None, preferred=preferred, first=first)
        if not walk.draw(transitions) or not any(s["topic"] for s in walk.steps):
            continue
        key = json.dumps([[s["type"], s["topic"], s["rejected"]] for s in walk.steps])
        if key in seen:
            continue
        seen.add(key)
        last_new = i
        goals.append(
            _goal(graph, material, walk, seed, rng, template, profiles[user[0]] if user and profiles else None)
        )
    if not goals:
        missing = "; ".join(f"{kind} ({why})" for kind, why in material.missing().items())
        raise KgforgeError(
            f"no DuRecDial sequence could be drawn from {graph.domain!r}: every walk over the sessions' "
            f"goal transitions needs a topic of a type this graph cannot give: {missing or 'none'}"
        )
    return goals


def liked_names(profile: dict[str, Any]) -> list[str]:
    """The names a DuRecDial profile likes (``喜欢的明星``, …; a value may list several, split at ``;``)."""
    names = []
    for key in LIKES_KEYS:
        value = profile.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip():
                names += [part.strip() for part in item.replace("；", ";").split(";") if part.strip()]
    return names


def _profile_stars(material: Material, profiles: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """(profile index, the star it likes) for each profile liking a star of the graph, or a film or song of
    one (whose star it then is)."""
    index = EntityIndex.from_tables(material.graph.tables, segmented=True)
    stars = set(material.by_kind["star"])
    found, unused = [], []
    for i, profile in enumerate(profiles):
        iris = [iri for name in liked_names(profile) for iri in index.lookup(name)]
        star = next((iri for iri in iris if iri in stars), None) or next(
            (min(n for n, _ in material.linked[(iri, "star")]) for iri in iris if (iri, "star") in material.linked),
            None,
        )
        if star:
            found.append((i, star))
        else:
            unused.append(i + 1)
    if not found:
        names = sorted({name for p in profiles for name in liked_names(p)})
        raise KgforgeError(
            f"none of the topics the profiles like ({', '.join(names[:10]) or 'none given'}) is a "
            "typed star of the graph, or a film or song of one"
        )
    if unused:
        shown = ", ".join(str(u) for u in unused[:10]) + (f" and {len(unused) - 10:,} more" if len(unused) > 10 else "")
        warn("--profiles", f"profile(s) {shown}", "like no star of the graph (nor a film or song of one): not used")
    return found


def _goal(
    graph: GoalGraph,
    material: Material,
    walk: Walk,
    seed: int,
    rng: np.random.Generator,
    template: Template,
    given: dict[str, Any] | None,
) -> Goal:
    label, zh_name = graph.label, material.chinese_name  # the profile is Chinese whatever --lang is
    english: dict[str, str] = {}
    if given is None:
        profile, english, age = drawn_profile(rng, template)
        if walk.star:
            profile["喜欢的明星"] = zh_name(walk.star)
        if walk.weather:  # the user asks about the weather where they live
            profile["居住地"] = zh_name(walk.weather.fact[0])
        kinds = {iri: k for k, iris in material.by_kind.items() for iri in iris}
        add_outcomes(profile, walk.steps, kinds, zh_name, rng)
    else:
        profile, age = given, None
    fallback: list[str] = []

    def en_label(iri: str) -> str:
        if iri in material.english:
            return material.english[iri]
        fallback.append(label(iri))
        return label(iri)

    steps = []
    for step in walk.steps:
        topic = step["topic"]
        steps.append(
            {
                "type": step["type"],
                "type_en": GOAL_TYPES_EN.get(step["type"], step["type"]),
                "topic": topic,
                "topic_label": label(topic) if topic else None,
                "topic_label_en": en_label(topic) if topic else None,
                "accepted": True if step["type"] in PROPOSED and topic else None,
                "rejected": [
                    {"topic": r, "topic_label": label(r), "topic_label_en": en_label(r)} for r in step["rejected"]
                ],
            }
        )
    topics = list(
        dict.fromkeys([s["topic"] for s in walk.steps if s["topic"]] + [r for s in walk.steps for r in s["rejected"]])
    )
    # what the profile may name: the topics, the dialogue's star (a topic only when a goal is about them) and
    # the city of the weather report
    star, city = [walk.star] if walk.star else [], [walk.weather.fact[0]] if walk.weather else []
    named = list(dict.fromkeys([*topics, *star, *city]))
    english |= {zh_name(t): en_label(t) for t in named}
    profile_en, unnamed = english_profile(profile, english)
    facts = list(dict.fromkeys(walk.facts))
    literal = {walk.weather.fact[:3]} if walk.weather and not walk.weather.fact[3] else set()
    path = [_triple(graph, s, p, o, (s, p, o) not in literal) for s, p, o in facts]
    extra = {
        "sequence": steps,
        "goal_string": goal_string(steps, "zh"),
        "goal_string_en": goal_string(steps, "en"),
        "profile": profile,
        "profile_en": profile_en,
        "profile_entities": {zh_name(t): t for t in named},  # an export names them in its language
        "situation": situation(
            rng, template, age, walk.steps[0]["type"] == "寒暄", walk.weather.date if walk.weather else None
        ),
        "lang_fallback": {"en": sorted(set(fallback + unnamed))},
    }
    goal = make_goal(graph, "sequence", topics, path, seed, extra)
    key = json.dumps(
        [goal.goal_id, [s["type"] for s in steps], profile, extra["situation"]], ensure_ascii=False, sort_keys=True
    )
    return replace(goal, goal_id="g-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16])


def goal_string(steps: list[dict[str, Any]], lang: str = "zh") -> str:
    """DuRecDial's ``goal`` string, ``[1]问答(『周迅』)-->[2]…-->[4]再见``, a turned-down proposal named after the
    accepted one (DuRecDial's goal planner takes the first 『…』 as the goal's topic)."""
    en = lang == "en"
    parts = []
    for i, step in enumerate(steps, start=1):
        kind = step["type_en"] if en else step["type"]
        name = step["topic_label_en"] if en else step["topic_label"]
        refused = [r["topic_label_en"] if en else r["topic_label"] for r in step.get("rejected") or []]
        inside = f"『{name}』" if name else ""
        if refused:
            inside += (", after the user turned down " if en else "，User先拒绝了") + "、".join(
                f"『{r}』" for r in refused
            )
        parts.append(f"[{i}]{kind}" + (f"({inside})" if inside else ""))
    return "-->".join(parts)


TOPICLESS = (
    "the real sessions have it only in sequences without a topic, which are drawn again (a goal needs "
    "knowledge to ground)"
)


def topicless_only(transitions: GoalTransitions) -> set[str]:
    """Goal types that occur in no walk holding a topic: neither reachable from nor leading to a type with one."""

    def reach(start: set[str], step: dict[str, set[str]]) -> set[str]:
        seen, todo = set(start), list(start)
        while todo:
            for nxt in step.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    forward: dict[str, set[str]] = {}
    backward: dict[str, set[str]] = {}
    for a, b in transitions.counts:
        forward.setdefault(a, set()).add(b)
        backward.setdefault(b, set()).add(a)
    topical = {t for t in transitions.types if SLOT.get(t) not in (None, "weather")}  # weather names no topic
    return set(transitions.types) - reach(topical, forward) - reach(topical, backward)


@dataclass(frozen=True)
class SequenceSummary(Record):
    """What DuRecDial goal sequences drew: goal types, transitions, and what could not be drawn."""

    goal_types: dict[str, int]  # goal type -> goals, most first
    transitions_used: int
    transitions_known: int  # in the transition table
    transitions_from: tuple[str, ...]  # the files the transition table was counted from
    goal_types_not_drawn: dict[str, str]  # goal type -> why not
    english_fallback_goals: int  # goals with a name that had no English form


def summary(goals: Iterable[Goal], transitions: GoalTransitions, material_missing: dict[str, str]) -> SequenceSummary:
    """Goal types drawn, transitions used (all of them in ``transitions``), and what could not be drawn."""
    topicless = topicless_only(transitions)
    types: dict[str, int] = {}
    used: set[tuple[str, str]] = set()
    fallback = 0
    for goal in goals:
        kinds = [s["type"] for s in goal.extra["sequence"]]
        for k in kinds:
            types[k] = types.get(k, 0) + 1
        used |= set(zip(kinds, kinds[1:]))
        fallback += bool(goal.extra["lang_fallback"]["en"])
    return SequenceSummary(
        goal_types=dict(sorted(types.items(), key=lambda kv: -kv[1])),
        transitions_used=len(used),
        transitions_known=len(transitions.counts),
        transitions_from=tuple(transitions.sources),
        goal_types_not_drawn={
            t: material_missing.get(t) or (TOPICLESS if t in topicless else "not reached by any walk")
            for t in transitions.types
            if t not in types
        },
        english_fallback_goals=fallback,
    )
