"""A dataset release of dialogues grounded in the domain, and the audit of its graph: ``release`` and
``audit_sample``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgforge.core.records import options_record
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.release import AuditSheet, ReleaseOptions, ReleaseReport


class ReleaseMethods(DomainBase):
    def release(
        self,
        dialogues: Iterable[Path | str],
        out: Path | str,
        options: ReleaseOptions | None = None,
        **settings: Any,
    ) -> ReleaseReport:
        """Release ``dialogues`` (files of one layout) grounded in this domain into the folder ``out``: each split in
        the layout and as a turn table, a Hugging Face card, croissant.json, kg/ (docs/release.md). ``options``
        (or its fields as keywords: ``split``, ``ratios``, ``by``, ``kg``, ``audit``, ``licence``, …)."""
        from kgforge.release import ReleaseOptions, make_release  # lazy: start-up

        chosen = options_record(ReleaseOptions, options, settings)
        return make_release(self.snapshot(), list(dialogues), out, chosen)

    def audit_sample(self, n: int, out: Path | str, *, by: str | None = None, seed: int = 0) -> AuditSheet:
        """A rating sheet of ``n`` of the graph's facts drawn with ``seed`` (``by="relation"``: stratified), for
        the raters of a KG accuracy audit (``kgforge audit import`` reads their sheets back)."""
        from kgforge.release import audit_sample  # lazy: start-up

        return audit_sample(self.snapshot(), n, out, by=by, seed=seed)
