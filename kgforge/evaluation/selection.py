"""Knowledge selection scored, KILT-style (``kgforge eval --selected FILE --gold GOLD``): the facts a system says
it used for each turn, ranked, against the facts the gold gives that turn. Definitions: docs/evaluation.md.

Per turn, with ``G`` the gold facts (a set) and ``S`` the selected ones (the ranked list, each fact once, at its
first place), ``R = |G|``:

* **R-Precision** = ``|S[:R] & G| / R`` (KILT's ``_computeRprec``, one evidence set);
* **Recall@k** = ``|S[:k] & G| / R``: KILT's rank with every gold fact an evidence set of its own, so that a set
  is complete once its one fact is retrieved;
* **precision** = ``|S & G| / |S|``, **recall** = ``|S & G| / R``, **F1** their harmonic mean (0 when nothing
  selected is gold); **accuracy** (knowledge-selection accuracy) = 1 when ``S[0]`` is in ``G``, else 0.

A figure is defined for a turn with gold facts (R-Precision, Recall@k, recall, accuracy), with a selection
(precision), or with either (F1). A dialogue's figures are those of its turns' counts added up; **micro** adds up
the counts of every turn; **macro over turns** (KILT's own average) and **macro over dialogues** are the means of
the turns' and the dialogues' figures where defined. Facts are compared as ``(head, relation, tail)`` in matching
form (:func:`~kgforge.grounding.normalise.form`: width, script, case and spaces do not count).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.datasets import room_parts
from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.jsonio import JsonObject, json_lines
from kgforge.core.output import output_file
from kgforge.core.records import Record, flattened
from kgforge.core.registry import Registry
from kgforge.evaluation.inputs import json_objects
from kgforge.grounding.normalise import form
from kgforge.sources.dialogue_layouts import is_triple, session_triples
from kgforge.store.snapshot import Snapshot

KS = (1, 5)
Triple = tuple[str, str, str]


@dataclass(frozen=True)
class SelectionScores(Record):
    """The knowledge-selection figures of a group of turns (None: undefined there, see the module docstring)."""

    r_precision: float | None
    recall_at: dict[str, float | None] = flattened()  # "recall@1", "recall@5", …
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    accuracy: float | None = None  # the top-ranked fact selected is gold


@dataclass(frozen=True)
class SelectionReport(Record):
    """``kgforge eval --selected``: the selected facts of each turn scored against the gold ones."""

    selected: Path
    gold: Path
    selected_layout: str  # turns (the --selected records), or the dataset of a `kgforge ground` output
    gold_layout: str  # the annotations that gave the gold, as each dataset's reading names them (docs/evaluation.md)
    ks: tuple[int, ...]
    dialogues: int
    turns: int  # turns scored
    turns_with_gold: int
    turns_left_out: int  # turns of the gold the selected records do not list: not scored
    gold_facts: int
    selected_facts: int  # each fact once a turn
    micro: SelectionScores
    macro_turns: SelectionScores  # KILT's average: the mean of the turns' figures
    macro_dialogues: SelectionScores
    out: Path | None  # one row per turn, then one per dialogue (JSON lines); None: not written


@dataclass(frozen=True)
class _Dialogue:
    """One dialogue of a file: where it starts, each turn's facts, and its own triples (what fact ids index)."""

    line: int
    turns: list[list[Triple]]
    knowledge: list[Triple] | None


@dataclass(frozen=True)
class _Counts:
    """A turn's (or a group's, added up) counts behind every figure."""

    gold: int = 0
    selected: int = 0
    correct: int = 0  # |S & G|
    at_r: int = 0  # |S[:R] & G|
    at_k: tuple[int, ...] = ()  # |S[:k] & G| for each k
    judged: int = 0  # turns with gold facts
    top_correct: int = 0  # of those, turns whose first selected fact is gold

    def __add__(self, other: _Counts) -> _Counts:
        at_k = tuple(a + b for a, b in zip(self.at_k, other.at_k, strict=True)) if self.at_k else other.at_k
        return _Counts(
            self.gold + other.gold,
            self.selected + other.selected,
            self.correct + other.correct,
            self.at_r + other.at_r,
            at_k,
            self.judged + other.judged,
            self.top_correct + other.top_correct,
        )


