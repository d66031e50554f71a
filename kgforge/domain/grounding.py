"""Which fact each message states: ``ground``, and the model that chooses among its candidates: ``train_grounding``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.core.limits import ReadPolicy
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.grounding import GroundReport, MatchOptions
    from kgforge.grounding.learning import TrainingData, TrainReport


class GroundingMethods(DomainBase):
    def ground(
        self,
        dialogues: Path | str,
        out: Path | str,
        *,
        fmt: str = "kdconv",
        options: MatchOptions | None = None,
        workers: int | None = None,
        skip_invalid: bool = False,
        policy: ReadPolicy | None = None,
        model: Path | str | None = None,
    ) -> GroundReport:
        """The facts each message of ``dialogues`` states and its claims, written to ``out``; scored against the
        gold annotations the input has (see docs/grounding.md). ``options`` defaults to ``MatchOptions()``;
        ``workers``: processes grounding the dialogues (default: one per CPU; the output is the same);
        ``skip_invalid``: records that are not dialogues go to ``OUT.rejected.jsonl``, else the first is an
        error; ``policy``: the reading's limits and text policy (:class:`~kgforge.core.limits.ReadPolicy`);
        ``model``: who chooses among the candidate facts — a model file (``kgforge ground train``), ``"rules"``
        for the hand rules alone, or the shipped model (None, or ``options.model``)."""
        from kgforge.grounding import GroundOptions, MatchOptions, ground_file  # lazy: start-up
        from kgforge.grounding.run import read_input  # lazy: start-up

        match = options or MatchOptions()
        if model is not None:
            match = replace(match, model=str(model))
        settings = GroundOptions(fmt, match, workers, skip_invalid, policy)
        target = self.paths.output(Path(out))  # a refused OUT first, then the input, then the build: as always
        read = read_input(Path(dialogues), settings)
        return ground_file(self.snapshot(), read, target, settings)

    def train_grounding(self, dialogues: Path | str, out: Path | str, *, seed: int = 0) -> TrainReport:
        """A grounding model trained on this domain's annotated ``dialogues`` (KdConv's layout, gold ``attrs``),
        written to ``out`` (see :func:`kgforge.grounding.learning.train_grounding`; several domains at once:
        ``kgforge.api.train_grounding``)."""
        from kgforge.grounding.learning import TrainingData, train_grounding  # lazy: start-up

        return train_grounding(
            [TrainingData(self.name, Path(dialogues))], Path(out), {self.name: self.snapshot()}, seed
        )


def train_grounding(
    data: Sequence[TrainingData], out: Path | str, workdir: Path | str | None = None, seed: int = 0
) -> TrainReport:
    """``kgforge ground train``: a grounding model trained on ``data`` (annotated dialogues, each with the built
    domain that grounds them; several domains make one model), written to ``out``; each domain's published build
    is opened once and handed to the training."""
    from kgforge.grounding.learning import train_grounding as train  # lazy: start-up

    snapshots = {name: DomainBase(name, workdir).snapshot() for name in dict.fromkeys(item.domain for item in data)}
    return train(data, Path(out), snapshots, seed)
