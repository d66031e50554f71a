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

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.jsonio import iter_json_container, json_lines
from kgforge.core.output import output_file
from kgforge.core.records import Record, flattened
from kgforge.evaluation.inputs import json_objects
from kgforge.grounding.normalise import form
from kgforge.sources.dialogue_layouts import is_triple, session_triples, utterance_knowledge
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
    selected_layout: str  # turns (the --selected records), kdconv, duconv or durecdial (a `kgforge ground` output)
    gold_layout: str  # kdconv attrs, durecdial per-utterance knowledge, duconv grounding, … (docs/evaluation.md)
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
    ground`` output) scored against ``gold`` (KdConv attrs, DuRecDial per-utterance knowledge, a ``ground``
    output; DuConv and DuRecDial sessions without per-turn knowledge are grounded against ``snapshot``'s
    build first).
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


# ---------------------------------------------------------------- the gold


def read_gold(path: Path, snapshot: Snapshot | None) -> tuple[str, list[_Dialogue]]:
    """The gold facts of every turn of ``path``, and which of its annotations gave them."""
    if _is_array(path):
        return "kdconv attrs", [
            _Dialogue(line, [_attr_triples(path, line, m.get("attrs"), "attrs") for m in messages], None)
            for line, messages in _kdconv_dialogues(path)
        ]
    sessions = [(line, _session(path, line, record)) for line, record in json_objects(path)]
    kinds, dialogues, ungrounded = set(), [], []
    for line, session in sessions:
        knowledge = _session_knowledge(session)
        if "grounding" in session:
            kinds.add("duconv grounding (a `kgforge ground` output)")
            dialogues.append(_Dialogue(line, _grounding_turns(path, line, session, knowledge), knowledge))
        elif (per := utterance_knowledge(session)) is not None:
            kinds.add("durecdial per-utterance knowledge")
            dialogues.append(_Dialogue(line, [[_triple(path, line, t) for t in ts] for ts in per], knowledge))
        else:
            ungrounded.append(len(dialogues))
            dialogues.append(_Dialogue(line, [], knowledge))
    if ungrounded:
        first = dialogues[ungrounded[0]].line
        if snapshot is None:
            raise InputError(
                f"{path}:{first}: the session has no per-turn knowledge; give --domain to ground it (the session's "
                "own triples each utterance states), or a `kgforge ground` output as the gold"
            )
        kinds.add(f"session knowledge grounded against {snapshot.domain!r}")
        grounded = _grounded(snapshot, [sessions[i][1] for i in ungrounded])
        for i, turns in zip(ungrounded, grounded, strict=True):
            dialogues[i] = _Dialogue(dialogues[i].line, turns, dialogues[i].knowledge)
    return "; ".join(sorted(kinds)), dialogues


def _grounded(snapshot: Snapshot, sessions: list[dict[str, Any]]) -> list[list[list[Triple]]]:
    """Each turn's silver gold: the session's own triples the utterance states, by the rule of ``kgforge ground``
    (DuConv's, or DuRecDial's for a DuRecDial session)."""
    from kgforge.grounding.kept import load_index  # lazy: the grounder's index only for this gold
    from kgforge.grounding.matching import DEFAULT_OPTIONS  # lazy: as above
    from kgforge.grounding.registry import GROUNDERS  # lazy: as above

    index = load_index(snapshot)
    out = []
    for session in sessions:
        knowledge = _session_knowledge(session) or []
        grounder = GROUNDERS.get("durecdial" if _is_durecdial(session) else "duconv")
        done = getattr(grounder.ground(index, [session], DEFAULT_OPTIONS), grounder.records)[0]
        if _is_durecdial(session):
            out.append([[tuple(t) for t in stated] for stated in done["stated_knowledge"]])
        else:
            out.append([[knowledge[i] for i in row["knowledge"]] for row in done["grounding"]])
    return out


def _is_durecdial(session: dict[str, Any]) -> bool:
    """A DuRecDial session (the test of evaluation.inputs): a goal string, a situation or a label, or ``kg``."""
    return any(key in session for key in ("label", "situation", "kg", "goals")) or isinstance(session.get("goal"), str)


# ---------------------------------------------------------------- the selection


