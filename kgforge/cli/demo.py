"""`kgforge demo`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.rule import Rule

from kgforge.cli._app import DEFAULT_WORKDIR, WorkdirOption, app, console, show_mapping
from kgforge.demo.runner import run_demo


@app.command("demo")
def demo_command(workdir: WorkdirOption = DEFAULT_WORKDIR) -> None:
    """Run every stage on the bundled offline demo domain (no network, no data needed)."""
    run_demo(workdir, ConsoleReporter())


RULE_WIDTH = 120


class ConsoleReporter:
    """The demo's report on the terminal: a rule per step, tables of counts, notes."""

    def section(self, name: str | None) -> None:
        # a rule as wide as a terminal, or at most RULE_WIDTH cells where the output goes to a file or pipe (no width there)
        console.print(Rule(f"[bold]{escape(name)}" if name else ""), width=min(console.width, RULE_WIDTH))

    def table(self, title: str, values: Mapping[str, Any]) -> None:
        show_mapping(title, dict(values))

    def note(self, title: str | None, text: str) -> None:
        console.print((f"[bold]{escape(title)}[/] " if title else "") + escape(text))
