"""Small valid inputs for every reader, where their records lie, and running an importer in this process.

A :class:`Sample` is built from the real sample data (``../shared/data``) where it fits, cut down to a few
records and laid out so that each record's bytes are known; damage tests cut or flip those bytes and compare
what the reader keeps with what it keeps from the clean prefix of the records before the damage.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyoxigraph as ox

from kgforge.core.errors import InputError
from kgforge.core.quads import QuadWriter
from kgforge.core.quarantine import Quarantine
from kgforge.core.schema import load_schema
from kgforge.core.vocab import RDFS_LABEL, SKOS_ALT_LABEL
from kgforge.demo.wikidata_dump import write_demo_dump
from kgforge.sources.importer import ImportContext, importer_for
from kgforge.sources.wikidata.entity import SCHEMA_DESCRIPTION
from tests.conftest import shared_file

SCHEMAS = {"kdconv": "travel", "kdconv-dialogues": "travel", "duconv": "duconv"}  # the rest: film
NAME_KEYED = {"kdconv", "kdconv-dialogues", "duconv"}
TERM_PREDICATES = {RDFS_LABEL, SKOS_ALT_LABEL, SCHEMA_DESCRIPTION}
GRAPH = "https://kgforge.org/graph/test/damaged"


@dataclass(frozen=True)
class Sample:
    """A valid input: ``head``, then ``records`` joined by ``sep``, then ``tail``.

    ``lookahead`` is how many bytes after a record its reader reads to know that the record ended (the
    ``data:`` that opens the next Turtle entity block); damage there may cost the record too.
    """

    kind: str
    name: str
    head: bytes
    records: tuple[bytes, ...]
    sep: bytes = b""
    tail: bytes = b""
    lookahead: int = 0

    @property
    def data(self) -> bytes:
        return self.prefix(len(self.records))

    def prefix(self, count: int) -> bytes:
        """The same input with only its first ``count`` records."""
        return self.head + self.sep.join(self.records[:count]) + self.tail

    def spans(self) -> list[tuple[int, int]]:
        """``(start, end)`` byte offsets of each record in :attr:`data`."""
        spans, position = [], len(self.head)
        for record in self.records:
            spans.append((position, position + len(record)))
            position += len(record) + len(self.sep)
        return spans

    def before(self, position: int) -> int:
        """How many records lie wholly before ``position`` (their lookahead included)."""
        return sum(end + self.lookahead <= position for _, end in self.spans())

    def inside(self, position: int) -> bool:
        """Whether ``position`` falls strictly inside a record (a cut there leaves it broken)."""
        return any(start < position < end for start, end in self.spans())


@dataclass
class Outcome:
    """What an importer made of one input: quads, counts, quarantined records, or the InputError."""

    kind: str
    quads: set[str] = field(default_factory=set)
    counts: Counter[str] = field(default_factory=Counter)
    quarantined: list[dict] = field(default_factory=list)
    error: str | None = None

    def _parsed(self) -> list[ox.Quad]:
        """The quads, each parsed on its own: one the store would refuse (validating what importers write
        is the writer's job, tested with it) does not hide the others."""
        parsed = []
        for line in sorted(self.quads):
            try:
                parsed += ox.parse(line.encode(), format=ox.RdfFormat.N_QUADS)
            except SyntaxError:
                continue
        return parsed

    def labels(self) -> set[str]:
        return {q.object.value for q in self._parsed() if q.predicate.value == RDFS_LABEL}

    def named_facts(self) -> set[tuple[str, str, str]]:
        """Facts with entities by their names: the same whether a tail was written as an entity or a literal."""
        quads = self._parsed()
        names = {q.subject.value: q.object.value for q in quads if q.predicate.value == RDFS_LABEL}
        return {
            (names.get(q.subject.value, q.subject.value), q.predicate.value, names.get(q.object.value, q.object.value))
            for q in quads
        }

    @property
    def facts(self) -> set:
        """What every record contributes on its own, whatever the records around it: named facts for the
        name-keyed corpora, quads without the terms (chosen per subject) for truthy N-Triples, else quads."""
        if self.kind in NAME_KEYED:
            return self.named_facts()
        if self.kind == "wikidata-nt":
            return {str(q) for q in self._parsed() if q.predicate.value not in TERM_PREDICATES}
        return set(self.quads)


def read_source(kind: str, data: bytes, folder: Path, name: str | None = None, **options) -> Outcome:
    """Run the ``kind`` importer in this process on ``data`` (written to ``folder/name``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"input.{kind}")
    path.write_bytes(data)
    schema = load_schema(SCHEMAS.get(kind, "film"))
    quarantine = Quarantine(folder / "quarantine.jsonl", echo=False)
    outcome = Outcome(kind)
    with QuadWriter(folder / "out.nq", GRAPH) as writer:
        ctx = ImportContext(
            schema=schema, path=path, writer=writer, quarantine=quarantine, options=options, workdir=folder / "work"
        )
        try:
            importer_for(kind)(ctx)
        except InputError as exc:
            outcome.error = str(exc)
        finally:
            quarantine.close()
    outcome.counts = ctx.counts
    outcome.quads = set((folder / "out.nq").read_text(encoding="utf-8").splitlines())
    if quarantine.path.exists():
        outcome.quarantined = [json.loads(line) for line in quarantine.path.read_text(encoding="utf-8").splitlines()]
    return outcome


def read_sample(sample: Sample, data: bytes, folder: Path) -> Outcome:
    return read_source(sample.kind, data, folder, sample.name)


# ---------------------------------------------------------------- samples, from the real data where it fits


def kdconv_kb() -> Sample:
    """Six entities of the real KdConv travel KB (four facts each, the long Information text among them)."""
    kb = json.loads(shared_file("kdconv/travel/kb_travel.json").read_text(encoding="utf-8"))
    members = [
        f"  {json.dumps(head, ensure_ascii=False)}: {json.dumps(facts[:4], ensure_ascii=False)}".encode()
        for head, facts in list(kb.items())[:6]
    ]
    return Sample("kdconv", "kb_travel.json", b"{\n", tuple(members), b",\n", b"\n}\n")


def kdconv_dialogues() -> Sample:
    """Three real KdConv travel dialogues, four messages each."""
    dialogues = json.loads(shared_file("kdconv/travel/dev.json").read_text(encoding="utf-8"))[:3]
    members = [("  " + json.dumps(dict(d, messages=d["messages"][:4]), ensure_ascii=False)).encode() for d in dialogues]
    return Sample("kdconv-dialogues", "dev.json", b"[\n", tuple(members), b",\n", b"\n]\n")


def json_lines(kind: str, relative: str, count: int, name: str) -> Sample:
    lines = shared_file(relative).read_bytes().split(b"\n")[:count]
    return Sample(kind, name, b"", tuple(line + b"\n" for line in lines))


def duconv_sessions() -> Sample:
    return json_lines("duconv", "duconv/dev.head250.jsonl", 3, "dev.txt")


def durecdial_sessions() -> Sample:
    """Real DuRecDial sessions, each with its ``user_profile``: the input of ``goals --profiles``."""
    return json_lines("durecdial", "durecdial/lic2020_baseline_resource_dev.txt", 3, "profiles.jsonl")


def wikidata_dump(folder: Path) -> Sample:
    """The demo dump (eleven film entities with zh and en labels) in the ``latest-all.json`` framing."""
    lines = write_demo_dump(folder / "demo.json").read_bytes().splitlines(keepends=True)
    return Sample("wikidata", "dump.json", lines[0], tuple(lines[1:-1]), tail=lines[-1])


def truthy_nt() -> Sample:
    """The real truthy Q8 sample: its first statements and its zh/en label, alias and description lines."""
    lines = shared_file("wikidata_rdf/Q8_happiness.truthy.nt").read_bytes().splitlines(keepends=True)
    wanted = [line for n, line in enumerate(lines) if n < 24 or any(tag in line for tag in (b'"@en ', b'"@zh'))]
    return Sample("wikidata-nt", "truthy.nt", b"", tuple(wanted[:48]))


def wikidata_ttl() -> Sample:
    """The real Q42 dump's prefixes, then entity blocks made of the real Q8 truthy lines (four entities,
    each under its own id), in the full dump's shape: a ``data:Q…`` block opens each entity."""
    ttl = shared_file("wikidata_rdf/Q42.all.ttl").read_bytes().splitlines(keepends=True)
    header = b"".join(line for line in ttl if line.startswith(b"@prefix")) + b"\n"
    nt = shared_file("wikidata_rdf/Q8_happiness.truthy.nt").read_bytes().splitlines(keepends=True)
    statements = [line for line in nt if b"/prop/direct/" in line or b'"@zh' in line or b'"@en ' in line]
    blocks = []
    for n, qid in enumerate([b"Q8", b"Q9", b"Q10", b"Q11"]):
        lines = [line.replace(b"/entity/Q8>", b"/entity/" + qid + b">", 1) for line in statements[n * 6 : n * 6 + 6]]
        blocks.append(
            b"data:" + qid + b" a schema:Dataset ;\n\tschema:about wd:" + qid + b" .\n\n" + b"".join(lines) + b"\n"
        )
    return Sample("wikidata-ttl", "all.ttl", header, tuple(blocks), lookahead=len(b"data:"))