def read_selected(
    path: Path, golds: list[_Dialogue], gold_path: Path
) -> tuple[str, dict[tuple[int, int], list[Triple]]]:
    """The facts selected for each (dialogue, turn) that ``path`` lists, checked against the gold's turns."""
    if _is_array(path):
        dialogues = [
            (line, [_attr_triples(path, line, _chosen_attrs(m), "predicted_attrs") for m in messages])
            for line, messages in _kdconv_dialogues(path)
        ]
        return "kdconv", _aligned(path, dialogues, golds, gold_path)
    records = list(json_objects(path))
    if "conversation" not in records[0][1]:
        return "turns", _turn_records(path, records, golds, gold_path)
    dialogues, layouts = [], set()
    for line, record in records:
        session = _session(path, line, record)
        knowledge = _session_knowledge(session)
        if "grounding" in session:
            layouts.add("duconv")
            dialogues.append((line, _grounding_turns(path, line, session, knowledge)))
        elif isinstance(session.get("stated_knowledge"), list):
            layouts.add("durecdial")
            stated = session["stated_knowledge"]
            dialogues.append((line, [[_triple(path, line, t) for t in _list(path, line, s)] for s in stated]))
        else:
            raise InputError(
                f"{path}:{line}: a session without `grounding` or `stated_knowledge`: give a `kgforge ground` "
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
        facts = _list(path, line, record.get("facts"), "'facts'")
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
    """A fact of a ``--selected`` record: a triple, a KdConv attr, or an id into the dialogue's own triples."""
    if isinstance(fact, int) and not isinstance(fact, bool):
        if knowledge is None:
            raise InputError(f"{path}:{line}: fact id {fact}: the gold's dialogues have no knowledge list to index")
        if not 0 <= fact < len(knowledge):
            raise InputError(f"{path}:{line}: fact id {fact} is beyond the dialogue's {len(knowledge)} triples")
        return knowledge[fact]
    if isinstance(fact, dict):
        return _attr_triples(path, line, [fact], "facts")[0]
    return _triple(path, line, fact)


# ---------------------------------------------------------------- reading both


def _is_array(path: Path) -> bool:
    """Whether ``path`` holds one JSON array (KdConv), not JSON lines."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


def _kdconv_dialogues(path: Path) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """``(line, messages)`` of each dialogue of a KdConv file."""
    for record in iter_json_container(path, list):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        value = record.value
        messages = value.get("messages") if isinstance(value, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise InputError(f"{path}:{record.line}: not a KdConv dialogue (an object with a 'messages' list)")
        yield record.line, messages


def _chosen_attrs(message: dict[str, Any]) -> Any:
    """What a ``kgforge ground`` output says a message states: ``predicted_attrs`` where the input was annotated."""
    return message["predicted_attrs"] if "predicted_attrs" in message else message.get("attrs")


def _attr_triples(path: Path, line: int, attrs: Any, what: str) -> list[Triple]:
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
        raise InputError(f"{path}:{line}: not a DuConv or DuRecDial session (a 'conversation' list of strings)")
    return record


def _session_knowledge(session: dict[str, Any]) -> list[Triple] | None:
    """The session's own triples, in order (what fact ids and ``grounding`` indices name)."""
    knowledge = session.get("knowledge", session.get("kg"))
    if not isinstance(knowledge, list):
        return None
    triples = knowledge if "grounding" in session else session_triples(session)
    return [(t[0], t[1], t[2]) if is_triple(t) else ("", "", "") for t in triples]


def _grounding_turns(
    path: Path, line: int, session: dict[str, Any], knowledge: list[Triple] | None
) -> list[list[Triple]]:
    """A DuConv ``ground`` output's turns: the session triples its ``grounding`` entries index."""
    rows = session["grounding"]
    if not isinstance(rows, list) or len(rows) != len(session["conversation"]) or knowledge is None:
        raise InputError(f"{path}:{line}: 'grounding' must be one entry per utterance, beside a 'knowledge' list")
    turns = []
    for row in rows:
        indices = row.get("knowledge") if isinstance(row, dict) else None
        if not isinstance(indices, list) or not all(isinstance(i, int) and 0 <= i < len(knowledge) for i in indices):
            raise InputError(f"{path}:{line}: a 'grounding' entry's 'knowledge' must be indices into 'knowledge'")
        turns.append([knowledge[i] for i in indices])
    return turns


def _list(path: Path, line: int, value: Any, what: str = "'stated_knowledge' entry") -> list[Any]:
    if not isinstance(value, list):
        raise InputError(f"{path}:{line}: {what} must be a list")
    return value


def _triple(path: Path, line: int, value: Any) -> Triple:
    if not is_triple(value):
        raise InputError(f"{path}:{line}: a fact must be [head, relation, tail] (strings), got {value!r}")
    return value[0], value[1], value[2]
