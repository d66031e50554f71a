"""docs/api.md is true: its examples, run in order on the bundled demo domain, do what they say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_every_stage_has_an_example():
    text = "\n".join(examples())
    for method in ("build", "stats", "query", "tables", "derive", "goals", "export", "embed", "related"):
        assert f"kg.{method}(" in text, f"docs/api.md has no example of Domain.{method}"


@pytest.mark.slow  # runs every docs/api.md example on a freshly built demo domain
def test_the_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for number, code in enumerate(examples(), 1):
        exec(compile(code, f"docs/api.md example {number}", "exec"), namespace)
    assert (tmp_path / "kg" / "demo" / "models" / "default").is_dir()
    assert "霸王别姬" not in capsys.readouterr().err
