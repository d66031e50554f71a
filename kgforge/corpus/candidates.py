"""`kgforge corpus candidates`: retrieval candidate sets, the gold response plus k-1 others from a pool of
training responses (DuConv's baseline draws them at random; KdConv's ranks training responses with BM25),
written as DuConv's ``construct_candidate.py`` writes them: each sample's record with a ``candidate`` list."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgforge.core.checks import whole
from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.output import output_file
from kgforge.core.progress import iterate, tracked
from kgforge.core.quarantine import write_rejected
from kgforge.corpus.reading import (
    NO_RESPONSE,
    Tokens,
    corpus_layout,
    read_corpus,
    set_aside_note,
    tokens_for,
    utterances,
)
from kgforge.exports.model import SourceDialogue
from kgforge.exports.registry import format_named

METHODS = ("random", "bm25")
RETRIEVED_AT_ONCE = 4096  # queries ranked in one call of BM25 (a step of the progress bar)
TEXT_KEYS = ("conversation", "messages", "history", "response")


@dataclass(frozen=True)
class Sample:
    """One response to rank: what came before it (the first ``upto`` of ``texts``: a long session's samples
    share its utterances, their histories are made one at a time as they are written), the response, and the
    record fields that go with it."""

    texts: list[str]
    upto: int
    response: str
    record: dict[str, Any]
    query: str  # what BM25 ranks the pool by

    @property
    def history(self) -> list[str]:
        return self.texts[: self.upto]


@dataclass(frozen=True)
class CandidatesReport:
    file: str
    kind: str
    pool: str
    out: str
    method: str
    k: int
    seed: int
    samples: int
    pool_responses: int  # distinct utterances of the pool file
    gold_in_pool: int  # samples whose gold response is also a pool response (kept once, as the gold)
    unmatched_queries: int  # BM25: samples whose query shares no word with any pool response (ranked arbitrarily)
    dialogues_without_samples: int  # e.g. a DuRecDial test sample without a response
    notes: tuple[str, ...] = ()  # records left out (--skip-invalid), and where they are listed

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.notes:  # the JSON the command printed before it could leave records out
            del data["notes"]
        return data


def build_candidates(
    path: Path | str,
    pool: Path | str,
    out: Path | str,
    *,
    method: str = "random",
    k: int = 10,
    seed: int = 0,
    input_layout: str | None = None,
    skip_invalid: bool = False,
    policy: ReadPolicy | None = None,
) -> CandidatesReport:
    """For every response of ``path`` (cut into samples as the baselines cut its layout), the gold response
    and ``k - 1`` others from the utterances of ``pool``, in a seeded order, into ``out`` (JSON lines). A
    record of ``path`` that is not a dialogue is an error, or with ``skip_invalid`` is left out and listed in
    ``OUT.rejected.jsonl`` (the pool is read whole or refused); ``policy``: the reading's limits and text
    policy."""
    if method not in METHODS:
        raise ArgumentError("--method", f"{method!r} is not one of {', '.join(METHODS)}")
    k = whole(k, "--k", minimum=2)
    seed = whole(seed, "--seed", minimum=0)
    target = output_file(out)  # refused before the inputs are read
    with reading(policy):
        corpus, pool_corpus = read_corpus(path, input_layout, skip_invalid), read_corpus(pool)
    responses = list(dict.fromkeys(text for d in pool_corpus.dialogues for text in utterances(d)))
    if len(responses) < k:
        raise InputError(f"{pool}: {len(responses)} distinct responses, fewer than --k {k}")
    samples_by_dialogue = [samples_of(corpus.kind, d) for d in corpus.dialogues]
    samples = [s for found in samples_by_dialogue for s in found]
    rng = random.Random(seed)
    index = {text: i for i, text in enumerate(responses)}
    if method == "bm25":
        others, unmatched = _bm25(samples, responses, index, k, tokens_for(corpus), tokens_for(pool_corpus))
    else:
        others, unmatched = [_random(rng, len(responses), index.get(s.response), k) for s in samples], 0

    def records() -> Iterator[dict[str, Any]]:  # one at a time: a sample's history is made as it is written
        for sample, chosen in zip(samples, others):
            candidates = [responses[i] for i in chosen]
            candidates.insert(rng.randrange(k), sample.response)  # a ranker cannot learn the gold's place
            yield {**sample.record, "history": sample.history, "response": sample.response, "candidate": candidates}

    with target.part() as part:
        format_named("jsonl").write(records(), part, format_named("jsonl").layouts[0])
    notes = set_aside_note(corpus, write_rejected(target, corpus.source.rejected))
    return CandidatesReport(
        str(corpus.path),
        corpus.kind,
        str(pool_corpus.path),
        str(target),
        method,
        k,
        seed,
        len(samples),
        len(responses),
        sum(1 for s in samples if s.response in index),
        unmatched,
        sum(1 for found in samples_by_dialogue if not found),
        notes,
    )


def samples_of(kind: str, dialogue: SourceDialogue) -> list[Sample]:
    """The responses a retrieval baseline ranks in one dialogue: DuConv sessions as
    ``convert_session_to_sample.py`` cuts them (every other utterance from the first), DuRecDial resource
    sessions likewise from the bot's first turn, KdConv and LIC-2020 sessions every utterance but the first;
    a sample file's own ``history`` and ``response``."""
    record = dialogue.record
    fields = {key: value for key, value in record.items() if key not in TEXT_KEYS}
    topics = " ".join(dialogue.topic_names)
    if "history" in record:
        response = record.get("response")
        if not isinstance(response, str) or response == NO_RESPONSE:
            return []
        history = list(record["history"])
        return [Sample(history, len(history), response, fields, history[-1] if history else topics)]
    texts = dialogue.texts
    layout = corpus_layout(kind)
    turns = layout.responses(record, len(texts)) if layout.responses else range(1, len(texts))
    samples = []
    for j in turns:
        if layout.fields is not None:
            fields = layout.fields(record, j)
        samples.append(Sample(texts, j, texts[j], fields, texts[j - 1] if j else topics))
    return samples


