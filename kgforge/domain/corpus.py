"""Dialogue files against the domain's graph: ``corpus_stats`` and ``corpus_card``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.core.limits import ReadPolicy
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.corpus import CardReport, CorpusStats
    from kgforge.corpus.reading import Tokens


class CorpusMethods(DomainBase):
    def corpus_stats(
        self,
        dialogues: Path | str,
        *,
        input_layout: str | None = None,
        by_split: Path | str | None = None,
        transitions: bool = False,
        plot: Path | str | None = None,
        tokens: Tokens | None = None,
        policy: ReadPolicy | None = None,
    ) -> CorpusStats:
        """:func:`kgforge.corpus.corpus_stats` of a dialogue file, with its topics against this domain's graph."""
        from kgforge.corpus import corpus_stats  # lazy: start-up

        return corpus_stats(
            dialogues,
            input_layout=input_layout,
            by_split=by_split,
            snapshot=self.snapshot(),
            transitions=transitions,
            plot=plot,
            tokens=tokens,
            policy=policy,
        )

    def corpus_card(
        self,
        dialogues: Iterable[Path | str],
        out: Path | str,
        *,
        split: Path | str | None = None,
        input_layout: str | None = None,
        policy: ReadPolicy | None = None,
    ) -> CardReport:
        """:func:`kgforge.corpus.write_card`: the datasheet of dialogue files built against this domain."""
        from kgforge.corpus import write_card  # lazy: start-up

        return write_card(dialogues, self.snapshot(), out, split=split, input_layout=input_layout, policy=policy)