def xlore_concepts() -> Sample:
    """The real DBpedia–XLORE concept mapping (tab-separated), first twelve lines."""
    lines = shared_file("xlore/dbpedia_xlore_concept.dat").read_bytes().splitlines(keepends=True)[:12]
    return Sample("xlore", "dbpedia_xlore_concept.dat", b"", tuple(lines))


XLORE_HEADER = (
    b"@base <http://xlore.org/instance/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
    b"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
)


def xlore_instances() -> Sample:
    """An ``xlore.instance.list.ttl`` in the documented line shapes (relative ids, ``@baidu``/``@enwiki`` tags),
    with the real zh and en concept labels of the mapping sample."""
    mapping = xlore_concepts().records
    lines = []
    for n, line in enumerate(mapping[:8]):
        fields = line.decode().rstrip("\n").split("\t")
        labels = [f for f in fields[2:] if f.endswith("@xlore")]
        for label in labels:
            text, lang, _ = label.split("@")
            lines.append(f"<bdi{n}> rdfs:label {json.dumps(text, ensure_ascii=False)}@{lang} .\n".encode())
        lines.append(f"<bdi{n}> owl:InstanceOf <{fields[1]}> .\n".encode())
        lines.append(f'<bdi{n}> rdfs:comment "{fields[0]}"@baidu .\n'.encode())
    return Sample("xlore", "xlore.instance.list.ttl", XLORE_HEADER, tuple(lines))


BUILD_SAMPLES: dict[str, Callable[..., Sample]] = {
    "kdconv": kdconv_kb,
    "kdconv-dialogues": kdconv_dialogues,
    "duconv": duconv_sessions,
    "wikidata-nt": truthy_nt,
    "wikidata-ttl": wikidata_ttl,
    "xlore-concepts": xlore_concepts,
    "xlore-instances": xlore_instances,
}
