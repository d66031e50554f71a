"""Per-dialogue subgraphs in the datasets' formats: ``export`` and ``export_parallel``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgforge.core.errors import ArgumentError
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.records import options_record
from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.exports import ExportOptions, ExportReport
    from kgforge.exports.parallel import ParallelExportReport


def export_options(options: ExportOptions | None, fields: dict[str, Any]) -> ExportOptions:
    """``options`` (an :class:`~kgforge.exports.ExportOptions`, as the command line makes it) with ``fields``
    (the same record's fields given as keywords, as a Python caller may: ``fmt="duconv", layout="sample"``)
    over it; a record either way, checked when made."""
    from kgforge.exports import ExportOptions  # lazy: start-up

    fields = {name: value for name, value in fields.items() if value is not None or name != "fmt"}
    if options is None and "fmt" not in fields:
        raise ArgumentError("export", "give the format: options=ExportOptions(fmt=...) or fmt=...")
    return options_record(ExportOptions, options, fields)


def _one_input(goals: Path | str | None, dialogues: Path | str | None) -> None:
    if (goals is None) == (dialogues is None):
        raise ArgumentError("export", "give either goals (from `kgforge goals`) or dialogues (real dialogues)")


class ExportMethods(DomainBase):
    def export(
        self,
        goals: Path | str | None,
        out: Path | str,
        options: ExportOptions | None = None,
        *,
        fmt: str | None = None,
        dialogues: Path | str | None = None,
        policy: ReadPolicy | None = None,
        **fields: Any,
    ) -> ExportReport:
        """Per-dialogue subgraphs for the new goals in ``goals`` (from :meth:`goals`), or for the real
        ``dialogues`` (``goals=None``), as ``options`` says (:class:`~kgforge.exports.ExportOptions`: the
        format, layout, language, …; or its fields as keywords, ``fmt="duconv", layout="sample"``), read with
        ``policy`` (the limits and text policy of :class:`~kgforge.core.limits.ReadPolicy`; None: the one in
        force)."""
        from kgforge.exports import export_dialogues, export_goals  # lazy: start-up
        from kgforge.exports.registry import detect_layout  # lazy: start-up

        _one_input(goals, dialogues)
        settings, target = export_options(options, {"fmt": fmt, **fields}), self.paths.output(Path(out))
        with reading(policy):
            if goals is not None:
                return export_goals(self.snapshot(), Path(goals), settings, target)
            source = Path(dialogues or "")  # given: _one_input refused neither and both
            detect_layout(source, settings.input_layout)  # an unreadable input before a missing store, as always
            return export_dialogues(self.snapshot(), source, settings, target)

    def export_parallel(
        self,
        goals: Path | str | None,
        out: Path | str,
        options: ExportOptions | None = None,
        *,
        languages: list[str],
        dialogues: Path | str | None = None,
        fmt: str | None = None,
        allow_mixed: bool = False,
        policy: ReadPolicy | None = None,
        **fields: Any,
    ) -> ParallelExportReport:
        """The export of new ``goals``, or of real DuRecDial 2.0 twins (``dialogues``: the ``zh_NAME`` file, its
        ``en_NAME`` twin beside it), in every language of ``languages`` (``["zh", "en"]``): twin files with the
        same ids and triples, DuRecDial 2.0's five task files and a manifest pairing them (see
        :mod:`kgforge.exports.parallel`); ``options`` as for :meth:`export` (default format ``durecdial``),
        read with ``policy`` (:class:`~kgforge.core.limits.ReadPolicy`)."""
        from kgforge.exports import export_parallel, export_parallel_dialogues  # lazy: start-up

        _one_input(goals, dialogues)
        fmt = fmt or (None if options is not None else "durecdial")
        settings = export_options(options, {"fmt": fmt, "language": languages[0], **fields})
        with reading(policy):
            if goals is not None:
                return export_parallel(self.snapshot(), Path(goals), settings, list(languages), Path(out), allow_mixed)
            source = Path(dialogues or "")  # given: _one_input refused neither and both
            return export_parallel_dialogues(self.snapshot(), source, settings, list(languages), Path(out), allow_mixed)
