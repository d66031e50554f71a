"""``kgforge synth``: the goals of a file drafted into dialogues (by a model, or the templated realiser), every
turn verified, released in the goals' order in the style's layout, with the dialogues dropped and why
(``OUT.rejected.jsonl``) and a manifest (``OUT.manifest.json``): model, prompts' hashes, seed, build."""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core import checks
from kgforge.core.errors import KgforgeError
from kgforge.core.files import package_versions, sha256_file
from kgforge.core.jsonio import array_items, json_array, json_lines
from kgforge.core.output import OutputFile
from kgforge.core.progress import progress_bar
from kgforge.core.records import Record, omitted_when_none
from kgforge.goals.record import read_goals
from kgforge.store.snapshot import Snapshot
from kgforge.synth.client import DEFAULT_KEY_ENV, ChatClient
from kgforge.synth.loop import Drafter, Outcome, Settings
from kgforge.synth.material import Materials, prepare
from kgforge.synth.prompts import load_prompts
from kgforge.synth.styles import STYLES, SynthStyle, style_named
from kgforge.synth.verify import Verifier

TEMPLATED = "templated"
# report fields that differ between a run and the same run resumed: left out of the manifest
_VARYING = ("sent", "cache_hits", "seconds", "verification_cpu_seconds")


@dataclass(frozen=True)
class SynthOptions:
    """What ``kgforge synth`` is asked for (checked when made)."""

    style: str
    layout: str | None = None  # None: the style's first (DuRecDial: lic2020)
    language: str | None = None  # None: the schema's
    n: int | None = None  # the first N goals of the file; None: all
    llm_url: str | None = None  # None: the templated realiser
    llm_model: str | None = None
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = 120.0  # seconds for one request, 429 waits included
    concurrency: int = 4
    max_tries: int = 3
    seed: int = 0
    temperature: float = 0.7
    prompts: Path | None = None  # the user's prompt templates for the style (TOML)
    progress: bool = False

    def __post_init__(self) -> None:
        checks.choice(self.style, "--style", STYLES.names())
        checks.optional(checks.language_tag, self.language, "--lang")
        checks.optional(checks.whole, self.n, "--n", 1)
        checks.whole(self.concurrency, "--concurrency", 1, 256)
        checks.whole(self.max_tries, "--max-tries", 1, 100)
        checks.whole(self.seed, "--seed", 0)
        checks.number(self.timeout, "timeout", above=True)
        checks.number(self.temperature, "temperature", maximum=2.0)
        checks.optional(checks.http_url, self.llm_url, "--llm-url")
        if (self.llm_url is None) != (self.llm_model is None):
            raise KgforgeError("give --llm-url and --llm-model together (or neither, for the templated realiser)")

    @property
    def model(self) -> str:
        return self.llm_model or TEMPLATED


@dataclass(frozen=True)
class SynthReport(Record):
    """What ``kgforge synth`` released and dropped, and what it cost."""

    domain: str
    style: str
    layout: str
    reader_kind: str  # the real readers' kind of the output (run-readers KIND)
    language: str
    out: Path
    manifest: Path
    model: str  # "templated": the offline realiser, no model
    goals: int  # goals read
    dialogues: int  # released
    dropped: int
    drops: dict[str, int]  # reason kind -> dialogues
    drafts: int
    repairs: int  # rewrites of a failing turn asked for
    repaired_turns: int  # turns that failed verification and passed after a rewrite
    retries: int  # requests asked again after a reply that could not be used
    bad_replies: dict[str, int]  # kind -> replies
    requests: int  # requests made (sent + answered from the cache)
    sent: int  # requests sent to the endpoint by this run
    cache_hits: int
    prompt_tokens: int  # from the replies' usage (0 where the endpoint gave none)
    completion_tokens: int
    turns: int  # released turns
    knowledge_turns: int  # released turns that state or claim a fact (not chitchat)
    verified_share: float | None  # of those, the share verified as supported
    verdicts: dict[str, int]  # released turns by verdict
    mixed_labels: int  # names written in another language than asked (the graph has none in it)
    turns_verified: int  # turns checked against the graph, every check of every draft and rewrite counted
    verification_cpu_seconds: float  # CPU time those checks took
    build_id: str
    seconds: float
    rejected: Path | None = omitted_when_none()  # OUT.rejected.jsonl, when a dialogue was dropped


