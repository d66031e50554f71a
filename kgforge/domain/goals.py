"""Conversation goals from the graph: ``goals`` and ``check_goals``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.goals.check import GoalCheckReport
    from kgforge.goals.generate import GoalsReport


class GoalMethods(DomainBase):
    def goals(
        self,
        n: int,
        out: Path | str,
        *,
        style: str = "duconv",
        seed: int = 0,
        one_step_ratio: float = 0.5,
        hops: tuple[int, int] = (1, 3),
        language: str | None = None,
        profiles: Path | str | None = None,
        transitions: Path | str | None = None,
        profile_template: Path | str | None = None,
        topics: Iterable[str] | str = (),
    ) -> GoalsReport:
        """``n`` reproducible, stratified conversation goals of ``style`` (``registry("goal style")``) written to
        ``out`` (docs/goals.md); ``topics`` (labels or IRIs): only goals whose first topic is one of them
        (``--topic``)."""
        from kgforge.goals.generate import generate  # lazy: start-up
        from kgforge.goals.graph import GoalOptions  # lazy: start-up

        options = GoalOptions(
            n=n,
            seed=seed,
            one_step_ratio=one_step_ratio,
            style=style,
            hops=hops,
            language=language,
            transitions=Path(transitions) if transitions else None,
            profile_template=Path(profile_template) if profile_template else None,
            topics=(topics,) if isinstance(topics, str) else tuple(topics),
        )
        target = self.paths.output(Path(out))  # a refused OUT is named before a missing store, as it always was
        return generate(self.snapshot(), options, target, Path(profiles) if profiles else None)

    def check_goals(self, sessions: Path | str) -> GoalCheckReport:
        """Check the goals of real DuConv sessions (JSON lines) against the graph: in it, and found by the goal
        queries; each goal that is not is a :class:`~kgforge.goals.check.GoalProblem`."""
        from kgforge.goals.check import validate  # lazy: start-up

        return validate(self.snapshot(), Path(sessions))
