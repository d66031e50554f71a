"""Word-vector metrics over a vector file the user gives (``--vectors FILE``): Embedding Average, Vector
Extrema and Greedy Matching, as Liu et al. (2016, "How NOT to evaluate your dialogue system") define them and
MSDE reports them. Each compares a response with its gold response:

* **Embedding Average**: the cosine of the two sentences' mean word vectors.
* **Vector Extrema** (Forgues et al. 2014): per dimension, the value of largest magnitude over the sentence's
  words (the maximum when it is at least as far from 0 as the minimum, else the minimum); the cosine of the two.
* **Greedy Matching** (Rus & Lintean 2012): every word of one side matched to its most similar word (cosine)
  of the other, averaged over the side's words; the mean of the two directions.

Words not in the vector file are left out (the report counts them); a response or gold response with no known
word has no value (null). The file is word2vec text (a ``count dim`` header, then ``word v1 … vd`` per line)
or word2vec binary (the same header, then each word, a space and ``dim`` little-endian float32s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kgforge.evaluation._kgforge import InputError

Tokens = Sequence[str]


@dataclass(frozen=True)
class WordVectors:
    path: Path
    index: dict[str, int]
    matrix: np.ndarray  # float64, one row per word

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def rows(self, tokens: Tokens) -> np.ndarray:
        """The vectors of the known words of ``tokens`` (in order; unknown words left out)."""
        found = [self.index[token] for token in tokens if token in self.index]
        return self.matrix[found]


def read_vectors(path: Path) -> WordVectors:
    """A word2vec file, text or binary (told apart by whether its first vector line decodes as numbers)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with open(path, "rb") as handle:
        header = handle.readline()
        try:
            count, dim = (int(x) for x in header.split())
        except ValueError:
            raise InputError(f"{path}:1: a word2vec file starts with 'COUNT DIM', not {header[:40]!r}") from None
        body = handle.read()
    if _is_text(body, dim):
        return _read_text(path, body, count, dim)
    return _read_binary(path, body, count, dim)


def _is_text(body: bytes, dim: int) -> bool:
    first = body.split(b"\n", 1)[0]
    try:
        fields = first.decode("utf-8").rstrip().split(" ")
        [float(x) for x in fields[1:]]
    except (UnicodeDecodeError, ValueError):
        return False
    return len(fields) == dim + 1


def _read_text(path: Path, body: bytes, count: int, dim: int) -> WordVectors:
    index: dict[str, int] = {}
    rows: list[list[float]] = []
    for number, raw in enumerate(body.decode("utf-8").splitlines(), start=2):
        if not raw.strip():
            continue
        fields = raw.rstrip().split(" ")
        if len(fields) != dim + 1:
            raise InputError(f"{path}:{number}: {len(fields) - 1} numbers, the header says {dim}")
        try:
            rows.append([float(x) for x in fields[1:]])
        except ValueError:
            raise InputError(f"{path}:{number}: a vector value is not a number") from None
        index.setdefault(fields[0], len(rows) - 1)
    return _checked(path, index, rows, count, dim)


def _read_binary(path: Path, body: bytes, count: int, dim: int) -> WordVectors:
    index: dict[str, int] = {}
    rows: list[np.ndarray] = []
    position, size = 0, dim * 4
    for number in range(count):
        end = body.find(b" ", position)
        if end < 0 or end + 1 + size > len(body):
            raise InputError(f"{path}: vector {number + 1} of {count} is cut short (binary word2vec)")
        word = body[position:end].decode("utf-8", "replace").strip()
        rows.append(np.frombuffer(body, dtype="<f4", count=dim, offset=end + 1))
        index.setdefault(word, len(rows) - 1)
        position = end + 1 + size
        if position < len(body) and body[position:position + 1] == b"\n":
            position += 1
    return _checked(path, index, rows, count, dim)


def _checked(path: Path, index: dict[str, int], rows: list, count: int, dim: int) -> WordVectors:
    if len(rows) != count:
        raise InputError(f"{path}: {len(rows)} vectors, the header says {count}")
    matrix = np.asarray(rows, dtype=np.float64).reshape(len(rows), dim)
    return WordVectors(path, index, matrix)


def _cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms else None


def extrema(rows: np.ndarray) -> np.ndarray:
    """Per dimension, the value of largest magnitude (the maximum on a tie)."""
    high, low = rows.max(axis=0), rows.min(axis=0)
    return np.where(np.abs(high) >= np.abs(low), high, low)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def embedding_scores(vectors: WordVectors, predictions: Sequence[Tokens],
                     golds: Sequence[Tokens]) -> dict[str, list[float | None]]:
    """``embedding_average``, ``vector_extrema`` and ``greedy_matching`` per response."""
    scores: dict[str, list[float | None]] = {"embedding_average": [], "vector_extrema": [], "greedy_matching": []}
    for hyp, ref in zip(predictions, golds, strict=True):
        a, b = vectors.rows(hyp), vectors.rows(ref)
        if not len(a) or not len(b):
            for values in scores.values():
                values.append(None)
            continue
        scores["embedding_average"].append(_cosine(a.mean(axis=0), b.mean(axis=0)))
        scores["vector_extrema"].append(_cosine(extrema(a), extrema(b)))
        similarity = _unit(a) @ _unit(b).T
        scores["greedy_matching"].append(float((similarity.max(axis=1).mean() + similarity.max(axis=0).mean()) / 2))
    return scores


def coverage(vectors: WordVectors, token_lists: Sequence[Tokens]) -> tuple[int, int]:
    """Known and all (non-empty) tokens."""
    known = total = 0
    for tokens in token_lists:
        for token in tokens:
            if token:
                total += 1
                known += token in vectors.index
    return known, total
