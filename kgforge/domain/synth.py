"""Dialogues drafted from goals and verified against the graph: ``synth`` and ``synth_plan``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.synth import SynthPlan, SynthReport


class SynthMethods(DomainBase):
    def synth(self, goals: Path | str, out: Path | str, *, style: str, **options: Any) -> SynthReport:
        """Dialogues for the ``goals`` (from :meth:`goals`) in ``style`` (duconv, kdconv, durecdial), drafted by a
        model (``llm_url``, ``llm_model``) or, without one, by the templated realiser; every turn verified against
        the graph, repaired or dropped; written to ``out`` in the style's layout with ``OUT.rejected.jsonl`` and
        ``OUT.manifest.json`` (``options``: :class:`kgforge.synth.SynthOptions` fields; docs/synth.md)."""
        from kgforge.synth import SynthOptions, synth  # lazy: start-up

        return synth(self.snapshot(), Path(goals), Path(out), SynthOptions(style=style, **options))

    def synth_plan(self, goals: Path | str, out: Path | str, *, style: str, **options: Any) -> SynthPlan:
        """What :meth:`synth` would send with the same arguments (``--dry-run``): its draft requests and their
        characters, nothing sent."""
        from kgforge.synth import SynthOptions, plan  # lazy: start-up

        return plan(self.snapshot(), Path(goals), Path(out), SynthOptions(style=style, **options))
