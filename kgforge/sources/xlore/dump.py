"""XLORE (the English–Chinese knowledge graph): the import of its dumps, and its web API.

The dump files' lines are read by :mod:`kgforge.sources.xlore.lines`, on the resumable passes of
:mod:`kgforge.sources.xlore.passes` (the local process pool or Ray, as for Wikidata's dumps). A line
that cannot be read is quarantined with its file, line and byte offset; the others still land.

The web API client caches every good JSON reply on disk, keeps a minimum interval between requests,
and recognises the daily-quota reply (``当天访问次数到达上限``), which it raises and never caches.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import requests

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.jsonio import loads
from kgforge.core.quads import check_iri, literal_term
from kgforge.core.vocab import RDFS_LABEL, XLORE, class_iri
from kgforge.crawl.cache import CachedResponse, ResponseCache
from kgforge.sources.matching import Linker, Named, name_key
from kgforge.sources.options import FLAT
from kgforge.sources.wikidata.dump import engine_record
from kgforge.sources.wikidata.entity import IndexRecord
from kgforge.sources.wikidata.framing import DumpReader
from kgforge.sources.wikidata.passes import PassOptions, PassResult, index_records, read_journal, split_triple
from kgforge.sources.wikidata.select import SeedSelection, expand
from kgforge.sources.xlore.lines import (
    INSTANCE,
    SCHEMA_PROPERTY,
    LineError,
    decoded_lines,
    file_triples,
    xlore_files,
)
from kgforge.sources.xlore.passes import EXTRACT, INDEX, XloreConfig, run_file

QUOTA_TEXT = "当天访问次数到达上限"


# --- web API ---------------------------------------------------------------------------------


class XloreQuotaError(KgforgeError):
    """The XLORE API answered with its daily-quota text: stop for today (nothing was cached)."""


class XloreApiError(KgforgeError):
    """The XLORE API failed or answered something that is not JSON."""


class XloreClient:
    """GET requests to the XLORE API, cached on disk, at most one per ``min_interval`` seconds."""

    def __init__(
        self,
        cache_dir: Path,
        base_url: str = "http://api.xlore.org",
        min_interval: float = 1.0,
        timeout: float = 30.0,
        retries: int = 2,
        session: requests.Session | None = None,
    ) -> None:
        self.cache = ResponseCache(cache_dir)
        self.base_url = base_url.rstrip("/")
        self.min_interval, self.timeout, self.retries = min_interval, timeout, retries
        self.session = session or requests.Session()
        self._last = 0.0
        self.requests_made = 0

    def url(self, path: str, params: dict[str, str]) -> str:
        return f"{self.base_url}/{path.lstrip('/')}?{urlencode(params)}"

    def get(self, path: str, **params: str) -> Any:
        """The JSON reply to ``path?params`` — from the cache when there, else fetched and cached."""
        url = self.url(path, params)
        cached = self.cache.get(url)
        if cached is not None:
            return loads(cached.body)
        body = self._fetch(url)
        text = body.decode("utf-8", "replace")
        if QUOTA_TEXT in text:
            raise XloreQuotaError(
                f"{url}: the XLORE API says its daily quota is used up ({QUOTA_TEXT}); "
                "try again tomorrow — cached replies stay usable"
            )
        try:
            data = loads(text)
        except ValueError as exc:
            raise XloreApiError(f"{url}: reply is not JSON ({exc}): {text[:200]!r}") from None
        self.cache.put(
            CachedResponse(url=url, final_url=url, status=200, headers={}, body=body, fetched_at=time.time())
        )
        return data

    def _fetch(self, url: str) -> bytes:
        problem = ""
        for attempt in range(self.retries + 1):
            wait = self.min_interval - (time.monotonic() - self._last)
            if wait > 0:
                time.sleep(wait)
            self._last = time.monotonic()
            self.requests_made += 1
            try:
                response = self.session.get(url, timeout=self.timeout)
            except requests.RequestException as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return response.content
                problem = f"HTTP {response.status_code}"
                if response.status_code < 500 and response.status_code != 429:
                    break
            time.sleep(min(2**attempt * self.min_interval, 30))
        raise XloreApiError(f"{url}: {problem} (after {attempt + 1} attempt(s))")

    def search_instances(self, word: str) -> list[dict[str, Any]]:
        """``/query?instances=word`` → the ``Instances`` list (``Label``, ``Uri``, ``Related Instances``)."""
        reply = self.get("query", instances=word)
        instances = reply.get("Instances") if isinstance(reply, dict) else None
        return instances if isinstance(instances, list) else []


# --- dump import -----------------------------------------------------------------------------


@dataclass(frozen=True)
class XloreOptions:
    """``[options.xlore]`` of a schema, or an ``xlore`` / ``xlore-api`` source's own settings."""

    selection: SeedSelection = field(default_factory=SeedSelection, metadata=FLAT)
    """``seeds``, ``seed_names``, ``hops``, ``fanout_cap``: the subgraph to keep (default: the whole dump)."""
    passes: PassOptions = field(default_factory=PassOptions, metadata=FLAT)
    """``workers``, ``engine``, ``address``, ``shard_bytes``, ``decompressor``, ``resume``, ``checkpoint_seconds``,
    ``batch_bytes``: how the dump passes run (as for Wikidata's dumps)."""
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Schema type → the XLORE concept IRIs whose instances are of that type (``owl:InstanceOf`` → ``rdf:type``)."""
    base: str | None = None
    """The IRI relative IRIs in the dump are resolved against."""
    base_url: str = "http://api.xlore.org"
    """The XLORE web API (``xlore-api``)."""
    min_interval: float = 1.0
    """Seconds between two API requests (``xlore-api``)."""
    language: str | None = None
    """The language tag of labels from the API (``xlore-api``); default: the schema's language."""


