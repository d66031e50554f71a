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

from kgforge.core.errors import InputError

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
        if position < len(body) and body[position : position + 1] == b"\n":
            position += 1
    return _checked(path, index, rows, count, dim)


def _checked(path: Path, index: dict[str, int], rows: list, count: int, dim: int) -> WordVectors:
    if len(rows) != count:
        raise InputError(f"{path}: {len(rows)} vectors, the header says {count}")
    matrix = np.asarray(rows, dtype=np.float64).reshape(len(rows), dim)
    return WordVectors(path, index, matrix)


def extrema(rows: np.ndarray) -> np.ndarray:
    """Per dimension, the value of largest magnitude (the maximum on a tie)."""
    high, low = rows.max(axis=0), rows.min(axis=0)
    return np.where(np.abs(high) >= np.abs(low), high, low)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def embedding_scores(
    vectors: WordVectors, predictions: Sequence[Tokens], golds: Sequence[Tokens], chunk: int = 1024
) -> dict[str, list[float | None]]:
    """``embedding_average``, ``vector_extrema`` and ``greedy_matching`` per response, computed on padded
    chunks of responses at once: a chunk's word vectors as one (responses, words, dim) array, padding masked."""
    hyp, ref = _indexes(vectors, predictions), _indexes(vectors, golds)
    rows = np.flatnonzero([len(h) > 0 and len(r) > 0 for h, r in zip(hyp, ref, strict=True)])
    names = ("embedding_average", "vector_extrema", "greedy_matching")
    scores = {name: np.full(len(hyp), np.nan) for name in names}
    unit = _unit(vectors.matrix)
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        a, a_mask = _padded([hyp[i] for i in part])
        b, b_mask = _padded([ref[i] for i in part])
        scores["embedding_average"][part] = _cosines(_mean(vectors.matrix[a], a_mask), _mean(vectors.matrix[b], b_mask))
        scores["vector_extrema"][part] = _cosines(
            _extreme(vectors.matrix[a], a_mask), _extreme(vectors.matrix[b], b_mask)
        )
        scores["greedy_matching"][part] = _greedy(unit[a], a_mask, unit[b], b_mask)
    return {name: [None if np.isnan(v) else float(v) for v in values] for name, values in scores.items()}


def _indexes(vectors: WordVectors, token_lists: Sequence[Tokens]) -> list[list[int]]:
    index = vectors.index
    return [[index[t] for t in tokens if t in index] for tokens in token_lists]


def _padded(groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Word indexes as a (groups, longest) array and the mask of real words."""
    width = max(map(len, groups))
    index = np.zeros((len(groups), width), dtype=np.int64)
    mask = np.zeros((len(groups), width), dtype=bool)
    for row, group in enumerate(groups):
        index[row, : len(group)] = group
        mask[row, : len(group)] = True
    return index, mask


def _mean(words: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (words * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1)[:, None]


def _extreme(words: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:func:`extrema` of every group: per dimension the value of largest magnitude, the maximum on a tie."""
    high = np.where(mask[:, :, None], words, -np.inf).max(axis=1)
    low = np.where(mask[:, :, None], words, np.inf).min(axis=1)
    return np.where(np.abs(high) >= np.abs(low), high, low)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    return np.divide(dots, norms, out=np.full(len(a), np.nan), where=norms > 0)


def _greedy(a: np.ndarray, a_mask: np.ndarray, b: np.ndarray, b_mask: np.ndarray) -> np.ndarray:
    """Greedy matching of each pair from unit word vectors: the cosine tensor (pairs, a words, b words)."""
    sims = np.where(a_mask[:, :, None] & b_mask[:, None, :], np.einsum("phd,prd->phr", a, b), -np.inf)
    best_a = np.where(a_mask, sims.max(axis=2), 0.0).sum(axis=1) / a_mask.sum(axis=1)
    best_b = np.where(b_mask, sims.max(axis=1), 0.0).sum(axis=1) / b_mask.sum(axis=1)
    return (best_a + best_b) / 2


def coverage(vectors: WordVectors, token_lists: Sequence[Tokens]) -> tuple[int, int]:
    """Known and all (non-empty) tokens."""
    known = total = 0
    for tokens in token_lists:
        for token in tokens:
            if token:
                total += 1
                known += token in vectors.index
    return known, total
