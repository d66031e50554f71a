"""The out-of-fold protocol of the learned grounding choice (docs/grounding.md, "Measured out of fold").

    flock /tmp/kgforge-heavy.lock .venv/bin/python scripts/grounding_protocol.py \\
        --data ../shared/data/kdconv --out grounding-protocol.json

Two protocols, the hand rules and the learned choice side by side, every figure out of fold:

* **5-fold cross-validation by dialogue within each domain.** A domain's 150 dev dialogues are dealt into five
  folds (seeded). Each fold is grounded against a graph built as a held-out set's would be: film and music from
  that fold's own dialogues' attrs (``kdconv-dialogues``), travel from ``kb_travel.json``; a model is trained on
  the other four folds' candidates (each fold's collected against its own graph, as the held-out fold's are) —
  the thresholds chosen inside those four folds (:func:`kgforge.grounding.learning.train_choice`) — and the
  held-out fold is grounded by ``kgforge ground``'s own code with that model, attrs stripped, and scored as
  ``kgforge ground`` scores.
* **Leave one domain out.** A model trained on two domains' dev dialogues (their graphs: film and music from all
  150 dialogues' attrs, travel from the KB) grounds the third, whose graph is built as the held-out test's is.

Beside each pair of figures, the learned choice's F1 gain over the rules' as a 5–95% interval over 2,000
resamples of the held-out dialogues (paired, seeded). The contradiction detector is measured the same ways, on
each held-out part's corrupted copy (:mod:`kgforge.grounding.corruption`: digits shifted, an entity swapped for
another of its kind — a nearby attraction for one that is not — and a word-valued literal swapped) and on the
part as written. Writes the figures as JSON (``--out``) and prints them as the tables docs/grounding.md holds.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from kgforge import Domain
from kgforge.grounding.corruption import corrupted_copy
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kept import load_index
from kgforge.grounding.learning import Samples, collected, train_choice
from kgforge.grounding.matching import MatchOptions
from kgforge.grounding.model_file import RULES, model_bytes, model_document
from kgforge.grounding.registry import GROUNDERS
from kgforge.grounding.scoring import Tally, attr_key

KDCONV = GROUNDERS.get("kdconv")  # kgforge ground --format kdconv: how KdConv files are read and grounded
DOMAINS = ("travel", "film", "music")
FOLDS = 5
RESAMPLES = 2000  # of the dialogues, for the interval of the learned choice's gain


def folds(count: int, seed: int) -> list[list[int]]:
    """The dialogues' positions dealt into :data:`FOLDS` folds after a seeded shuffle, each fold in file order."""
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return [sorted(order[f::FOLDS]) for f in range(FOLDS)]


def graph(domain: str, dialogues: list[dict[str, Any]], data: Path, workdir: Path) -> GroundingIndex:
    """The domain's graph as a held-out set's is built: travel from the KB, film and music from ``dialogues``'
    own attrs; built once in ``workdir``."""
    if not (workdir / domain).exists():
        workdir.mkdir(parents=True, exist_ok=True)
        if domain == "travel":
            source = f"kdconv:{data / 'travel' / 'kb_travel.json'}"
        else:
            written = workdir / "dialogues.json"
            written.write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
            source = f"kdconv-dialogues:{written}"
        Domain(domain, workdir).build([source])
    return load_index(Domain(domain, workdir).snapshot())


