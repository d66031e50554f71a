"""Making a collection folder from a domain and a goals file, and adding worker tokens to one.

Each goal's view is made once, by the goal export of the style's dataset (``kgforge export --goals``): DuConv
samples (goal and knowledge word-segmented, with both topics' 领域 type facts), kgforge's generic records for
KdConv (plain labels), DuRecDial 2.0 records (goal string, knowledge, profile, situation). A goal that export
refuses (its checks) is left out and listed in ``refused.jsonl`` with why; the report counts it.

Starting again on a folder that holds a collection resumes it: the goals file must be the one it was made
from (same sha256), the style and domain the same; ``--per-goal`` may be raised; ``--workers N`` adds workers
until there are N.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from kgforge.api import Domain
from kgforge.collect.folder import REFUSED, WORKERS, Folder, Settings, new_settings
from kgforge.collect.journal import read_journal
from kgforge.collect.records import CollectError, CollectionReport, GoalView, TokensReport
from kgforge.collect.styles import STYLES, Style
from kgforge.core import checks
from kgforge.core.files import sha256_file
from kgforge.core.jsonio import iter_json_lines
from kgforge.core.output import output_dir
from kgforge.goals.record import Goal, read_goals


def prepare_collection(
    domain: str,
    goals: Path | str,
    style: str,
    out: Path | str,
    *,
    workdir: Path | str | None = None,
    per_goal: int | None = None,
    workers: int | None = None,
) -> CollectionReport:
    """Make the collection folder ``out`` for ``goals`` of ``domain`` in ``style`` (or check that it holds that
    collection already), with at least ``workers`` worker tokens."""
    chosen = STYLES.get(style)
    checks.optional(checks.whole, per_goal, "--per-goal", 1)
    checks.optional(checks.whole, workers, "--workers", 0, 100_000)
    goals, folder, kg = Path(goals), Folder(out), Domain(domain, workdir)
    folder.check_writable(managed=kg.paths.root, allowed=(kg.paths.exports,))
    if not goals.is_file():
        raise CollectError(f"--goals {goals}: no such file (make one with `kgforge goals {domain} --n N --out FILE`)")
    created = not folder.exists
    if created:
        style_goals(goals, chosen)  # before anything is made
        output_dir(folder.path).make()
        views, refused = goal_views(kg, goals, chosen, folder)
        folder.write_views(views)
        if refused:
            folder.output(REFUSED).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in refused))
        settings = new_settings(domain, chosen.name, per_goal or 1, goals, kg.snapshot().manifest.build_id)
        folder.write_settings(settings)
    else:
        settings = _same_collection(folder, domain, chosen, goals)
        if per_goal is not None and per_goal != settings.per_goal:
            folder.write_settings(Settings(**{**settings.as_json(), "per_goal": per_goal}))
        views, refused = folder.views(), _refused(folder)
    have = len(folder.workers())
    added = folder.add_workers(workers - have) if workers is not None and workers > have else []
    folder.admin_token()
    sessions = sum(
        1 for event in read_journal(folder.file("journal.jsonl"), repair=False) if event["event"] == "session"
    )
    return CollectionReport(
        folder.path,
        domain,
        chosen.name,
        len(views),
        len(refused),
        per_goal or settings.per_goal,
        have + len(added),
        len(added),
        folder.file(WORKERS),
        folder.file("admin.token"),
        created,
        sessions,
    )


def _same_collection(folder: Folder, domain: str, style: Style, goals: Path) -> Settings:
    settings = folder.settings()
    if settings.domain != domain or settings.style != style.name:
        raise CollectError(
            f"{folder.path} holds a {settings.style} collection of domain {settings.domain!r}, not a {style.name} "
            f"one of {domain!r}; give another --out"
        )
    if sha256_file(goals) != settings.goals_sha256:
        raise CollectError(
            f"{folder.path} was made from other goals ({settings.goals_file}, sha256 {settings.goals_sha256[:12]}…) "
            f"than {goals}; give another --out for these goals"
        )
    return settings


def _refused(folder: Folder) -> list[dict[str, str]]:
    path = folder.file(REFUSED)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def goal_views(kg: Domain, goals: Path, style: Style, folder: Folder) -> tuple[list[GoalView], list[dict[str, str]]]:
    """Each goal's view, from the style's goal export (run into a scratch folder inside the collection
    folder), and the goals it refused with why."""
    by_id = {f"dlg-{goal.goal_id.removeprefix('g-')}": goal for goal in style_goals(goals, style)}
    fmt, layout = style.goal_export
    with tempfile.TemporaryDirectory(dir=folder.path, prefix=".goals-") as scratch:
        out = Path(scratch) / "goals.export.jsonl"
        report = kg.export(goals, out, fmt=fmt, layout=layout, skip_invalid=True)
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
        ids = report.ids_file.read_text(encoding="utf-8").split()
        refused = (
            [json.loads(line) for line in report.rejected_file.read_text(encoding="utf-8").splitlines()]
            if report.rejected_file
            else []
        )
    views = [style.view(by_id[record_id], record) for record_id, record in zip(ids, records, strict=True)]
    return views, [{"goal_id": r["dialogue_id"].replace("dlg-", "g-", 1), "reason": r["reason"]} for r in refused]


def style_goals(goals: Path, style: Style) -> list[Goal]:
    """The goals of ``goals``, each of a kind the style takes (else an error naming its line)."""
    found = list(read_goals(goals))  # a line that is no goal: its own error, with its line
    for record, goal in zip(iter_json_lines(goals), found):
        if goal.kind not in style.goal_kinds:
            raise CollectError(
                f"{goals}:{record.line}: a {goal.kind!r} goal; a {style.name} collection takes "
                f"{', '.join(sorted(style.goal_kinds))} goals (`kgforge goals DOMAIN --style {style.name}`)"
            )
    return found


def add_tokens(folder: Path | str, count: int) -> TokensReport:
    """``count`` new worker tokens in the collection folder ``folder`` (a running server reads them at once)."""
    checks.whole(count, "--add", 1, 100_000)
    place = Folder(folder)
    place.settings()  # a collection folder, or a clear error
    added = place.add_workers(count)
    return TokensReport(place.path, len(added), len(place.workers()), place.file(WORKERS), tuple(added))