def _retrieved(retriever: Any, queries: list[list[str]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """BM25's k best of the pool for each query (documents, scores), retrieved ``RETRIEVED_AT_ONCE`` queries at
    a time for the progress bar: each query is ranked on its own, so the rows are those of one call."""
    if not queries:
        return retriever.retrieve(queries, k=k, show_progress=False, n_threads=1)
    found, scores = [], []
    with tracked("rank the pool (BM25)", len(queries)) as bar:
        for at in range(0, len(queries), RETRIEVED_AT_ONCE):
            part = queries[at : at + RETRIEVED_AT_ONCE]
            documents, part_scores = retriever.retrieve(part, k=k, show_progress=False, n_threads=1)
            found.append(documents)
            scores.append(part_scores)
            bar.advance(len(part))
    return np.concatenate(found), np.concatenate(scores)


def _random(rng: random.Random, size: int, gold: int | None, k: int) -> list[int]:
    drawn = rng.sample(range(size), k)
    return [i for i in drawn if i != gold][: k - 1]


def _bm25(
    samples: list[Sample],
    responses: list[str],
    index: dict[str, int],
    k: int,
    query_tokens: Tokens,
    pool_tokens: Tokens,
) -> tuple[list[list[int]], int]:
    """The k-1 pool responses BM25 ranks highest for each sample's query (the utterance before it), the
    gold response left out wherever it ranks."""
    import bm25s  # lazy: only this method needs it

    retriever = bm25s.BM25()
    retriever.index([pool_tokens.words(text) for text in iterate(responses, "segment the pool")], show_progress=False)
    # an empty query matches nothing
    queries = [query_tokens.words(s.query) or ["\x00"] for s in iterate(samples, "segment the queries")]
    found, scores = _retrieved(retriever, queries, k)
    chosen = []
    for sample, row in zip(samples, found):
        gold = index.get(sample.response)
        chosen.append([int(i) for i in row if int(i) != gold][: k - 1])
    unmatched = int((scores.max(axis=1) <= 0).sum()) if len(samples) else 0
    return chosen, unmatched
