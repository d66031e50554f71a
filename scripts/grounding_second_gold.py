"""The second gold of docs/grounding.md ("A second gold"): figures of `kgforge ground` against annotations other
than KdConv's attrs. Run from the checkout (about half a minute):

    .venv/bin/python scripts/grounding_second_gold.py [--shared ../shared/data] [--workdir DIR] [--json FILE]

* **DuConv goal-topic focus**: the shared DuConv dev head (250 sessions) built as a domain, grounded with
  ``--format duconv`` (the graph's facts and focus beside the session's own triples), and scored by
  :func:`kgforge.evaluation.focus.focus_accuracy`: how often the entity first in focus after an utterance is the
  goal topic the utterance is about.
* **DuRecDial per-utterance knowledge**: DuRecDial 2.0's dev/test layout annotates the triple each utterance
  states, but its files are not in the shared data; the one session annotated that way here is the ACL 2020
  README example annotated by hand, in Chinese and in English (``tests/durecdial_sessions.py``, which this
  script reads so that the annotation has one home). Each is built as a domain, grounded with ``--format
  durecdial``, and the output scored as a system's selection against the annotation with ``kgforge eval
  --selected`` (:func:`kgforge.evaluation.selection.score_selection`).

Prints the figures as markdown (the tables of docs/grounding.md) and, with ``--json``, writes them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kgforge import Domain  # noqa: E402
from kgforge.core.files import write_json_atomic  # noqa: E402
from kgforge.evaluation.focus import FocusReport, focus_accuracy  # noqa: E402
from kgforge.evaluation.selection import SelectionReport, score_selection  # noqa: E402

DUCONV_DEV = "duconv/dev.head250.jsonl"


def duconv_focus(shared: Path, workdir: Path) -> tuple[FocusReport, tuple[str, ...]]:
    """The DuConv dev head built as domain ``duconv``, grounded, and its goal-topic focus accuracy; with the
    goal topics the graph lacks (the grounding report's ``topics_not_in_graph``)."""
    source = shared / DUCONV_DEV
    domain = Domain("duconv", workdir)
    domain.build([f"duconv:{source}"])
    out = workdir / "duconv.grounded.jsonl"
    report = domain.ground(source, out, fmt="duconv")
    return focus_accuracy(out), report.topics_not_in_graph


def durecdial_selection(shared: Path, workdir: Path, language: str) -> SelectionReport:
    """The hand-annotated DuRecDial 2.0 session (``language``: zh or en) built as a domain, grounded, and the
    grounding scored against its per-utterance knowledge as a selection."""
    from tests.durecdial_sessions import v2_session, write_lines  # the hand annotation's one home

    session = v2_session(lambda relative: shared / relative, language)
    folder = workdir / f"durecdial-{language}"  # a domain named durecdial (the shipped schema) per language
    folder.mkdir(parents=True, exist_ok=True)
    gold = write_lines(folder / "dev.txt", [session])
    domain = Domain("durecdial", folder)
    domain.build([f"durecdial:{gold}"])
    grounded = folder / "dev.grounded.txt"
    domain.ground(gold, grounded, fmt="durecdial")
    return score_selection(grounded, gold, out=None)


def figures(shared: Path, workdir: Path) -> dict[str, Any]:
    focus, missing = duconv_focus(shared, workdir)
    return {
        "duconv_focus": focus.as_dict(),
        "duconv_topics_not_in_graph": list(missing),
        "durecdial_selection": {lang: durecdial_selection(shared, workdir, lang).as_dict() for lang in ("zh", "en")},
    }


def markdown(found: dict[str, Any]) -> str:
    f = found["duconv_focus"]

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    lines = [
        "| DuConv dev head, utterances scored | n | grounder's focus | baseline: the goal topic named last |",
        "|---|---:|---:|---:|",
        f"| all scored | {f['scored']} | {share(f['accuracy'])} | {share(f['baseline_accuracy'])} |",
        f"| naming their topic | {f['named']} | {share(f['accuracy_named'])} | 1.000 |",
        f"| naming neither topic (told by a fact) | {f['by_fact']} | {share(f['accuracy_by_fact'])} | "
        f"{share(f['baseline_accuracy_by_fact'])} |",
        "",
        f"{f['utterances']} utterances of {f['sessions']} sessions; left out: {f['about_neither']} about neither goal "
        f"topic, {f['about_both']} about both. Goal topics not in the graph: "
        f"{', '.join(found['duconv_topics_not_in_graph']) or 'none'}.",
        "",
        "| DuRecDial session (hand-annotated) | turns with gold | R-Prec | Recall@1 | Recall@5 | P | R | F1 | accuracy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for language, report in found["durecdial_selection"].items():
        micro = report["micro"]
        cells = [micro[k] for k in ("r_precision", "recall@1", "recall@5", "precision", "recall", "f1", "accuracy")]
        lines.append(f"| {language} (micro) | {report['turns_with_gold']} | " + " | ".join(map(share, cells)) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    parser.add_argument("--workdir", type=Path, help="build the domains here (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    if not (args.shared / DUCONV_DEV).is_file():
        parser.error(f"{args.shared / DUCONV_DEV}: no such file (give --shared)")
    with tempfile.TemporaryDirectory(prefix="kgforge-second-gold-") as scratch:
        found = figures(args.shared.resolve(), (args.workdir or Path(scratch)).resolve())
    print(markdown(found))
    if args.json:
        write_json_atomic(args.json, found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
