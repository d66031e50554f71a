"""A dialogue file as the corpus commands see it: the dialogues the export readers give (one reader per
layout, :func:`kgforge.exports.dialogues.read_dialogues`), and how their text is counted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.datasets import room_parts
from kgforge.core.errors import InputError
from kgforge.core.registry import Registry
from kgforge.core.text import jieba_module
from kgforge.exports.dialogues import read_dialogues
from kgforge.exports.grounding import SourceFile
from kgforge.exports.model import SourceDialogue


@dataclass(frozen=True)
class CorpusLayout:
    """What the corpus commands read of one dialogue layout (a corpus ``kind``) beyond what its export reader
    gives, registered by the dataset's room (its statistics part, :func:`register_corpus_layout`); a layout
    with none registered takes the defaults. ``responses``: the utterances a retrieval baseline ranks, from a
    session's record and its number of utterances (default: every utterance but the first); ``fields``: the
    record fields a sample of utterance ``j`` carries (default: the record's own, its texts left out);
    ``topics_per_turn``: its gold triples mark the message they are annotated on, so each turn has topics."""

    responses: Callable[[dict[str, Any], int], range] | None = None
    fields: Callable[[dict[str, Any], int], dict[str, Any]] | None = None
    topics_per_turn: bool = False


# the layouts of no one dataset are registered here; each dataset's room registers its own (its statistics part)
CORPUS_LAYOUTS: Registry[CorpusLayout] = Registry("corpus layout", modules=lambda: room_parts("statistics"))
DEFAULT_LAYOUT = CorpusLayout()


def register_corpus_layout(kind: str, layout: CorpusLayout) -> CorpusLayout:
    """Make ``layout`` what the corpus commands know of the dialogue layout ``kind`` beyond its reader."""
    CORPUS_LAYOUTS.register(kind, layout)
    return layout


def corpus_layout(kind: str) -> CorpusLayout:
    """What the corpus commands know of the layout ``kind``: its registered :class:`CorpusLayout`, else the
    defaults."""
    return CORPUS_LAYOUTS.get(kind) if kind in CORPUS_LAYOUTS else DEFAULT_LAYOUT


@dataclass(frozen=True)
class Corpus:
    """The dialogues of one file, in its layout (``kind``: ``kdconv``, ``duconv-session``, …)."""

    path: Path
    source: SourceFile

    @property
    def kind(self) -> str:
        return self.source.layout.kind

    @property
    def dialogues(self) -> list[SourceDialogue]:
        return self.source.dialogues

    @property
    def segmented(self) -> bool:
        """Its text is cut into words with single spaces (DuConv, DuRecDial resource and sample files)."""
        return self.source.layout.segmented


def read_corpus(path: Path | str, input_layout: str | None = None, skip_invalid: bool | None = None) -> Corpus:
    """The dialogues in ``path`` (layout detected from its first record, or ``input_layout``); a record that
    is not a dialogue of that layout is an InputError naming the file and line, or with ``skip_invalid`` is
    left out and listed in the source's ``rejected`` (``None``: a command without ``--skip-invalid``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return Corpus(path, read_dialogues(path, input_layout, skip_invalid))


def set_aside_note(corpus: Corpus, listed: Path | None) -> tuple[str, ...]:
    """The note a command that wrote ``corpus``'s dialogues gives about the records it left out (none: no note)."""
    rejected = corpus.source.rejected
    if not rejected or listed is None:
        return ()
    return (
        f"{len(rejected):,} of {corpus.source.records_in:,} records are not {corpus.kind} dialogues and were "
        f"left out (--skip-invalid); each is listed with its line and reason in {listed}",
    )


class Tokens:
    """Token counts as the corpus statistics define them: already segmented text (DuConv, DuRecDial's
    segmented layouts) by its whitespace; other text by ``jieba.lcut`` in accurate mode, whitespace-only
    tokens dropped. jieba runs once per distinct text: a corpus repeats its openers and short answers."""

    def __init__(self, segmented: bool) -> None:
        self.segmented = segmented
        self._counts: dict[str, int] = {}
        self._cut: Callable[[str], list[str]] | None = None

    def words(self, text: str) -> list[str]:
        if self.segmented:
            return text.split()
        if self._cut is None:
            self._cut = jieba_module().lcut
        return [token for token in self._cut(text) if token.strip()]

    def count(self, text: str) -> int:
        if self.segmented:
            return len(text.split())
        found = self._counts.get(text)
        if found is None:
            found = self._counts[text] = len(self.words(text))
        return found


def tokens_for(corpus: Corpus) -> Tokens:
    return Tokens(corpus.segmented)


def dialogue_topics(dialogue: SourceDialogue) -> list[str]:
    """The topics a dialogue is about, for splitting and leakage: the ones it declares (DuConv's goal
    topics, KdConv's ``name``, DuRecDial's 『』 topics) and the heads of its gold triples, in order."""
    return list(dict.fromkeys([*dialogue.topic_names, *(t.head for t in dialogue.gold)]))


def gold_triples(dialogue: SourceDialogue) -> list[tuple[str, str, str]]:
    """The distinct gold triples of a dialogue, as written, in order."""
    return list(dict.fromkeys((t.head, t.relation, t.tail) for t in dialogue.gold))


SPLIT_NAMES = {2: ("train", "test"), 3: ("train", "dev", "test")}


def split_files(folder: Path) -> list[tuple[str, Path]]:
    """The split files ``corpus split`` wrote in ``folder`` (``train.EXT``, ``dev.EXT``, ``test.EXT``, one
    extension; ``test.candidates.jsonl`` and the like beside them are not splits), in that order; an
    InputError when there are none or a name is ambiguous."""
    found = []
    for name in ("train", "dev", "test"):
        files = sorted(p for p in folder.glob(f"{name}.*") if p.stem == name and p.is_file())
        if len(files) > 1:
            raise InputError(
                f"{folder}: {len(files)} files could be the {name} split ({', '.join(p.name for p in files)}); keep one"
            )
        found += [(name, files[0])] if files else []
    if not found:
        raise InputError(f"{folder}: no split files (train.*, dev.*, test.*) written by `kgforge corpus split`")
    return found


NO_RESPONSE = "null"  # the response of a sample that has none (a new goal), as the DuConv tools read it


def utterances(dialogue: SourceDialogue) -> list[str]:
    """A dialogue's utterances as written: a sample's history and response, but not the placeholder
    response of a sample that has none."""
    texts = dialogue.texts
    if "history" in dialogue.record and dialogue.record.get("response") == NO_RESPONSE and texts:
        return texts[:-1]
    return texts