def score_selection(
    selected: Path | str,
    gold: Path | str,
    *,
    ks: tuple[int, ...] = KS,
    snapshot: Snapshot | None = None,
    out: Path | str | None = None,
) -> SelectionReport:
    """The facts ``selected`` names for each turn (docs/evaluation.md: ``--selected`` records, or a ``kgforge
    ground`` output) scored against ``gold`` (a dataset's per-turn annotation or a ``ground`` output, as its
    room's :class:`SelectionReading` reads them; sessions without per-turn knowledge are grounded against
    ``snapshot``'s build first, by the grounder of the dataset whose reading takes them).
    ``out``: one row per turn and per dialogue. A record that does not line up with the gold is an
    InputError naming its file and line, and nothing is written."""
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise ArgumentError("--k", f"{ks!r}: each k must be a whole number of at least 1")
    ks = tuple(sorted(set(ks)))
    target = None if out is None else output_file(out)
    gold_layout, golds = read_gold(Path(gold), snapshot)
    selected_layout, chosen = read_selected(Path(selected), golds, Path(gold))
    rows: list[dict[str, Any]] = []
    turn_counts: list[_Counts] = []
    dialogue_counts: list[_Counts] = []
    for d, dialogue in enumerate(golds):
        listed = [t for t in range(len(dialogue.turns)) if (d, t) in chosen]
        counts = [(t, _count(_keys(dialogue.turns[t]), _keys(chosen[d, t]), ks)) for t in listed]
        rows += [{"level": "turn", "dialogue": d, "turn": t, **_row(c, ks)} for t, c in counts]
        turn_counts += [c for _, c in counts]
        dialogue_counts.append(sum((c for _, c in counts), _Counts(at_k=(0,) * len(ks))))
        rows.append({"level": "dialogue", "dialogue": d, "turns": len(counts), **_row(dialogue_counts[-1], ks)})
    total = sum(turn_counts, _Counts(at_k=(0,) * len(ks)))
    if target is not None:
        target.write_bytes(json_lines(rows))
    return SelectionReport(
        Path(selected),
        Path(gold),
        selected_layout,
        gold_layout,
        ks,
        len(golds),
        len(turn_counts),
        total.judged,
        sum(len(d.turns) for d in golds) - len(turn_counts),
        total.gold,
        total.selected,
        _scores(total, ks),
        _mean([_scores(c, ks) for c in turn_counts], ks),
        _mean([_scores(c, ks) for c in dialogue_counts], ks),
        None if target is None else target.path,
    )


def _keys(facts: list[Triple]) -> list[Triple]:
    """The facts in matching form, each once, in their first place."""
    return list(dict.fromkeys((form(h), form(r), form(t)) for h, r, t in facts))


def _count(gold: list[Triple], selected: list[Triple], ks: tuple[int, ...]) -> _Counts:
    wanted = set(gold)
    found = [fact in wanted for fact in selected]
    top = bool(wanted and found and found[0])
    at_k = tuple(sum(found[:k]) for k in ks)
    return _Counts(len(wanted), len(selected), sum(found), sum(found[: len(wanted)]), at_k, int(bool(wanted)), int(top))


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _scores(c: _Counts, ks: tuple[int, ...]) -> SelectionScores:
    return SelectionScores(
        _ratio(c.at_r, c.gold),
        {f"recall@{k}": _ratio(hits, c.gold) for k, hits in zip(ks, c.at_k, strict=True)},
        _ratio(c.correct, c.selected),
        _ratio(c.correct, c.gold),
        _ratio(2 * c.correct, c.gold + c.selected),
        _ratio(c.top_correct, c.judged),
    )


def _mean(scores: list[SelectionScores], ks: tuple[int, ...]) -> SelectionScores:
    """The mean of each figure over the groups where it is defined."""

    def mean(values: list[float | None]) -> float | None:
        defined = [v for v in values if v is not None]
        return sum(defined) / len(defined) if defined else None

    def of(name: str) -> float | None:
        return mean([getattr(s, name) for s in scores])

    recall_at = {f"recall@{k}": mean([s.recall_at[f"recall@{k}"] for s in scores]) for k in ks}
    return SelectionScores(of("r_precision"), recall_at, of("precision"), of("recall"), of("f1"), of("accuracy"))


def _row(counts: _Counts, ks: tuple[int, ...]) -> dict[str, Any]:
    return {"gold": counts.gold, "selected": counts.selected, **_scores(counts, ks).as_dict()}