def stripped(dialogues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dialogues without their gold attrs (what a user grounds)."""
    bare = copy.deepcopy(dialogues)
    for dialogue in bare:
        for message in dialogue["messages"]:
            message.pop("attrs", None)
    return bare


def scored(index: GroundingIndex, dialogues: list[dict[str, Any]], model: str) -> list[Counter[str]]:
    """tp, fp, fn of ``kgforge ground`` (its own code) on each dialogue, attrs stripped, against its gold."""
    grounded = KDCONV.ground(index, stripped(dialogues), MatchOptions(model=model)).dialogues
    counts = []
    for gold, out in zip(dialogues, grounded):
        tally = Tally(Counter())
        for message, row in zip(gold["messages"], out["messages"]):
            tally.add(_keys(row["attrs"]), _keys(message.get("attrs", [])))
        counts.append(
            Counter({k: sum(n for (_, kind), n in tally.counts.items() if kind == k) for k in ("tp", "fp", "fn")})
        )
    return counts


def gain_interval(rules: list[Counter[str]], learned: list[Counter[str]], seed: int) -> list[float]:
    """The learned choice's F1 less the rules', 5th and 95th percentiles over :data:`RESAMPLES` resamples of the
    dialogues (paired: the same dialogues for both)."""
    rng = random.Random(seed)
    gains = []
    for _ in range(RESAMPLES):
        picked = [rng.randrange(len(rules)) for _ in rules]
        gains.append(
            _f1(sum((learned[i] for i in picked), Counter())) - _f1(sum((rules[i] for i in picked), Counter()))
        )
    gains.sort()
    return [round(gains[int(0.05 * RESAMPLES)], 4), round(gains[int(0.95 * RESAMPLES)], 4)]


def _f1(counts: Counter[str]) -> float:
    tp = counts["tp"]
    return 2 * tp / (2 * tp + counts["fp"] + counts["fn"]) if tp else 0.0


def detected(index: GroundingIndex, dialogues: list[dict[str, Any]], model: str, seed: int) -> Counter[str]:
    """The contradiction detector on the dialogues' corrupted copy (:mod:`kgforge.grounding.corruption`, one
    value changed a message that says one) and on the dialogues as written: messages flagged (a ``contradicted``
    claim) of each."""
    options = MatchOptions(model=model)
    bad, changes = corrupted_copy(index, dialogues, seed)
    grounded = KDCONV.ground(index, bad, options).dialogues
    clean = KDCONV.ground(index, stripped(dialogues), options).dialogues
    counts = Counter[str]()
    for change in changes:
        counts["changed"] += 1
        counts["caught"] += _flagged(grounded[change.dialogue]["messages"][change.message])
    for gold, out in zip(dialogues, clean):
        for message, row in zip(gold["messages"], out["messages"]):
            if message.get("attrs"):
                counts["clean"] += 1
                counts["alarms"] += _flagged(row)
    return counts


def _flagged(row: dict[str, Any]) -> bool:
    return any(claim["status"] == "contradicted" for claim in row["claims"])


def _keys(attrs: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {attr_key(a) for a in attrs if isinstance(a, dict)}


def trained_model(samples: Samples, seed: int, workdir: Path, name: str) -> tuple[str, dict[str, float]]:
    """A model trained on ``samples`` (thresholds chosen inside them), written to a file: its path, thresholds."""
    stages, _ = train_choice(samples, seed)
    path = workdir / f"{name}.model.json"
    path.write_bytes(model_bytes(model_document(stages, {"seed": seed, "protocol": name})))
    return str(path), {stage: values[2] for stage, values in stages.items()}


def cross_validation(domain: str, dev: list[dict[str, Any]], data: Path, work: Path, seed: int) -> dict[str, Any]:
    """5-fold cross-validation by dialogue (see the module docstring): summed counts, and the thresholds."""
    parts = [[dev[i] for i in fold] for fold in folds(len(dev), seed)]
    graphs = [graph(domain, part, data, work / f"{domain}-fold{f}") for f, part in enumerate(parts)]
    samples = [collected(index, part, seed) for index, part in zip(graphs, parts)]
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("rules_claims", "learned_claims")}
    per_dialogue: dict[str, list[Counter[str]]] = {"rules": [], "learned": []}
    thresholds = []
    for f, (index, part) in enumerate(zip(graphs, parts)):
        training = Samples.merged([s for g, s in enumerate(samples) if g != f])
        model, chosen = trained_model(training, seed, work, f"{domain}-fold{f}")
        thresholds.append(chosen)
        for who, name in ((RULES, "rules"), (model, "learned")):
            per_dialogue[name] += scored(index, part, who)
            counts[f"{name}_claims"] += detected(index, part, who, seed)
    return _with_gain(counts, per_dialogue, seed) | {"thresholds": thresholds}


def leave_one_domain_out(devs: dict[str, list[dict[str, Any]]], data: Path, work: Path, seed: int) -> dict[str, Any]:
    """Each domain grounded by a model trained on the two others (see the module docstring)."""
    graphs = {domain: graph(domain, dev, data, work / f"{domain}-all") for domain, dev in devs.items()}
    samples = {domain: collected(graphs[domain], dev, seed) for domain, dev in devs.items()}
    out = {}
    for held in devs:
        training = Samples.merged([samples[d] for d in devs if d != held])
        model, chosen = trained_model(training, seed, work, f"without-{held}")
        per_dialogue = {
            name: scored(graphs[held], devs[held], who) for who, name in ((RULES, "rules"), (model, "learned"))
        }
        counts = {
            f"{name}_claims": detected(graphs[held], devs[held], who, seed)
            for who, name in ((RULES, "rules"), (model, "learned"))
        }
        out[held] = _with_gain(counts, per_dialogue, seed) | {"thresholds": chosen}
    return out


def _with_gain(
    counts: dict[str, Counter[str]], per_dialogue: dict[str, list[Counter[str]]], seed: int
) -> dict[str, Any]:
    """The figures of both choices, and the interval of the learned one's gain."""
    summed = {name: sum(found, Counter()) for name, found in per_dialogue.items()}
    gain = gain_interval(per_dialogue["rules"], per_dialogue["learned"], seed)
    return _all_figures({**counts, **summed}) | {"f1_gain_5_95": gain}


