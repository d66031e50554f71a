"""Which fact each message states: ``ground``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.core.limits import ReadPolicy
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.grounding import GroundReport, MatchOptions


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
    ) -> GroundReport:
        """The facts each message of ``dialogues`` states and its claims, written to ``out``; scored against the
        gold annotations the input has (see docs/grounding.md). ``options`` defaults to ``MatchOptions()``;
        ``workers``: processes grounding the dialogues (default: one per CPU; the output is the same);
        ``skip_invalid``: records that are not dialogues go to ``OUT.rejected.jsonl``, else the first is an
        error; ``policy``: the reading's limits and text policy (:class:`~kgforge.core.limits.ReadPolicy`)."""
        from kgforge.grounding import GroundOptions, MatchOptions, ground_file  # lazy: start-up
        from kgforge.grounding.run import read_input  # lazy: start-up

        settings = GroundOptions(fmt, options or MatchOptions(), workers, skip_invalid, policy)
        target = self.paths.output(Path(out))  # a refused OUT first, then the input, then the build: as always
        read = read_input(Path(dialogues), settings)
        return ground_file(self.snapshot(), read, target, settings)