# ---------------------------------------------------------------- how each dataset's files are read


@dataclass(frozen=True)
class SelectionReading:
    """How ``kgforge eval --selected`` reads one dataset's files, registered by its room (its evaluation part,
    :func:`register_selection`). Readings are asked in ``order``, lowest first; each answers None for a record
    that is not its own.

    ``gold``: a record's gold facts per turn and the dialogue's own triples (what fact ids index; None: it has
    none), named ``gold_label`` in the report; ``selected``: the facts a ``kgforge ground`` output of the dataset
    selects per turn (``selected_label``; ``selected_key``, the key that makes a session such an output, is named
    when a session has none); ``silver``: a session without per-turn knowledge grounded with the dataset's own
    grounder against a store's index, for the sessions ``grounds`` takes (None: every session no other reading's
    ``grounds`` takes); ``dialogues``: the dialogue records of a file that is one JSON array; ``title``: the name
    of the dataset's sessions in a refusal."""

    gold: Callable[[Path, int, dict[str, Any]], tuple[list[list[Triple]], list[Triple] | None] | None]
    gold_label: str
    selected: Callable[[Path, int, dict[str, Any]], list[list[Triple]] | None] | None = None
    selected_label: str = ""
    selected_key: str = ""
    silver: Callable[[Any, dict[str, Any], list[Triple]], list[list[Triple]]] | None = None
    grounds: Callable[[dict[str, Any]], bool] | None = None
    dialogues: Callable[[Path], Iterator[tuple[int, dict[str, Any]]]] | None = None
    title: str = ""
    order: int = 0


# the readings of no one dataset are registered here; each dataset's room registers its own (its evaluation part)
SELECTION_READINGS: Registry[SelectionReading] = Registry("selection reading", modules=lambda: room_parts("evaluation"))


def register_selection(name: str, reading: SelectionReading) -> SelectionReading:
    """Make ``reading`` how ``kgforge eval --selected`` reads the dataset ``name``'s gold and ``ground`` output."""
    SELECTION_READINGS.register(name, reading)
    return reading


def _readings(array: bool = False) -> list[SelectionReading]:
    """The readings of files that are one JSON array (``array``), or else of JSON-lines sessions, in order."""
    found = [entry.obj for entry in SELECTION_READINGS if (entry.obj.dialogues is not None) == array]
    return sorted(found, key=lambda reading: reading.order)


def _array_reading(path: Path) -> SelectionReading:
    """The reading of a file that is one JSON array: the one dataset whose dialogue files are."""
    found = _readings(array=True)
    if not found:
        raise InputError(f"{path}: a JSON array, and no dataset's dialogue files are one")
    return found[0]


# ---------------------------------------------------------------- the gold


def read_gold(path: Path, snapshot: Snapshot | None) -> tuple[str, list[_Dialogue]]:
    """The gold facts of every turn of ``path``, and which of its annotations gave them."""
    if _is_array(path):
        reading = _array_reading(path)
        assert reading.dialogues is not None  # what _array_reading looks for
        gold = [(line, reading.gold(path, line, record) or ([], None)) for line, record in reading.dialogues(path)]
        return reading.gold_label, [_Dialogue(line, *found) for line, found in gold]
    sessions = [(line, _session(path, line, record)) for line, record in json_objects(path)]
    kinds, dialogues, ungrounded = set(), [], []
    for line, session in sessions:
        for reading in _readings():
            if (found := reading.gold(path, line, session)) is not None:
                kinds.add(reading.gold_label)
                dialogues.append(_Dialogue(line, *found))
                break
        else:
            ungrounded.append(len(dialogues))
            dialogues.append(_Dialogue(line, [], session_knowledge(session)))
    if ungrounded:
        first = dialogues[ungrounded[0]].line
        if snapshot is None:
            raise InputError(
                f"{path}:{first}: the session has no per-turn knowledge; give --domain to ground it (the session's "
                "own triples each utterance states), or a `kgforge ground` output as the gold"
            )
        kinds.add(f"session knowledge grounded against {snapshot.domain!r}")
        grounded = _grounded(snapshot, [(path, sessions[i][0], sessions[i][1]) for i in ungrounded])
        for i, turns in zip(ungrounded, grounded, strict=True):
            dialogues[i] = _Dialogue(dialogues[i].line, turns, dialogues[i].knowledge)
    return "; ".join(sorted(kinds)), dialogues