def _all_figures(counts: dict[str, Counter[str]]) -> dict[str, Any]:
    return {name: _detection(found) if name.endswith("_claims") else _figures(found) for name, found in counts.items()}


def _detection(counts: Counter[str]) -> dict[str, float | int]:
    caught, changed, alarms, clean = (counts[k] for k in ("caught", "changed", "alarms", "clean"))
    return {
        **counts,
        "recall": round(caught / changed, 4) if changed else 0.0,
        "false_alarms": round(alarms / clean, 4) if clean else 0.0,
        "precision": round(caught / (caught + alarms), 4) if caught + alarms else 0.0,
    }


def _figures(counts: Counter[str]) -> dict[str, float | int]:
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "f1": round(2 * tp / (2 * tp + fp + fn), 4) if tp else 0.0,
    }


PROTOCOLS = (("cross_validation", "5-fold by dialogue"), ("leave_one_domain_out", "leave one domain out"))


def rows(results: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(domain, protocol's label, figures) of every row of the tables, in their order."""
    return [
        (domain, label, results[name][domain])
        for domain in DOMAINS
        for name, label in PROTOCOLS
        if domain in results[name]
    ]


def claims_table(results: dict[str, Any]) -> str:
    """The contradiction detector's figures as docs/grounding.md's table."""
    lines = [
        "| domain | protocol | rules: caught / false alarms / precision | learned: caught / false alarms / precision |",
        "|---|---|---|---|",
    ]
    for domain, label, row in rows(results):
        cells = [
            " / ".join(f"{row[who][k]:.3f}" for k in ("recall", "false_alarms", "precision"))
            for who in ("rules_claims", "learned_claims")
        ]
        lines.append(f"| {domain} | {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def table(results: dict[str, Any]) -> str:
    """The figures as docs/grounding.md's table."""
    lines = [
        "| domain | protocol | rules P / R / F1 | learned P / R / F1 | F1 gain, 5–95% |",
        "|---|---|---|---|---|",
    ]
    for domain, label, row in rows(results):
        cells = [
            " / ".join(f"{row[who][k]:.3f}" for k in ("precision", "recall")) + f" / **{row[who]['f1']:.3f}**"
            for who in ("rules", "learned")
        ]
        low, high = row["f1_gain_5_95"]
        lines.append(f"| {domain} | {label} | {cells[0]} | {cells[1]} | {low:+.3f} … {high:+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/kdconv"), help="KdConv's folder")
    parser.add_argument("--out", type=Path, default=None, help="the figures as JSON")
    parser.add_argument("--workdir", type=Path, default=None, help="where the graphs are built (default: a temp)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    devs = {domain: KDCONV.read(args.data / domain / "dev.json", False).values for domain in DOMAINS}
    with tempfile.TemporaryDirectory(prefix="kgforge-protocol-") as temporary:
        work = args.workdir or Path(temporary)
        results = {
            "seed": args.seed,
            "cross_validation": {d: cross_validation(d, devs[d], args.data, work, args.seed) for d in DOMAINS},
            "leave_one_domain_out": leave_one_domain_out(devs, args.data, work, args.seed),
        }
    if args.out is not None:
        args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(table(results))
    print()
    print(claims_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
