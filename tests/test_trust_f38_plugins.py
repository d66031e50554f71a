"""F38 (issue 44): plug-ins contained. A metric plug-in that raises while computing, a plug-in that raises on
import, and one that ends the process on import (``SystemExit(0)``, ``os._exit(0)``) are each one line naming
the plug-in and its entry point, with a non-zero exit — never a traceback, never a silent exit 0. Real
distributions on ``sys.path`` (a package and its ``.dist-info``), found as an installed one is."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from kgforge.evaluation.registry import METRICS
from kgforge.sources.importer import IMPORTERS

REPO = Path(__file__).resolve().parent.parent


def make_plugin(site: Path, package: str, group: str, entry: str, code: str) -> Path:
    """An installed distribution ``package`` in ``site`` whose entry point ``entry`` (``name = module:attr``)
    is in ``group``."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n", encoding="utf-8")
    return site


def python_path(site: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


def one_line(result) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def reloaded(monkeypatch):
    """The registries read their entry points again (a test's site is on sys.path), and are put back after."""
    for registry in (METRICS, IMPORTERS):
        # Loaded before the snapshot: put back unloaded, a registry whose modules the test imported would
        # load again to nothing (their ``register`` calls ran once), and later tests would see no entries.
        registry.names()
    saved = {r: (dict(r._entries), dict(r._keys), r._loaded) for r in (METRICS, IMPORTERS)}
    for registry in saved:
        registry._loaded = False

    def add(site: Path, package: str) -> None:
        monkeypatch.syspath_prepend(str(site))

    yield add
    for registry, (entries, keys, loaded) in saved.items():
        registry._entries, registry._keys, registry._loaded = entries, keys, loaded
    for name in [m for m in sys.modules if m.startswith("f38_")]:
        sys.modules.pop(name)


METRIC_THAT_RAISES = '''
def boom(batch):
    """A metric that fails on every batch."""
    raise ZeroDivisionError("the plug-in divided by zero")
'''


def test_a_metric_plugin_that_raises_while_computing_is_one_line_naming_it(tmp_path, reloaded, cli):
    site = make_plugin(tmp_path / "site", "f38_metric", "kgforge.metrics", "boom = f38_metric:boom", METRIC_THAT_RAISES)
    reloaded(site, "f38_metric")
    (tmp_path / "pred.txt").write_text("好看\n一般\n", encoding="utf-8")
    (tmp_path / "gold.txt").write_text("好看\n一般\n", encoding="utf-8")
    result = cli(
        "eval", str(tmp_path / "pred.txt"), "--gold", str(tmp_path / "gold.txt"), "--metrics", "boom", check=False
    )
    assert result.returncode == 1
    line = one_line(result)
    assert "metric plug-in 'boom'" in line and "f38_metric:boom" in line and "kgforge.metrics" in line
    assert "ZeroDivisionError: the plug-in divided by zero" in line


@pytest.mark.parametrize(
    ("code", "group", "command", "kind", "said"),
    [
        (
            'raise ImportError("needs a package that is not installed")\n',
            "kgforge.metrics",
            "metrics",
            "metric",
            "failed to load: ImportError: needs a package that is not installed",
        ),
        ("import sys\nsys.exit(0)\n", "kgforge.importers", "sources", "source kind", "called SystemExit(0)"),
    ],
)
def test_a_plugin_that_raises_or_exits_on_import_is_one_line_naming_it(
    tmp_path, reloaded, cli, code, group, command, kind, said
):
    """Not a traceback, and not the silent exit 0 that ``sys.exit(0)`` in a plug-in made of `kgforge sources`."""
    site = make_plugin(tmp_path / "site", "f38_broken", group, "broken = f38_broken:THING", code)
    reloaded(site, "f38_broken")
    result = cli(command, check=False)
    assert result.returncode == 1
    line = one_line(result)
    assert f"{kind} plug-in 'broken'" in line and "f38_broken:THING" in line and said in line


@pytest.mark.parametrize(
    ("command", "group", "kind"),
    [("sources", "kgforge.importers", "source kind"), ("metrics", "kgforge.metrics", "metric")],
)
def test_a_plugin_that_calls_os_exit_on_import_is_named_not_silent(tmp_path, command, group, kind, cli):
    """``os._exit(0)`` ends whatever process imports the plug-in: the command imports it in a forked copy
    first, and says which one stopped it (a fresh process: the way a user runs it)."""
    code = "import os\nprint('about to leave', flush=True)\nos._exit(0)\n"
    site = make_plugin(tmp_path / "site", "f38_leaves", group, "leaves = f38_leaves:THING", code)
    result = cli(command, env=python_path(site), fresh=True, check=False)
    assert result.returncode == 1, (result.stdout, result.stderr)
    line = one_line(result)
    assert f"{kind} plug-in 'leaves'" in line and "f38_leaves:THING" in line and "os._exit(0)" in line
    assert "about to leave" not in result.stdout  # the copy's output is its own


def test_the_plugins_that_load_still_load_beside_one_that_is_fine(tmp_path, reloaded, cli):
    code = '''
    def shout(batch):
        """Exclamation marks per response."""
        return [text.count("!") for text in batch.frame["prediction"].to_list()]
    '''
    site = make_plugin(tmp_path / "site", "f38_fine", "kgforge.metrics", "shout = f38_fine:shout", code)
    reloaded(site, "f38_fine")
    assert "shout" in cli("metrics").stdout
    assert METRICS.entry("shout").origin == "f38_fine:shout, entry point group kgforge.metrics"
    assert METRICS.entry("bleu4").origin is None  # a built-in's errors are kgforge's own
