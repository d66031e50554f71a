"""Labels for what has none in a language, as an explicit, reviewed step: propose, review, apply.

``propose_translations`` finds what lacks a label in the language on the chain of
:mod:`kgforge.store.languages` (entities the dialogue stages use, relations, types, and short literal values
with no form in the language, by the rule exports follow), and those named in it only by an alias, and writes
a review file: TSV, one row per item, keyed by the name (``source``) with its IRI beside it. Without a model
it is a to-do list for translators (``translate --list``), each row's ``label`` to fill in; with one it asks
an OpenAI-compatible endpoint for names in batches (the shared client, :mod:`kgforge.llm`: cached by request,
a malformed reply quarantined), each usable answer a proposal with ``keep`` set to ``review``. An alias comes
pre-filled as a proposal the same way (it is not asked of the model). Nothing is approved by itself: a person
reads each proposal and sets ``keep`` to ``yes`` (editing ``label`` where it is wrong) or ``no``; only
``yes`` is applied. A label that is no name (a control character, a newline, a bidi override, a lone surrogate, more
than :data:`MAX_LABEL_CHARS` characters: :func:`label_problem`) is refused as a proposal: its row comes with
``label`` and ``keep`` empty and a note, the label goes to the quarantine file, and the report counts it. Rows
the model gave nothing usable for come with ``keep`` empty and a note too.

``apply_translations`` reads the reviewed file back (UTF-8, with or without the byte-order mark a spreadsheet
writes; every problem names the file and line: a byte that is not UTF-8, a cell over the reader's limit, a
kept label :func:`label_problem` refuses; nothing is loaded while one remains) and publishes the kept rows as their own named graph, ``graph/translated/<lang>``,
kind ``translated``, beside the sources' graphs (as ``kgforge link`` adds its links): an entity, relation or
type gets an ``rdfs:label`` in the language; a literal value gets its translation as a second value of each
fact that states it. Source labels are never changed, and the manifest records the file and its checksum;
applying again replaces that language's graph.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import polars as pl

from kgforge.core.errors import InputError
from kgforge.core.files import sha256_file
from kgforge.core.quads import QuadWriter, check_lang
from kgforge.core.quarantine import Quarantine
from kgforge.core.text import spreadsheet_cell, spreadsheet_text
from kgforge.core.vocab import RDFS_LABEL, graph_iri
from kgforge.llm import BadReply, LLMClient, LLMSettings, json_reply
from kgforge.publish.transaction import add_graphs, extending
from kgforge.store.languages import (
    fits_script,
    in_language,
    language_labels,
    literal_forms,
)
from kgforge.store.layout import (
    domain_paths,
    staged_build,
)
from kgforge.store.manifest import GraphEntry
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

# keyed by the name a translator reads, its IRI beside it; read back by column name, so files written in the
# earlier order (keep kind iri source_language source language label note) apply as before
COLUMNS = ("source", "iri", "kind", "keep", "label", "source_language", "language", "note")
KINDS = ("entity", "relation", "type", "literal")
BATCH = 40  # items per request: a reply stays short enough to come back whole
MAX_LITERAL_CHARS = 30  # longer values are sentences (comments, plots): not names to translate
KEEP = ("yes", "y", "true", "1", "x")  # what a person writes to apply a row
REVIEW = "review"  # what `translate` writes: awaiting a person's yes or no
REFUSED = "refused: "  # how the note of a row whose proposed label was refused starts
TODO = "to translate: "  # how the note of a to-do list's row (no model asked) starts
MAX_LABEL_CHARS = 512  # a name, not a text: longer is a broken or hostile reply
# Characters a label may not hold: C0/C1 controls (NUL, ESC, tab, newlines), line and paragraph separators,
# bidi embeddings, overrides, isolates and marks (they reorder what a reader sees), and lone surrogates.
_NOT_IN_LABEL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as ``surrogateescape`` reads it
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "Chinese (Simplified)",
    "ja": "Japanese",
    "ko": "Korean",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
}


@dataclass(frozen=True)
class Item:
    """One thing lacking a label: an entity, relation or type (by IRI) or a literal value (by its text)."""

    kind: str
    iri: str  # "" for a literal
    source_language: str
    source: str
    type_hint: str = ""  # the entity's type, or the relation a literal is a value of: context for the model
    candidate: str = ""  # a name the graph already has in the language (a skos:altLabel), proposed for review


@dataclass(frozen=True)
class TranslationProposals:
    """What ``propose_translations`` wrote."""

    domain: str
    language: str
    out: Path
    items: dict[str, int]  # per kind: how many lacked a label (or have only an alias in the language)
    proposed: int  # rows with a usable proposal (keep = review: a person says yes or no), candidates included
    unanswered: int  # rows the model gave nothing usable for (a to-do list: every row without a candidate)
    refused: int  # labels refused as proposals (label_problem): their rows are left for the reviewer
    quarantine: Path  # where refused labels and malformed replies are kept
    llm: dict[str, Any]  # the model's report ({} for a to-do list, which asks none)
    candidates: int = 0  # rows proposing a name the graph has as an alias in the language (skos:altLabel)
    asked_model: bool = True  # False: a to-do list for translators (`translate --list`)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "out": str(self.out), "quarantine": str(self.quarantine)}


@dataclass(frozen=True)
class TranslationApplied:
    """What ``apply_translations`` loaded."""

    domain: str
    language: str
    graph: str
    review_file: Path
    loaded: dict[str, int]  # per kind: rows kept
    skipped: int  # rows with keep other than yes (unreviewed ones included)
    unreviewed: int  # rows still saying keep = review: not applied until a person says yes
    quads: int
    build_id: str

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "review_file": str(self.review_file)}


# ---------------------------------------------------------------- what lacks a label


def lacking_items(snapshot: Snapshot, language: str, max_chars: int = MAX_LITERAL_CHARS) -> list[Item]:
    """Everything the dialogue stages would name and cannot in ``language``: entities of the domain's facts,
    relations, types, and literal values of at most ``max_chars`` written in another script, each once; and
    those named in the language only by an alias (a ``skos:altLabel``: the chain's ``alias`` step), with that
    alias as their ``candidate`` — an alias is often not the name a person would choose."""
    tables, schema = snapshot.tables(), snapshot.schema
    chosen = language_labels(tables.labels, language, snapshot.same_as_pairs())
    alias = {iri: chosen.labels[iri] for iri, step in chosen.fell_back.items() if step == "alias"}
    names = tables.label_map(schema.language)
    facts = tables.domain_facts()
    relations = set(tables.relations["iri"].to_list())
    classes = {t.iri: t for t in schema.types.values()}
    used = set(facts["s"].to_list()) | set(facts.filter(pl.col("o_is_entity"))["o"].to_list())
    types = dict(zip(tables.types["iri"].to_list(), tables.types["class"].to_list()))
    wanted = chosen.lacking | set(alias)
    lacking = sorted((used - relations - set(classes)) & wanted, key=lambda iri: (names[iri], iri))
    tag_of = {
        (iri, label): lang
        for iri, label, lang in tables.labels.filter(pl.col("iri").is_in(lacking))
        .select("iri", "label", "lang")
        .iter_rows()
    }
    items = []
    for iri in lacking:
        kind_of = classes.get(types.get(iri, ""))
        items.append(
            Item(
                "entity",
                iri,
                tag_of.get((iri, names[iri]), ""),
                names[iri],
                kind_of.en if kind_of and fits_script(kind_of.en, "en") else "",
                alias.get(iri, ""),
            )
        )
    named = []
    for iri, zh, en in tables.relations.select("iri", "zh", "en").iter_rows():
        in_script = any(name and fits_script(name, language) for name in (zh, en))  # 2018-11-5 is English too
        if not in_script and (iri not in chosen.labels or iri in alias):
            named.append(Item("relation", iri, schema.language, zh or en or iri, candidate=alias.get(iri, "")))
    for iri, entity_type in classes.items():
        own = entity_type.en if language.startswith("en") else entity_type.zh
        if not fits_script(own, language) and (iri not in chosen.labels or iri in alias):
            source = entity_type.zh or entity_type.id
            named.append(Item("type", iri, schema.language, source, candidate=alias.get(iri, "")))
    items += sorted(named, key=lambda item: (item.kind != "relation", item.source, item.iri))  # by name, as rows are
    items += _lacking_literals(facts, tables, language, max_chars)
    return items


def _lacking_literals(facts: pl.DataFrame, tables: GraphTables, language: str, max_chars: int) -> list[Item]:
    """Short values an export in ``language`` would write with no form in it: those of another script whose
    fact has no form paired with it (:func:`literal_forms`, the rule every export follows)."""
    literals = facts.filter(~pl.col("o_is_entity"), pl.col("o_lang") != "")
    other = literals.filter(~in_language(pl.col("o_lang"), language), pl.col("o").str.len_chars() <= max_chars)
    other = other.join(literal_forms(facts, language), on=["s", "p", "o"], how="anti")
    relation_names = dict(zip(tables.relations["iri"].to_list(), tables.relations["en"].to_list()))
    seen: dict[str, Item] = {}
    for value, lang, predicate in other.select("o", "o_lang", "p").sort("o", "p").iter_rows():
        if value not in seen and not fits_script(value, language):
            seen[value] = Item("literal", "", lang, value, relation_names.get(predicate) or "")
    return list(seen.values())


# ---------------------------------------------------------------- asking the model


def translation_messages(items: list[tuple[str, Item]], language: str) -> list[dict[str, str]]:
    name = LANGUAGE_NAMES.get(language.split("-")[0], language)
    listed = [
        {"id": key, "text": item.source, "kind": item.kind, **({"context": item.type_hint} if item.type_hint else {})}
        for key, item in items
    ]
    return [
        {
            "role": "system",
            "content": "You translate the names in a knowledge graph built for a dialogue "
            "dataset. Answer with JSON only.",
        },
        {
            "role": "user",
            "content": (
                f"Give each item's name in {name} (language tag {language}). Entities: the established name where "
                "one exists (a film's official title, the usual romanisation of a person's name), else a faithful "
                "translation; relations: a short lower-case predicate name; types: a singular noun; literals: a "
                'short translation of the value. Reply as {"t1": "...", ...} with an entry for every id.\n'
                + json.dumps(listed, ensure_ascii=False)
            ),
        },
    ]


def names_check(ids: set[str]) -> Callable[[str], dict[str, str]]:
    def check(content: str) -> dict[str, str]:
        value = json_reply(content)
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise BadReply('expected {"t1": "name", ...}')
        unknown = sorted(set(value) - ids)
        if unknown:
            raise BadReply(f"ids that were not offered: {', '.join(unknown[:5])}")
        return {key: text.strip() for key, text in value.items()}

    return check


def label_problem(label: str) -> str | None:
    """Why ``label`` cannot be a name: too long, or holding a character no name holds (see the module's
    docstring); None when it can."""
    if len(label) > MAX_LABEL_CHARS:
        return f"is {len(label):,} characters long, more than {MAX_LABEL_CHARS}"
    bad = _NOT_IN_LABEL.search(label)
    if bad:
        char = bad.group()
        name = unicodedata.name(char, "a control character" if char <= "\x9f" else "a lone surrogate")
        return f"holds U+{ord(char):04X} ({name.lower()}) at character {bad.start() + 1}"
    return None


def _answers(client: LLMClient, items: list[Item], language: str) -> Iterator[tuple[Item, str, str]]:
    """Each item with the model's name for it and a note ("" when the name is usable). A name that
    :func:`label_problem` refuses is quarantined and comes back empty, with a note starting :data:`REFUSED`."""
    for start in range(0, len(items), BATCH):
        batch = [(f"t{i + 1}", item) for i, item in enumerate(items[start : start + BATCH])]
        reply = client.ask(
            translation_messages(batch, language),
            names_check({k for k, _ in batch}),
            f"translate items {start + 1}-{start + len(batch)} into {language}",
        )
        for key, item in batch:
            name = (reply or {}).get(key, "")
            problem = label_problem(name)
            if problem:
                client.reject(
                    f"translate {item.kind} {item.iri or item.source!r}", f"label refused: {problem}", ascii(name)
                )
                yield item, "", f"{REFUSED}the model's label {problem}; write one or leave keep empty"
            elif reply is None:
                yield item, "", "the model's reply was malformed (quarantined): write a label or leave keep empty"
            elif not name:
                yield item, "", "the model gave no name: write one or leave keep empty"
            elif not fits_script(name, language):
                yield item, name, f"not written in {language}'s script: check it"
            else:
                yield item, name, ""


def propose_translations(
    snapshot: Snapshot,
    language: str,
    out: Path | str,
    llm: LLMSettings | None,
    max_chars: int = MAX_LITERAL_CHARS,
    limit: int | None = None,
) -> TranslationProposals:
    """Write the review file ``out`` (TSV, :data:`COLUMNS`) for what ``snapshot``'s build lacks in ``language``: labels a
    model proposes (``llm``), or, with ``llm`` None, a to-do list for translators (DuRecDial 2.0 was translated
    by people) with no model asked. Either way a name the graph has as an alias in the language comes
    pre-filled as a proposal (``keep`` = ``review``), never applied before a person says yes. ``limit`` asks
    the model for at most that many items (the rest are left for a later run)."""
    language = check_lang(language)
    paths = snapshot.paths
    target = paths.output(out)
    items = lacking_items(snapshot, language, max_chars)
    counts = {kind: sum(1 for item in items if item.kind == kind) for kind in KINDS}
    open_items = [item for item in items if not item.candidate]
    quarantine = Quarantine(paths.quarantine / "translate-llm.jsonl")
    answers: dict[Item, tuple[str, str]] = {}
    report: dict[str, Any] = {}
    if llm is None:
        answers = {item: ("", f"{TODO}write its name in {language}, then set keep to yes") for item in open_items}
    else:
        asked = open_items[:limit] if limit is not None else open_items
        client = llm.client_at(paths.raw / "llm-cache", quarantine)
        try:
            answers = {item: (name, note) for item, name, note in _answers(client, asked, language)}
        finally:
            client.close()
        report = {**client.stats().as_dict(), "left_for_later": len(open_items) - len(asked)}
    rows = [_row(item, language, answers) for item in items if item.candidate or item in answers]
    with target.open() as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([spreadsheet_cell(row[column]) for column in COLUMNS] for row in rows)
    notes = [row["note"] for row in rows]
    return TranslationProposals(
        paths.domain,
        language,
        target.path,
        counts,
        sum(row["keep"] == REVIEW for row in rows),
        sum(not row["label"] and not note.startswith(REFUSED) for row, note in zip(rows, notes)),
        sum(note.startswith(REFUSED) for note in notes),
        quarantine.path,
        report,
        sum(bool(item.candidate) for item in items),
        llm is not None,
    )


def _row(item: Item, language: str, answers: dict[Item, tuple[str, str]]) -> dict[str, str]:
    """The review row of ``item``: its alias proposed, the model's answer, or a line for a translator to fill."""
    if item.candidate:
        name, note = item.candidate, f"the graph's {language} alias: keep = yes makes it the name (edit it if not)"
    else:
        name, note = answers[item]
    return {
        "source": item.source,
        "iri": item.iri,
        "kind": item.kind,
        "keep": REVIEW if item.candidate or (name and not note) else "",  # a proposal: a person says yes or no
        "label": name,
        "source_language": item.source_language,
        "language": language,
        "note": note,
    }


# ---------------------------------------------------------------- applying the reviewed file


@dataclass(frozen=True)
class Row:
    line: int
    kind: str
    iri: str
    source: str
    label: str


@dataclass(frozen=True)
class Review:
    """A review file as read: the rows to apply, and how many were not (still awaiting review, or not kept)."""

    rows: list[Row]  # keep = yes
    skipped: int  # any other keep
    unreviewed: int  # of those, keep = review


def read_review(path: Path, language: str) -> Review:
    """The rows of a review file in ``language``; InputError naming the file and line of the first problem
    (with how many lines have one) otherwise. Only rows a person set to ``yes`` (:data:`KEEP`) are kept, and
    a file with none while some still say ``review`` is refused."""
    if not path.is_file():
        raise InputError(f"{path}: no such review file")
    rows, skipped, unreviewed, problems = [], 0, 0, []
    header: list[str] | None = None
    at: dict[str, int] = {}
    # utf-8-sig: the byte-order mark a spreadsheet writes is not part of the first column's name; surrogateescape:
    # a byte that is not UTF-8 is read as a lone surrogate, so the row holding it can be named
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        for line, cells in _records(path, handle):
            bad = _bad_byte(cells)
            if bad:
                problems.append(f"line {line}: {bad}")
                if header is None:
                    break
                continue
            if header is None:
                header = _review_header(path, cells)
                at = {name: header.index(name) for name in COLUMNS}
                continue
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                problems.append(f"line {line}: {len(cells)} cells, the header has {len(header)}")
                continue
            value = {name: spreadsheet_text(cells[i]).strip() for name, i in at.items()}
            keep = value["keep"].lower()
            if keep not in KEEP:
                skipped += 1
                unreviewed += keep == REVIEW
                continue
            problem = _row_problem(value, language)
            if problem:
                problems.append(f"line {line}: {problem}")
                continue
            rows.append(Row(line, value["kind"], value["iri"], value["source"], value["label"]))
    if problems:
        more = f" ({len(problems)} lines have a problem)" if len(problems) > 1 else ""
        raise InputError(f"{path}: {problems[0]}{more}; nothing was loaded")
    if header is None:
        _review_header(path, [])
    if not rows and unreviewed:  # applying would replace the language's graph with nothing
        raise InputError(
            f"{path}: no row says keep = yes ({unreviewed} still say {REVIEW}: a person sets keep to yes on each "
            "label to apply, or no); nothing was loaded"
        )
    if not rows and skipped:  # a to-do list nobody has filled in yet
        raise InputError(
            f"{path}: no row says keep = yes ({skipped} rows: fill in the label of each row you translate and set "
            "its keep to yes); nothing was loaded"
        )
    return Review(rows, skipped, unreviewed)


def _records(path: Path, handle: IO[str]) -> Iterator[tuple[int, list[str]]]:
    """Each TSV record with the line it starts on; a record csv cannot read (a cell over its limit) is an
    InputError naming the line."""
    reader = csv.reader(handle, delimiter="\t")
    start = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            limit = csv.field_size_limit()
            problem = f"a cell longer than {limit:,} characters" if "field limit" in str(exc) else str(exc)
            raise InputError(f"{path}: line {reader.line_num}: {problem}; nothing was loaded") from None
        yield start, cells
        start = reader.line_num + 1


def _bad_byte(cells: list[str]) -> str | None:
    for cell in cells:
        escaped = _ESCAPED_BYTE.search(cell)
        if escaped:
            return f"byte 0x{ord(escaped.group()) - 0xDC00:02X} is not UTF-8 (save the file as UTF-8)"
    return None


def _review_header(path: Path, cells: list[str]) -> list[str]:
    missing = [c for c in COLUMNS if c not in cells]
    if missing:
        raise InputError(
            f"{path}: line 1: the header lacks {', '.join(missing)} (a review file from "
            "`kgforge translate` has: " + " ".join(COLUMNS) + ")"
        )
    return cells


def _row_problem(value: dict[str, str], language: str) -> str | None:
    if value["kind"] not in KINDS:
        return f"kind {value['kind']!r} is none of {', '.join(KINDS)}"
    if value["language"] != language:
        return f"language {value['language']!r}, but this file is applied as {language!r}"
    if not value["label"]:
        return "keep is yes but the label is empty"
    if value["kind"] == "literal" and not value["source"]:
        return "a literal row needs its source value"
    if value["kind"] != "literal" and not value["iri"]:
        return f"an {value['kind']} row needs its IRI"
    problem = label_problem(value["label"])
    return f"the label {problem}" if problem else None


def apply_translations(
    domain: str, review_file: Path | str, language: str, workdir: Path | str | None = None
) -> TranslationApplied:
    """Load the kept rows of ``review_file`` as the named graph ``graph/translated/<language>`` (kind
    ``translated``) of the published build; InputError for a row naming what the graph does not hold."""
    language = check_lang(language)
    paths = domain_paths(domain, workdir)
    review_file = Path(review_file)
    review = read_review(review_file, language)
    rows = review.rows
    graph = graph_iri("translated", language)
    quads_file = f"quads/translated-{language}.nq"
    with extending(
        paths
    ) as current:  # a writer from start to end: the labels are checked against the build they extend
        tables = current.tables()
        known = set(tables.labels["iri"].to_list()) | set(tables.relations["iri"].to_list())
        wanted = [row.source for row in rows if row.kind == "literal"]
        stated = pl.col("o").str.strip_chars()  # as the review file is read back: a value's cells are stripped
        stating = (
            tables.domain_facts()
            .filter(~pl.col("o_is_entity"), stated.is_in(wanted))
            .select(stated, "s", "p")
            .unique()
            .sort("o", "s", "p")
        )
        facts_of: dict[str, list[tuple[str, str]]] = {}
        for value, s, p in stating.iter_rows():
            facts_of.setdefault(value, []).append((s, p))
        unknown = [row for row in rows if row.kind != "literal" and row.iri not in known]
        if unknown:
            raise InputError(
                f"{review_file}: line {unknown[0].line}: {unknown[0].iri} is not in {paths.domain}'s "
                f"published graph ({len(unknown)} such rows; made on another domain?); nothing was loaded"
            )
        with staged_build(paths) as staging:
            with QuadWriter(staging / quads_file, graph) as writer:
                for row in rows:
                    if row.kind == "literal":
                        if row.source not in facts_of:
                            raise InputError(
                                f"{review_file}: line {row.line}: no fact of {paths.domain} has the "
                                f"value {row.source!r}; nothing was loaded"
                            )
                        for s, p in facts_of[row.source]:
                            writer.literal(s, p, row.label, lang=language)
                    else:
                        writer.literal(row.iri, RDFS_LABEL, row.label, lang=language)
            entry = GraphEntry(
                quads_file=quads_file,
                quads=writer.count,
                kind="translated",
                details={
                    "provenance": "translated",
                    "language": language,
                    "review_file": str(review_file.resolve()),
                    "review_sha256": sha256_file(review_file),
                    "rows": len(rows),
                },
            )
            summary = add_graphs(
                current,
                staging,
                {graph: entry},
                {f"translate-{language}": {"graph": graph, "rows": len(rows), "quads": writer.count}},
            )
    loaded = {kind: sum(1 for row in rows if row.kind == kind) for kind in KINDS}
    return TranslationApplied(
        paths.domain,
        language,
        graph,
        review_file,
        loaded,
        review.skipped,
        review.unreviewed,
        writer.count,
        summary.build_id,
    )