def seed_iri(seed: str) -> str:
    """``bdi809358`` or ``http://xlore.org/instance/bdi809358`` → the instance IRI."""
    return seed if "://" in seed else INSTANCE + seed


class XloreImport:
    """One XLORE source: every triple, or the N-hop neighbourhood of seeds (index passes, then extract passes),
    each file's passes run on the engine the options name (:mod:`kgforge.sources.xlore.passes`)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.options = ctx.settings("xlore", XloreOptions)
        self.files = xlore_files(ctx.path)
        self.relations = {rel.iri: rel for rel in ctx.schema.relations.values()}
        self.property_map: dict[str, str] = {}  # XLORE infobox property IRI → domain relation IRI
        self.classes = {iri: class_iri(type_id) for type_id, iris in self.options.classes.items() for iri in iris}
        self.state_root = (
            Path(ctx.workdir) / "raw" / "xlore" if ctx.workdir else Path(tempfile.mkdtemp(prefix="kgforge-xlore-"))
        )
        self.runner = self.options.passes.runner(sum(path.stat().st_size for path in self.files))
        self.configs: dict[Path, XloreConfig] = {}  # per file, once the property labels are read

    def run(self) -> None:
        self._read_property_labels()
        self.configs = {
            path: XloreConfig.of(path, self.options.base, self.property_map, self.classes) for path in self.files
        }  # each file's head read once for all its passes
        passes: dict[str, PassResult] = {}
        wanted = self._select(passes) if self.options.selection.seeded else None
        extracts = [(path, self._pass(path, EXTRACT, wanted)) for path in self.files]
        passes.update((f"extract {path.name}", result) for path, result in extracts)
        self._replay(extracts)
        self.ctx.engine = engine_record(passes)
        self.ctx.counts["workers"] = self.runner.workers
        for _, result in extracts:  # their triples are in the source's quads now: free the disk
            shutil.rmtree(result.journal.parent, ignore_errors=True)

    def _pass(self, path: Path, mode: str, wanted: frozenset[str] | None = None) -> PassResult:
        result = run_file(self.runner, path, mode, self.configs[path], self.state_root, wanted)
        if result.truncated:
            self.ctx.reject(f"{path.name} end of file", result.truncated)
            self.ctx.counts["dump_truncated"] += 1
        return result

    def _read_property_labels(self) -> None:
        """``<property/P> rdfs:label "导演"@zh`` → P is mapped onto the schema relation of that label."""
        for path in self.files:
            if ".property." not in path.name:
                continue
            for _, _, item in file_triples(path, self.options.base):
                if isinstance(item, LineError) or item[1] != RDFS_LABEL or item[2].is_iri:
                    continue
                subject, _, label = item
                if self.ctx.schema.is_declared(label.value):
                    self.property_map[subject.value] = self.ctx.schema.relation_for(label.value).iri

    def _replay(self, extracts: list[tuple[Path, PassResult]]) -> None:
        """The extract journals → the source's quads and quarantine; then the held concept and property
        triples whose subject a written triple refers to."""
        referenced: set[str] = set()
        used: set[str] = set()
        for path, result in extracts:
            for kind, payload in read_journal(result.journal, "TE"):
                if kind == "E":
                    entry = json.loads(payload)
                    self.ctx.reject(f"{path.name} {entry['location']}", entry["reason"], entry.get("record"))
                    continue
                _, predicate, obj = self._write(payload, used)
                referenced.add(predicate)
                if obj.startswith("<"):
                    referenced.add(obj[1:-1])
            for key, value in result.counts.items():
                self.ctx.counts[key] += value
        for _, result in extracts:
            for _, payload in read_journal(result.journal, "H"):
                if payload.split(" ", 1)[0] in referenced:
                    self._write(payload, used)
        self.ctx.relations_used.update(self.relations[iri] for iri in used)

    def _write(self, payload: str, used: set[str]) -> tuple[str, str, str]:
        subject, predicate, obj = split_triple(payload)
        self.ctx.writer.term(subject, predicate, obj)
        if predicate in self.relations:
            used.add(predicate)
        self.ctx.accept()
        return subject, predicate, obj

    def _select(self, passes: dict[str, PassResult]) -> frozenset[str]:
        selection = self.options.selection
        indexes = [(path, self._pass(path, INDEX)) for path in self.files]
        passes.update((f"index {path.name}", result) for path, result in indexes)

        def records() -> Iterator[IndexRecord]:
            for _, result in indexes:
                yield from index_records(result.journal)

        linker = Linker(Named(n, (n,)) for n in selection.named())
        known: set[str] = set()
        for record in records():
            known.add(record.id)
            if record.labels:
                linker.offer(Named(record.id, tuple(record.labels)))
        seeds = {seed_iri(s) for s in selection.seeds}
        for missing in sorted(seeds - known):
            self.ctx.reject(f"seed {missing}", "seed instance is not in the dump")
        seeds &= known
        report = linker.report()
        for name, iris in report.ambiguous.items():
            self.ctx.reject(
                f"seed name {name!r}",
                f"ambiguous: {len(iris)} instances carry this name, none chosen",
                {"candidates": iris},
            )
        self.ctx.counts["seed_names_unmatched"] = len(report.unmatched)
        seeds |= set(report.linked.values())
        if not seeds:
            raise InputError(f"{self.ctx.path}: no seed instance found (seeds and seed_names matched nothing)")
        expansion = expand(records, seeds, selection.hops, selection.fanout_cap or None)
        for hop, level in enumerate(expansion.levels):
            self.ctx.counts[f"hop_{hop}_entities"] = len(level)
        self.ctx.counts["selected_entities"] = len(expansion.entities)
        self.ctx.counts["fanout_capped_nodes"] = len(expansion.capped)
        return frozenset(expansion.entities)


def import_xlore_dump(ctx: Any) -> None:
    XloreImport(ctx).run()


# --- API import ------------------------------------------------------------------------------


def seed_names_of(path: Path, reject: Callable[[str, str], None]) -> list[str]:
    """``xlore-api:PATH``: a file with one name per line (a line that is not UTF-8 goes to ``reject(location,
    reason)``), or the names themselves, comma-separated."""
    if path.is_file():
        names = []
        for line_no, _, text in decoded_lines(DumpReader(path, decompressor="python")):
            if isinstance(text, LineError):
                reject(f"line {line_no}", str(text))
            else:
                names.append(text)
    else:
        names = re.split(r"[,，]", str(path))
    return [n.strip() for n in names if n.strip()]


def import_xlore_api(ctx: Any) -> None:
    """Seeds looked up by name in the XLORE API, then their related instances, ``hops`` deep.

    A name is resolved when exactly one returned instance carries it (after normalisation);
    otherwise it is reported (ambiguous with the candidates, or not found) and not followed.
    Replies are cached under ``raw/xlore-api/``, so a run stopped by the daily quota continues
    from the cache the next day.
    """
    options = ctx.settings("xlore", XloreOptions)
    cache = Path(ctx.workdir) / "raw" / "xlore-api" if ctx.workdir else Path(tempfile.mkdtemp())
    client = XloreClient(cache, options.base_url, options.min_interval)
    lang = options.language or ctx.schema.language
    hops, cap = options.selection.hops, options.selection.fanout_cap
    resolved: dict[str, str] = {}  # name key → instance IRI
    related: dict[str, list[str]] = {}  # instance IRI → related names (capped)
    frontier = seed_names_of(Path(ctx.path), ctx.reject)
    for _ in range(hops + 1):
        next_names: list[str] = []
        for name in frontier:
            if name_key(name) in resolved:
                continue
            found = _resolve(ctx, client, name)
            if found is None:
                continue
            iri = found["Uri"]
            resolved[name_key(name)] = iri
            ctx.writer.literal(iri, RDFS_LABEL, found["Label"], lang=lang)
            names = [r["Label"] for r in found.get("Related Instances") or [] if isinstance(r, dict) and r.get("Label")]
            related[iri] = names[:cap]
            ctx.counts["fanout_capped_nodes"] += len(names) > cap
            next_names += related[iri]
            ctx.accept()
        frontier = next_names
    for iri, names in related.items():
        for name in names:
            if name_key(name) in resolved:
                ctx.writer.iri(iri, SCHEMA_PROPERTY + "hasReferedTo", resolved[name_key(name)])
    ctx.counts["api_requests"] = client.requests_made


def _resolve(ctx: Any, client: XloreClient, name: str) -> dict[str, Any] | None:
    where = client.url("query", {"instances": name})
    try:
        replies = client.search_instances(name)
    except XloreApiError as exc:  # this name's reply only (the daily quota still stops the run)
        ctx.reject(where, f"unusable reply: {exc}")
        return None
    instances = [
        i for i in replies if isinstance(i, dict) and isinstance(i.get("Label"), str) and isinstance(i.get("Uri"), str)
    ]
    exact = [i for i in instances if name_key(i["Label"]) == name_key(name)]
    if len(exact) == 1 and exact[0]["Uri"].startswith(XLORE):
        try:
            check_iri(exact[0]["Uri"])
            literal_term(exact[0]["Label"])
        except (ValueError, UnicodeEncodeError) as exc:
            ctx.reject(where, f"unusable instance: {exc}", exact[0])
            return None
        return exact[0]
    if len(exact) > 1:
        ctx.reject(
            where, f"ambiguous: {len(exact)} instances are named {name!r}", {"candidates": [i["Uri"] for i in exact]}
        )
    else:
        ctx.counts["names_not_found"] += 1
    return None