@dataclass(frozen=True)
class SynthPlan(Record):
    """``kgforge synth --dry-run``: what the run would send before any reply is seen (its drafts; a repair is
    asked only for a turn that fails, up to --max-tries each)."""

    domain: str
    style: str
    model: str
    goals: int
    unusable_goals: int  # goals whose knowledge could not be made (they will be dropped, nothing sent)
    requests: int  # draft requests to send (those already answered in the cache left out)
    cached: int  # draft requests answered in the cache already
    prompt_chars: int  # characters of the messages of the requests to send
    tokens: int | None  # prompt tokens, where a tokenizer for the model is known (none is shipped)


@dataclass
class _Run:
    """A run's parts: the goals made ready, the drafter, and the output paths."""

    snapshot: Snapshot
    style: SynthStyle
    layout: str
    materials: Materials
    drafter: Drafter
    goals_total: int
    out: OutputFile


def _open(snapshot: Snapshot, goals_file: Path, out: Path, options: SynthOptions) -> _Run:
    target = snapshot.paths.output(out)
    style = style_named(options.style)
    layout = style.layout(options.layout)
    goals = list(read_goals(Path(goals_file)))
    if not goals:
        raise KgforgeError(f"{goals_file}: no goals")
    total = len(goals)
    goals = goals[: options.n] if options.n else goals
    language = options.language or snapshot.schema.language
    materials = prepare(snapshot, goals, style, layout, language)
    client = None
    prompts = None
    if options.llm_url and options.llm_model:
        prompts = load_prompts(style.prompts, language, options.prompts)
        cache = snapshot.paths.raw / "llm-cache"
        client = ChatClient(options.llm_url, options.llm_model, cache, options.key_env, options.timeout)
    settings = Settings(options.max_tries, options.seed, options.temperature, layout)
    drafter = Drafter(style, prompts, client, Verifier.open(snapshot), materials.segment, settings)
    return _Run(snapshot, style, layout, materials, drafter, min(total, len(goals)), target)


def plan(snapshot: Snapshot, goals_file: Path, out: Path, options: SynthOptions) -> SynthPlan:
    """The draft requests a run would send, and their characters, before anything is sent."""
    run = _open(snapshot, goals_file, out, options)
    requests = cached = chars = 0
    client = run.drafter.client
    if client is not None:
        for material in run.materials.ready:
            messages = run.drafter.draft_messages(material)
            if client.cached(run.drafter.body(messages)):
                cached += 1
                continue
            requests += 1
            chars += sum(len(m["content"]) for m in messages)
    return SynthPlan(
        snapshot.domain,
        run.style.name,
        options.model,
        run.goals_total,
        len(run.materials.unusable),
        requests,
        cached,
        chars,
        None,
    )


def synth(snapshot: Snapshot, goals_file: Path, out: Path, options: SynthOptions) -> SynthReport:
    """Dialogues for the goals of ``goals_file`` written to ``out`` (see the module docstring)."""
    started = time.perf_counter()
    run = _open(snapshot, goals_file, out, options)
    outcomes = _outcomes(run, options)
    failed = [o.rejected for o in outcomes if o.rejected is not None and o.drop_kind == "endpoint error"]
    if failed and len(failed) == len(outcomes):  # nothing came back: an error to fix, not a file of drops
        raise KgforgeError(f"no request was answered, nothing was written: {failed[0]['reason']}")
    return _write(run, options, goals_file, outcomes, time.perf_counter() - started)


def _outcomes(run: _Run, options: SynthOptions) -> list[Outcome]:
    """Every goal's outcome, in the goals' order whatever order they were done in."""
    ready = run.materials.ready
    threads = options.concurrency if run.drafter.client is not None else 1
    shown = options.progress and sys.stderr.isatty()
    done: dict[int, Outcome] = {}
    with progress_bar(shown) as bar, ThreadPoolExecutor(threads, thread_name_prefix="synth") as pool:
        task = bar.add_task(_progress_text(run.style.name, done), total=len(ready))
        for outcome in pool.map(run.drafter.run, ready) if threads == 1 else _as_done(pool, run.drafter.run, ready):
            done[outcome.number] = outcome
            bar.update(task, advance=1, description=_progress_text(run.style.name, done))
    return [done[material.number] for material in ready]


def _as_done(pool: ThreadPoolExecutor, work: Callable[[Any], Outcome], items: list[Any]) -> Iterable[Outcome]:
    return (future.result() for future in as_completed([pool.submit(work, item) for item in items]))


