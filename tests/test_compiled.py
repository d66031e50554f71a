"""An installed kgforge runs grounding's inner loop compiled with mypyc (``hatch_build.py``); an editable one runs
the sources. The wheel built from this checkout must ground the real KdConv dialogues byte for byte as the
sources do, in forked worker processes too (their results cross back pickled)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hatch_build import COMPILED, install_wheel
from kgforge.grounding import compiled_modules
from tests.conftest import shared_file
from tests.test_grounding import build_kdconv_domain

CLI = [sys.executable, "-c", "from kgforge.cli import main; main()"]
PROBE = "import json; from kgforge.grounding import compiled_modules; print(json.dumps(compiled_modules()))"


def ground(env: dict[str, str] | None, cwd: Path, *args: str) -> dict:
    done = subprocess.run([*CLI, "ground", *args, "--json"], env=env, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_an_editable_install_runs_the_sources():
    assert compiled_modules() == ()  # the test command installs with -e: what is edited is what runs


@pytest.mark.slow  # builds the wheel (mypyc and a C compiler, about a minute), grounds 1,000+ dialogues twice
def test_the_compiled_wheel_grounds_as_the_sources_do(tmp_path):
    site = install_wheel(tmp_path / "wheel")  # the wheel of this checkout, built offline (the test extra)
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONSAFEPATH": "1"}
    probe = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=tmp_path, capture_output=True, text=True)
    expected = sorted(path.removesuffix(".py").replace("/", ".") for path in COMPILED)
    assert json.loads(probe.stdout) == expected, probe.stderr[-2000:]

    kg = tmp_path / "kg"
    build_kdconv_domain("film", kg)
    dev = json.loads(shared_file("kdconv/film/dev.json").read_text(encoding="utf-8"))
    dialogues = tmp_path / "dialogues.json"  # enough for two worker processes (grounding.run.PART_DIALOGUES)
    dialogues.write_text(json.dumps(dev * (-(-1000 // len(dev))), ensure_ascii=False), encoding="utf-8")
    args = ("film", "--dialogues", str(dialogues), "--workdir", str(kg), "--workers", "2")
    compiled = ground(env, tmp_path, *args, "--out", str(tmp_path / "compiled.json"))
    sources = ground(None, tmp_path, *args, "--out", str(tmp_path / "sources.json"))

    assert compiled["workers"] == sources["workers"] == 2
    assert (tmp_path / "compiled.json").read_bytes() == (tmp_path / "sources.json").read_bytes()
    assert {k: v for k, v in compiled.items() if k != "out"} == {k: v for k, v in sources.items() if k != "out"}
    assert compiled["scores"]["micro"]["f1"] > 0.8  # the grounding did its work, not two empty files


@pytest.mark.slow  # builds the wheel (mypyc runs, then the C compiler is refused: about a minute)
def test_without_a_c_compiler_the_wheel_installs_as_pure_python_with_a_warning(tmp_path):
    env = {**os.environ, "CC": "/bin/false", "CXX": "/bin/false", "LDSHARED": "/bin/false"}
    env.pop("KGFORGE_PURE_PYTHON", None)
    root = Path(__file__).resolve().parents[1]
    wheel_dir = tmp_path / "wheel"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-v",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheel_dir),
            str(root),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "could not be compiled" in done.stdout + done.stderr  # the one warning, naming what is slower
    assert "about 1.5x slower" in done.stdout + done.stderr
    (wheel,) = wheel_dir.glob("kgforge-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")  # pure Python: no platform tag, no extension module
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)], check=True
    )
    assert not [path for path in site.rglob("*") if path.suffix in (".so", ".pyd")]
    probe = (
        "import json; from kgforge.grounding import compiled_modules, not_compiled_reason; "
        "print(json.dumps([compiled_modules(), not_compiled_reason()]))"
    )
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONSAFEPATH": "1"}
    shown = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True, text=True)
    compiled, reason = json.loads(shown.stdout)
    assert compiled == [] and reason and reason.startswith("exit ")
