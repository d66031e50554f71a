"""Streaming N-Quads writer: the normalised, rebuildable form of every source.

Each importer writes one file of quads into one named graph. Lines are escaped here and only
here, and exact duplicate quads are dropped, so counts in the manifest are distinct quads.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from types import TracebackType

_LITERAL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})
_BAD_IRI_CHARS = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_LANG_TAG = re.compile(r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$")
XSD = "http://www.w3.org/2001/XMLSchema#"


def check_iri(iri: str) -> str:
    """Raise ValueError unless ``iri`` can stand in an IRIREF unchanged."""
    if ":" not in iri or _BAD_IRI_CHARS.search(iri):
        raise ValueError(f"not a valid absolute IRI: {iri!r}")
    return iri


def check_lang(lang: str) -> str:
    if not _LANG_TAG.match(lang):
        raise ValueError(f"not a valid language tag: {lang!r}")
    return lang


def literal_term(value: str, lang: str | None = None, datatype: str | None = None) -> str:
    """A literal in N-Quads syntax."""
    if not value.isascii():
        value.encode("utf-8")  # lone surrogates from bad JSON raise UnicodeEncodeError here
    if '"' in value or "\\" in value or "\n" in value or "\r" in value:  # rare: translate() is slow
        value = value.translate(_LITERAL_ESCAPES)
    body = '"' + value + '"'
    if lang:
        return f"{body}@{check_lang(lang)}"
    if datatype and datatype != XSD + "string":
        return f"{body}^^<{check_iri(datatype)}>"
    return body


class QuadWriter:
    """Writes distinct quads of one named graph to ``path``; the file appears only on success."""

    def __init__(self, path: Path, graph: str) -> None:
        self.path = Path(path)
        self.graph = f"<{check_iri(graph)}>"
        self.graph_iri = graph
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + f".part{os.getpid()}")
        self._out = open(self._tmp, "w", encoding="utf-8", newline="\n")
        self._seen: set[int] = set()
        self._digest = hashlib.sha256()
        self.count = 0

    def _emit(self, line: str) -> bool:
        key = hash(line)
        if key in self._seen:
            return False
        self._seen.add(key)
        self._out.write(line)
        self._digest.update(line.encode("utf-8"))
        self.count += 1
        return True

    def iri(self, subject: str, predicate: str, obj: str) -> bool:
        """Add ``subject predicate obj`` where all three are IRIs; False if it was a duplicate."""
        return self._emit(f"<{subject}> <{predicate}> <{obj}> {self.graph} .\n")

    def literal(
        self, subject: str, predicate: str, value: str,
        lang: str | None = None, datatype: str | None = None,
    ) -> bool:
        """Add ``subject predicate "value"`` (language-tagged or typed); False if a duplicate."""
        return self._emit(f"<{subject}> <{predicate}> {literal_term(value, lang, datatype)} {self.graph} .\n")

    def term(self, subject: str, predicate: str, obj_term: str) -> bool:
        """Add a quad whose object is already an N-Quads term (``<iri>`` or from ``literal_term``)."""
        return self._emit(f"<{subject}> <{predicate}> {obj_term} {self.graph} .\n")

    @property
    def sha256(self) -> str:
        """Checksum of the bytes written so far (the whole file once committed)."""
        return self._digest.hexdigest()

    def commit(self) -> int:
        self._out.close()
        os.replace(self._tmp, self.path)
        return self.count

    def discard(self) -> None:
        self._out.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> "QuadWriter":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
