"""Dialogues drafted from goals and verified against the graph: ``synth`` and ``synth_plan``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgforge.core.errors import ArgumentError
from kgforge.core.records import options_record
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.synth import SynthOptions, SynthPlan, SynthReport


def synth_options(options: SynthOptions | None, fields: dict[str, Any]) -> SynthOptions:
    """``options`` with ``fields`` over it (``style`` only where given), as :func:`options_record` makes them."""
    from kgforge.synth import SynthOptions  # lazy: start-up

    fields = {name: value for name, value in fields.items() if value is not None or name != "style"}
    if options is None and "style" not in fields:
        raise ArgumentError("synth", "give the style: options=SynthOptions(style=...) or style=...")
    return options_record(SynthOptions, options, fields)


class SynthMethods(DomainBase):
    def synth(
        self,
        goals: Path | str,
        out: Path | str,
        options: SynthOptions | None = None,
        *,
        style: str | None = None,
        **fields: Any,
    ) -> SynthReport:
        """Dialogues for the ``goals`` (from :meth:`goals`) in the style ``options`` names (duconv, kdconv,
        durecdial: :class:`kgforge.synth.SynthOptions`, or its fields as keywords, ``style="duconv"``), drafted by
        a model (``llm_url``, ``llm_model``) or, without one, by the templated realiser; every turn verified against
        the graph, repaired or dropped; written to ``out`` in the style's layout with ``OUT.rejected.jsonl`` and
        ``OUT.manifest.json`` (docs/synth.md)."""
        from kgforge.synth import synth  # lazy: start-up

        chosen = synth_options(options, {"style": style, **fields})
        return synth(self.snapshot(), Path(goals), Path(out), chosen)

    def synth_plan(
        self,
        goals: Path | str,
        out: Path | str,
        options: SynthOptions | None = None,
        *,
        style: str | None = None,
        **fields: Any,
    ) -> SynthPlan:
        """What :meth:`synth` would send with the same arguments (``--dry-run``): its draft requests and their
        characters, nothing sent."""
        from kgforge.synth import plan  # lazy: start-up

        return plan(self.snapshot(), Path(goals), Path(out), synth_options(options, {"style": style, **fields}))
