"""Small dialogue files and a small graph for the input-trust tests (lone surrogates, strict layouts, bounded
memory): written here, so they run without the shared data."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.conftest import run_cli

KB = {
    "故宫": [["故宫", "地址", "北京市东城区景山前街4号"], ["故宫", "门票", "60元"], ["故宫", "周边景点", "天坛"]],
    "天坛": [["天坛", "地址", "北京市东城区天坛东里甲1号"], ["天坛", "门票", "15元"]],
}
KDCONV = {
    "name": "故宫",
    "messages": [
        {"message": "你知道故宫吗？"},
        {
            "message": "知道，在北京市东城区景山前街4号。",
            "attrs": [{"name": "故宫", "attrname": "地址", "attrvalue": "北京市东城区景山前街4号"}],
        },
        {"message": "门票多少钱？"},
        {"message": "60元。", "attrs": [{"name": "故宫", "attrname": "门票", "attrvalue": "60元"}]},
    ],
}
DUCONV = {
    "goal": [["START", "故宫", "天坛"], ["故宫", "周边景点", "天坛"]],
    "knowledge": [
        ["故宫", "领域", "景点"],
        ["天坛", "领域", "景点"],
        ["故宫", "门票", "60元"],
        ["故宫", "周边景点", "天坛"],
    ],
    "conversation": ["你 知道 故宫 吗 ？", "知道 ， 门票 60元 。", "附近 有 什么 ？", "天坛 就 在 附近 。"],
}
LIC2020 = {
    "goal": "[1] 问答 ( 『 故宫 』 ) --> [2] 再见",
    "knowledge": [["故宫", "门票", "60元"]],
    "user_profile": {"姓名": "陈明", "居住地": "北京"},
    "situation": "聊天 时间 : 晚上 20 : 00 , 在 家里",
    "conversation": ["[1] 故宫 门票 多少 钱 ？", "60元 。", "[2] 再见 。", "再见 。"],
}


def variant(record: dict[str, Any], *path: Any, value: Any) -> dict[str, Any]:
    """A deep copy of ``record`` with the value at ``path`` replaced."""
    changed = copy.deepcopy(record)
    inner = changed
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return changed


def write_array(path: Path, dialogues: list[Any], tail: str = "") -> Path:
    """A KdConv file: one dialogue a line inside the array (so dialogue i stands on line i + 2), then ``tail``."""
    body = "".join(",\n" * (i > 0) + json.dumps(d, ensure_ascii=True) for i, d in enumerate(dialogues))
    path.write_text(f"[\n{body}{chr(10) if body else ''}]\n{tail}", encoding="utf-8")
    return path


def write_lines(path: Path, records: list[Any]) -> Path:
    """JSON lines, with ``\\uXXXX`` escapes for what is not ASCII (so a lone surrogate is written as one)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in records), encoding="utf-8")
    return path


def build_tiny(workdir: Path) -> Path:
    """The graph of :data:`KB` as the domain ``tiny`` in ``workdir``."""
    kb = workdir.parent / "kb_tiny.json"
    kb.write_text(json.dumps(KB, ensure_ascii=False), encoding="utf-8")
    run_cli("build", "tiny", "--source", f"kdconv:{kb}", "--workdir", str(workdir))
    return workdir


def refused(done: Any, *needles: str) -> str:
    """The one error line of a refused command (status 1, no traceback), holding every one of ``needles``."""
    said = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("warning:")]
    assert done.returncode == 1, done.stderr + done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    assert len(said) == 1 and said[0].startswith("error:"), done.stderr
    for needle in needles:
        assert needle in said[0], (needle, said[0])
    return said[0]
