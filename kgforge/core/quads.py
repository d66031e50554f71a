"""Streaming N-Quads writer: the normalised, rebuildable form of every source.

Each importer writes one file of quads into one named graph. Lines are escaped here and only
here, and exact duplicate quads are dropped, so counts in the manifest are distinct quads.

Every term is checked here by the store's own rules before it is written (pyoxigraph's ``NamedNode`` and
``Literal`` constructors, the validators its N-Quads parser uses), so nothing a writer takes can fail the
load later. Producers call :func:`check_iri` and :func:`literal_term` where they know the record's
location and quarantine what these refuse; the writer refuses whatever still reaches it to its
``on_reject`` callback (the source's quarantine) and writes the rest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import pyoxigraph as ox

from kgforge.core.files import AtomicFile
from kgforge.core.vocab import XSD as XSD  # re-exported: the sources import it from here

_LITERAL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
MAX_TERM_BYTES = 8 * 2**20
"""The largest IRI or literal written, in UTF-8 bytes as it stands in the N-Quads line (escapes included):
half of the 16 MiB buffer Oxigraph's parser gives one term, beyond which a load fails with MemoryError."""
_CACHE_LIMIT = 1 << 20
_valid_iris: set[str] = set()
_valid_langs: set[str] = set()

Rejecter = Callable[[str, str], None]
"""``on_reject(reason, quad)``: where a writer sends a quad it refuses."""


def check_iri(iri: str) -> str:
    """``iri`` unchanged, or ValueError when the store's parser would refuse it (Oxigraph's IRI rules)."""
    if iri in _valid_iris:
        return iri
    try:
        ox.NamedNode(iri)
    except ValueError as exc:
        raise ValueError(f"not a valid absolute IRI: {_clip(iri)} ({exc})") from None
    _check_size(iri, "IRI")
    _remember(_valid_iris, iri)
    return iri


def check_lang(lang: str) -> str:
    """``lang`` unchanged, or ValueError unless it is a well-formed BCP 47 tag (as the store requires)."""
    if lang in _valid_langs:
        return lang
    try:
        ox.Literal("", language=lang)
    except ValueError as exc:
        raise ValueError(f"not a valid language tag: {_clip(lang)} ({exc})") from None
    _remember(_valid_langs, lang)
    return lang


def literal_term(value: str, lang: str | None = None, datatype: str | None = None) -> str:
    """A literal in N-Quads syntax; ValueError for a lone surrogate, a bad tag or datatype, or a value
    over ``MAX_TERM_BYTES``."""
    if not value.isascii():
        value.encode("utf-8")  # lone surrogates from bad JSON raise UnicodeEncodeError here
    if '"' in value or "\\" in value or "\n" in value or "\r" in value:  # rare: translate() is slow
        value = value.translate(_LITERAL_ESCAPES)
    _check_size(value, "literal")
    body = '"' + value + '"'
    if lang:
        return f"{body}@{check_lang(lang)}"
    if datatype and datatype != XSD + "string":
        return f"{body}^^<{check_iri(datatype)}>"
    return body


def _check_size(text: str, what: str) -> None:
    if len(text) * 4 > MAX_TERM_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_TERM_BYTES:
        raise ValueError(
            f"{what} of {len(text.encode('utf-8', 'surrogatepass')):,} bytes is over the "
            f"{MAX_TERM_BYTES // 2**20} MiB limit on one term"
        )


def _remember(known: set[str], item: str) -> None:
    if len(known) >= _CACHE_LIMIT:
        known.clear()
    known.add(item)


def _clip(text: str, keep: int = 200) -> str:
    return repr(text if len(text) <= keep else text[:keep] + "…")


class QuadWriter:
    """Writes distinct quads of one named graph to ``path``; the file appears only on success.

    A quad with a term the store would refuse is not written: it goes to ``on_reject(reason, quad)``
    when one is given (an importer's quarantine), and is a ValueError otherwise."""

    def __init__(self, path: Path, graph: str, on_reject: Rejecter | None = None) -> None:
        self.path = Path(path)
        self.graph = f"<{check_iri(graph)}>"
        self.graph_iri = graph
        self.on_reject = on_reject
        self._file = AtomicFile(self.path, buffering=1 << 20)
        self._out = self._file.handle
        self._seen: set[bytes] = set()  # 128-bit digests: a collision (which would drop a quad) is negligible
        self._digest = hashlib.sha256()
        self.count = 0
        self.refused = 0

    def _emit(self, line: str) -> bool:
        data = line.encode("utf-8")
        key = hashlib.blake2b(data, digest_size=16).digest()
        if key in self._seen:
            return False
        self._seen.add(key)
        self._out.write(line)
        self._digest.update(data)
        self.count += 1
        return True

    def _refuse(self, error: ValueError, subject: str, predicate: str, obj: str) -> bool:
        if self.on_reject is None:
            raise error
        self.refused += 1
        self.on_reject(str(error), f"{_clip(subject)} {_clip(predicate)} {_clip(obj, 1000)}")
        return False

    def iri(self, subject: str, predicate: str, obj: str) -> bool:
        """Add ``subject predicate obj`` where all three are IRIs; False if a duplicate or refused."""
        try:
            line = f"<{check_iri(subject)}> <{check_iri(predicate)}> <{check_iri(obj)}> {self.graph} .\n"
        except ValueError as exc:
            return self._refuse(exc, subject, predicate, obj)
        return self._emit(line)

    def literal(
        self,
        subject: str,
        predicate: str,
        value: str,
        lang: str | None = None,
        datatype: str | None = None,
    ) -> bool:
        """Add ``subject predicate "value"`` (language-tagged or typed); False if a duplicate or refused."""
        try:
            term = literal_term(value, lang, datatype)
            line = f"<{check_iri(subject)}> <{check_iri(predicate)}> {term} {self.graph} .\n"
        except ValueError as exc:
            return self._refuse(exc, subject, predicate, value)
        return self._emit(line)

    def term(self, subject: str, predicate: str, obj_term: str) -> bool:
        """Add a quad whose object is already an N-Quads term (``<iri>`` or from ``literal_term``)."""
        try:
            if obj_term.startswith("<"):
                check_iri(obj_term[1:-1])
            else:
                _check_size(obj_term, "literal")
            line = f"<{check_iri(subject)}> <{check_iri(predicate)}> {obj_term} {self.graph} .\n"
        except ValueError as exc:
            return self._refuse(exc, subject, predicate, obj_term)
        return self._emit(line)

    @property
    def sha256(self) -> str:
        """Checksum of the bytes written so far (the whole file once committed)."""
        return self._digest.hexdigest()

    def commit(self) -> int:
        self._file.commit()
        return self.count

    def discard(self) -> None:
        self._file.discard()

    def __enter__(self) -> QuadWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
