"""`kgforge demo`."""

from __future__ import annotations

from kgforge.commands._app import DEFAULT_WORKDIR, WorkdirOption, app
from kgforge.demo.runner import run_demo


@app.command("demo")
def demo_command(workdir: WorkdirOption = DEFAULT_WORKDIR) -> None:
    """Run every stage on the bundled offline demo domain (no network, no data needed)."""
    run_demo(workdir)
