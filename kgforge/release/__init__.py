"""A dataset release: the dialogues' splits in their own layout and as one turn table, a Hugging Face card,
Croissant 1.1 metadata, the graph the dialogues use, checksums and licences (``kgforge release``), its check
(``kgforge release check``), and a hand audit of the graph's accuracy (``kgforge audit``); docs/release.md.

``layouts`` (what each dataset layout needs: one table) <- ``turns`` (the turn table) <- ``licences`` <-
``splits`` <- ``kg``, ``card``, ``croissant``, ``rai`` <- ``manifest`` <- ``make`` (``kgforge release``);
``check`` (``release check``); ``audit``.
"""

from kgforge.release.audit import Accuracy, AuditReport, AuditSheet, audit_import, audit_sample, wilson
from kgforge.release.check import CheckLine, ReleaseCheck, check_release
from kgforge.release.kg import KG_CHOICES
from kgforge.release.layouts import LAYOUTS
from kgforge.release.licences import LICENCES, choose_licence
from kgforge.release.make import ReleaseOptions, ReleaseReport, ReleaseSplit, make_release
from kgforge.release.rai import ORIGINS

__all__ = [
    "KG_CHOICES",
    "LAYOUTS",
    "LICENCES",
    "ORIGINS",
    "Accuracy",
    "AuditReport",
    "AuditSheet",
    "CheckLine",
    "ReleaseCheck",
    "ReleaseOptions",
    "ReleaseReport",
    "ReleaseSplit",
    "audit_import",
    "audit_sample",
    "check_release",
    "choose_licence",
    "make_release",
    "wilson",
]
