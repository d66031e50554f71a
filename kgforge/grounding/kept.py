"""A build's grounding index, kept beside the build: made the first time the build is grounded, read back after.

Making the index of a large graph is most of a grounding run's serial start (at 144k entities: the tables read,
each subject's rows gathered, jieba given 144k names, the word-valued literals counted: about eleven seconds);
reading it back takes under two. The file, ``grounding-index.marshal`` in the build's folder, holds
:meth:`GroundingIndex.state` with a key; it goes with the build when the build is pruned.

- **The key** is a digest of what the index is made from besides the build's files, which never change once
  published: the build's schema, the source of the modules that make the index (so that no change of code
  reads an index made by other code), jieba's version and the marshal format. A file with another key is
  made again, silently: that is what a cache is for.
- **marshal**, not pickle: the state is plain data, and marshal reads plain data only (it never calls into code
  the file names), about twice as fast as pickle writes it.
- **Nothing depends on it.** A file that cannot be read (damaged, cut short) is made again, with a warning; one
  that cannot be written (a read-only workdir) leaves the index made in memory, with a warning. It is written
  whole under another name and then renamed, so a killed run leaves the old file or none.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
import warnings
from pathlib import Path
from typing import Any, cast

import kgforge.core.text as text_module
from kgforge.core.files import atomic_write
from kgforge.core.progress import tracked
from kgforge.grounding.index import GroundingIndex, IndexState
from kgforge.store.snapshot import Snapshot

KEPT_INDEX = "grounding-index.marshal"


def load_index(snapshot: Snapshot) -> GroundingIndex:
    """``snapshot``'s grounding index, prepared: read from the file kept beside its build, else made (and kept)."""
    path, key = snapshot.build / KEPT_INDEX, index_key(snapshot)
    with tracked(f"grounding index of {snapshot.domain}"):  # made the first time: a minute on a large graph
        state = _read(path, key)
        if state is not None:
            return GroundingIndex.from_state(state)
        index = GroundingIndex.from_snapshot(snapshot).prepare()
        _write(path, key, index.state())
        return index


def index_key(snapshot: Snapshot) -> str:
    """What the index of ``snapshot`` is made from besides the build's own files (see the module docstring)."""
    digest = hashlib.sha256()
    for part in (repr(snapshot.schema), f"{sys.version_info[:2]} {marshal.version}", _jieba_version()):
        digest.update(part.encode("utf-8") + b"\0")
    for source in _index_sources():
        digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()


def _index_sources() -> list[Path]:
    """The modules that make the index: the grounding package and the segmenter's."""
    return sorted(Path(__file__).parent.glob("*.py")) + [Path(text_module.__file__)]


def _jieba_version() -> str:
    return str(getattr(text_module.jieba_module(), "__version__", "?"))


def _read(path: Path, key: str) -> IndexState | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.warn(f"{path}: the kept grounding index cannot be read ({exc}); made again", RuntimeWarning, 2)
        return None
    try:
        kept_key, state = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as exc:
        warnings.warn(f"{path}: the kept grounding index is damaged ({exc}); made again", RuntimeWarning, 2)
        return None
    # the key holds the source of the code that wrote the state, so a file with this key holds an IndexState
    return cast(IndexState, state) if kept_key == key and isinstance(state, dict) else None


def _write(path: Path, key: str, state: IndexState) -> None:
    try:
        # not durable: a file lost to a crash is made again, and an fsync of some 200 MB is seconds of a run
        with atomic_write(path, "wb", durable=False, encoding=None) as out:
            marshal.dump((key, cast(dict[str, Any], state)), out)  # a TypedDict is a plain dict, as marshal wants
    except OSError as exc:
        warnings.warn(
            f"{path}: the grounding index could not be kept beside the build ({exc}); the next run makes it again",
            RuntimeWarning,
            2,
        )