def _grounded(snapshot: Snapshot, sessions: list[tuple[Path, int, dict[str, Any]]]) -> list[list[list[Triple]]]:
    """Each turn's silver gold: the session's own triples the utterance states, by the rule of ``kgforge ground``
    (the grounder of the dataset whose reading takes the session)."""
    from kgforge.grounding.kept import load_index  # lazy: the grounder's index only for this gold

    index = load_index(snapshot)
    readings = [reading for reading in _readings() if reading.silver is not None]
    out = []
    for path, line, session in sessions:
        taking = [r for r in readings if r.grounds and r.grounds(session)] or [r for r in readings if not r.grounds]
        if not taking or taking[0].silver is None:
            raise InputError(f"{path}:{line}: no dataset's grounder takes this session")
        out.append(taking[0].silver(index, session, session_knowledge(session) or []))
    return out


def ground_session(grounder: str, index: Any, session: dict[str, Any]) -> JsonObject:
    """``session`` grounded by the grounder registered as ``grounder`` (``kgforge ground``'s rule), against
    ``index`` (what a reading's ``silver`` is given): the record ``kgforge ground`` would write for it."""
    from kgforge.grounding.matching import DEFAULT_OPTIONS  # lazy: the grounder only for this gold
    from kgforge.grounding.registry import GROUNDERS  # lazy: as above

    found = GROUNDERS.get(grounder)
    done: JsonObject = getattr(found.ground(index, [session], DEFAULT_OPTIONS), found.records)[0]
    return done


# ---------------------------------------------------------------- the selection


def read_selected(
    path: Path, golds: list[_Dialogue], gold_path: Path
) -> tuple[str, dict[tuple[int, int], list[Triple]]]:
    """The facts selected for each (dialogue, turn) that ``path`` lists, checked against the gold's turns."""
    if _is_array(path):
        reading = _array_reading(path)
        assert reading.dialogues is not None and reading.selected is not None  # the array reading reads both
        arrays = [(line, reading.selected(path, line, record) or []) for line, record in reading.dialogues(path)]
        return reading.selected_label, _aligned(path, arrays, golds, gold_path)
    records = list(json_objects(path))
    if "conversation" not in records[0][1]:
        return "turns", _turn_records(path, records, golds, gold_path)
    readings = [reading for reading in _readings() if reading.selected is not None]
    dialogues, layouts = [], set()
    for line, record in records:
        session = _session(path, line, record)
        for reading in readings:
            if reading.selected is not None and (turns := reading.selected(path, line, session)) is not None:
                layouts.add(reading.selected_label)
                dialogues.append((line, turns))
                break
        else:
            keys = " or ".join(f"`{reading.selected_key}`" for reading in readings)
            raise InputError(
                f"{path}:{line}: a session without {keys}: give a `kgforge ground` "
                "output or one record per turn ({dialogue, turn, facts}, docs/evaluation.md)"
            )
    return "/".join(sorted(layouts)), _aligned(path, dialogues, golds, gold_path)


def _aligned(
    path: Path, dialogues: list[tuple[int, list[list[Triple]]]], golds: list[_Dialogue], gold_path: Path
) -> dict[tuple[int, int], list[Triple]]:
    """A whole selected file (a ``ground`` output) as (dialogue, turn) -> facts, once its dialogues and turns
    are those of the gold."""
    if len(dialogues) != len(golds):
        line = dialogues[-1][0] if dialogues else 1
        raise InputError(f"{path}:{line}: {len(dialogues)} dialogues, the gold {gold_path} has {len(golds)}")
    chosen = {}
    for d, ((line, turns), gold) in enumerate(zip(dialogues, golds, strict=True)):
        if len(turns) != len(gold.turns):
            raise InputError(
                f"{path}:{line}: dialogue {d} has {len(turns)} turns, in the gold {gold_path} it has {len(gold.turns)}"
            )
        chosen.update({(d, t): facts for t, facts in enumerate(turns)})
    return chosen