def _progress_text(style: str, done: dict[int, Outcome]) -> str:
    repaired = sum(1 for o in done.values() if o.record is not None and o.repaired)
    dropped = sum(1 for o in done.values() if o.record is None)
    return f"synth {style}: repaired {repaired}, dropped {dropped}"


def _write(run: _Run, options: SynthOptions, goals_file: Path, outcomes: list[Outcome], seconds: float) -> SynthReport:
    """The released dialogues, the rejected file (or none: a stale one is removed) and the manifest; the report."""
    layout = run.style.layouts[run.layout]
    records = [o.record for o in outcomes if o.record is not None]
    rejected = [
        {"goal_line": number + 1, "kind": "goal unusable", "reason": why}
        for number, why in run.materials.unusable.items()
    ] + [o.rejected for o in outcomes if o.rejected is not None]
    rejected.sort(key=lambda r: r["goal_line"])
    with run.out.open("wb") as handle:
        handle.writelines(json_array([array_items(records)]) if layout.array else [json_lines(records)])
    rejected_file = run.out.sidecar(".rejected.jsonl")
    if rejected:
        rejected_file.write_bytes(json_lines(rejected))
    else:
        rejected_file.remove()  # a file left by an earlier run would name drops that did not happen
    report = _report(run, options, outcomes, records, rejected, seconds, rejected_file.path if rejected else None)
    manifest = {
        "command": "synth",
        "domain": run.snapshot.domain,
        "build_id": run.materials.build_id,
        "style": run.style.name,
        "layout": run.layout,
        "reader_kind": layout.reader_kind,
        "language": report.language,
        "goals_file": str(goals_file),
        "goals_sha256": sha256_file(goals_file),
        "n": options.n,
        "seed": options.seed,
        "max_tries": options.max_tries,
        "model": options.model,
        "templated": options.llm_url is None,
        "endpoint": options.llm_url,
        "temperature": None if options.llm_url is None else options.temperature,
        "prompts": _prompts_entry(run),
        "out_sha256": sha256_file(run.out.path),
        "report": {k: v for k, v in report.as_dict().items() if k not in _VARYING},
        "versions": package_versions(),
    }
    run.out.sidecar(".manifest.json").write_json(manifest)
    return report


def _prompts_entry(run: _Run) -> dict[str, Any] | None:
    prompts = run.drafter.prompts
    if prompts is None:
        return None
    return {"source": prompts.source, "language": prompts.language, "sha256": prompts.sha256}


def _report(
    run: _Run,
    options: SynthOptions,
    outcomes: list[Outcome],
    records: list[dict[str, Any]],
    rejected: list[dict[str, Any]],
    seconds: float,
    rejected_path: Path | None,
) -> SynthReport:
    released = [o for o in outcomes if o.record is not None]
    verdicts: Counter[str] = sum((o.verdicts for o in released), Counter())
    knowledge = sum(n for verdict, n in verdicts.items() if verdict != "chitchat")
    sent, hits = sum(o.sent for o in outcomes), sum(o.cached for o in outcomes)
    return SynthReport(
        run.snapshot.domain,
        run.style.name,
        run.layout,
        run.style.layouts[run.layout].reader_kind,
        run.materials.ready[0].language if run.materials.ready else options.language or run.snapshot.schema.language,
        run.out.path,
        run.out.sidecar(".manifest.json").path,
        options.model,
        run.goals_total,
        len(records),
        len(rejected),
        dict(sorted(Counter(r["kind"] for r in rejected).items())),
        sum(o.drafts for o in outcomes),
        sum(o.repairs for o in outcomes),
        sum(o.repaired for o in released),
        sum(o.retries for o in outcomes),
        dict(sorted(sum((o.bad_replies for o in outcomes), Counter()).items())),
        sent + hits,
        sent,
        hits,
        sum(o.prompt_tokens for o in outcomes),
        sum(o.completion_tokens for o in outcomes),
        sum(verdicts.values()),
        knowledge,
        round(verdicts["supported"] / knowledge, 4) if knowledge else None,
        dict(sorted(verdicts.items())),
        len(run.materials.mixed_labels),
        run.drafter.verifier.turns_checked,
        round(run.drafter.verifier.cpu_seconds, 3),
        run.materials.build_id,
        round(seconds, 3),
        rejected_path,
    )