def _turn_records(
    path: Path, records: list[tuple[int, dict[str, Any]]], golds: list[_Dialogue], gold_path: Path
) -> dict[tuple[int, int], list[Triple]]:
    """The ``--selected`` records (one a turn: ``dialogue``, ``turn``, ``facts``), checked against the gold."""
    chosen: dict[tuple[int, int], list[Triple]] = {}
    first_line: dict[tuple[int, int], int] = {}
    for line, record in records:
        d, t = (_index(path, line, record, key) for key in ("dialogue", "turn"))
        if d >= len(golds):
            raise InputError(f"{path}:{line}: dialogue {d} is beyond the gold {gold_path}'s {len(golds)} dialogues")
        if t >= len(golds[d].turns):
            raise InputError(f"{path}:{line}: turn {t} is beyond dialogue {d}'s {len(golds[d].turns)} turns")
        if (d, t) in first_line:
            raise InputError(f"{path}:{line}: turn {t} of dialogue {d} again (first on line {first_line[d, t]})")
        first_line[d, t] = line
        facts = fact_list(path, line, record.get("facts"), "'facts'")
        chosen[d, t] = [_selected_fact(path, line, fact, golds[d].knowledge) for fact in facts]
    missing = sorted(set(range(len(golds))) - {d for d, _ in chosen})
    if missing:
        raise InputError(
            f"{path}:{records[-1][0]}: the records name {len(golds) - len(missing)} dialogues, the gold {gold_path} "
            f"has {len(golds)} (none for dialogue {missing[0]})"
        )
    return chosen


def _index(path: Path, line: int, record: dict[str, Any], key: str) -> int:
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"{path}:{line}: {key!r} must be an index (a whole number from 0), got {value!r}")
    return value


def _selected_fact(path: Path, line: int, fact: Any, knowledge: list[Triple] | None) -> Triple:
    """A fact of a ``--selected`` record: a triple, an attr object, or an id into the dialogue's own triples."""
    if isinstance(fact, int) and not isinstance(fact, bool):
        if knowledge is None:
            raise InputError(f"{path}:{line}: fact id {fact}: the gold's dialogues have no knowledge list to index")
        if not 0 <= fact < len(knowledge):
            raise InputError(f"{path}:{line}: fact id {fact} is beyond the dialogue's {len(knowledge)} triples")
        return knowledge[fact]
    if isinstance(fact, dict):
        return attr_triples(path, line, [fact], "facts")[0]
    return triple(path, line, fact)


# ---------------------------------------------------------------- reading both


def _is_array(path: Path) -> bool:
    """Whether ``path`` holds one JSON array (a dataset whose dialogue files are one), not JSON lines."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


def attr_triples(path: Path, line: int, attrs: Any, what: str) -> list[Triple]:
    """``attrs`` (``what`` at ``path:line``): a list of ``{name, attrname, attrvalue}`` objects, as triples."""
    if attrs is None:
        return []
    if not isinstance(attrs, list) or not all(
        isinstance(a, dict) and all(isinstance(a.get(k), str) for k in ("name", "attrname", "attrvalue")) for a in attrs
    ):
        raise InputError(f"{path}:{line}: {what!r} must be a list of {{name, attrname, attrvalue}} objects")
    return [(a["name"], a["attrname"], a["attrvalue"]) for a in attrs]


def _session(path: Path, line: int, record: dict[str, Any]) -> dict[str, Any]:
    conversation = record.get("conversation")
    if not isinstance(conversation, list) or not all(isinstance(u, str) for u in conversation):
        titles = " or ".join(reading.title for reading in _readings() if reading.title)
        raise InputError(f"{path}:{line}: not a {titles} session (a 'conversation' list of strings)")
    return record


def known_triples(triples: list[Any]) -> list[Triple]:
    """A session's triples as they stand in order (an entry that is no triple keeps its place, blank)."""
    return [(t[0], t[1], t[2]) if is_triple(t) else ("", "", "") for t in triples]


def session_knowledge(session: dict[str, Any]) -> list[Triple] | None:
    """The session's own triples, in order (what fact ids index): its ``knowledge`` (or ``kg``) list, or every
    utterance's triples in turn where it is per utterance; None when it has no such list."""
    if not isinstance(session.get("knowledge", session.get("kg")), list):
        return None
    return known_triples(session_triples(session))


def fact_list(path: Path, line: int, value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(f"{path}:{line}: {what} must be a list")
    return value


def triple(path: Path, line: int, value: Any) -> Triple:
    if not is_triple(value):
        raise InputError(f"{path}:{line}: a fact must be [head, relation, tail] (strings), got {value!r}")
    return value[0], value[1], value[2]
