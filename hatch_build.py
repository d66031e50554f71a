"""The wheel's build hook: grounding's inner loop compiled with mypyc.

``kgforge ground`` spends its time in a few modules of plain, type-hinted Python that run once per message
and per entity in focus (:data:`COMPILED`). mypyc turns them into C extension modules from the same source,
with the same results (``tests/test_compiled.py`` grounds the sample dialogues both ways and compares the
bytes); they run about 40% faster. A regular install (``pip install .``, a wheel) gets them compiled; an
editable install (``pip install -e .``) runs the sources as written, so that an edit is what runs.
``KGFORGE_PURE_PYTHON=1`` builds a wheel without them; where they cannot be compiled (no C compiler, a
mypyc that fails) the wheel is built without them all the same, with one warning that names what runs slower.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

COMPILED = (  # imported by nothing outside kgforge.grounding; each type-checks on its own (--follow-imports=skip)
    "kgforge/grounding/choice.py",
    "kgforge/grounding/facts.py",
    "kgforge/grounding/keys.py",
    "kgforge/grounding/normalise.py",
    "kgforge/grounding/matching.py",
    "kgforge/grounding/scoring.py",
    "kgforge/grounding/messages.py",
)
_SETUP = """\
from setuptools import setup
from mypyc.build import mypycify

setup(
    name="kgforge-compiled",
    packages=[],
    ext_modules=mypycify(["--follow-imports=skip", "--ignore-missing-imports", *{files!r}], opt_level="3"),
)
"""


class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install runs the sources: what is edited is what runs
        if os.environ.get("KGFORGE_PURE_PYTHON"):
            self.app.display_info("KGFORGE_PURE_PYTHON is set: grounding's modules are not compiled")
            return
        self._work = Path(tempfile.mkdtemp(prefix="kgforge-mypyc-"))  # removed once the wheel is written
        try:
            extensions = compile_modules(Path(self.root), self._work)
        except CompileError as exc:
            # a machine without a C compiler must still be able to install kgforge: the compiled modules
            # are a speed-up of the same sources, never a requirement
            self.app.display_warning(pure_python_warning(exc))
            note = self._work / NOT_COMPILED  # read by kgforge.grounding.not_compiled_reason()
            note.write_text(f"{exc}\n", encoding="utf-8")
            build_data["force_include"][str(note)] = f"kgforge/grounding/{NOT_COMPILED}"
            return
        except BaseException:
            shutil.rmtree(self._work, ignore_errors=True)
            raise
        for built, inside in extensions.items():
            build_data["force_include"][str(built)] = inside
        build_data["pure_python"] = False
        build_data["infer_tag"] = True  # the wheel holds this interpreter's and platform's extension modules
        self.app.display_info(f"compiled with mypyc: {', '.join(COMPILED)}")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "_work", None)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


NOT_COMPILED = "_not_compiled.txt"  # in a wheel whose modules could not be compiled: why


class CompileError(RuntimeError):
    """mypyc or the C compiler failed: the wheel is built from the sources alone."""


def pure_python_warning(exc: CompileError) -> str:
    return (
        f"warning: kgforge's grounding modules could not be compiled ({exc}); installing them as pure Python: "
        "`kgforge ground`, `eval --domain` and `corpus stats --domain` give the same results about 1.5x slower "
        "(set KGFORGE_PURE_PYTHON=1 to skip the attempt)"
    )


def compile_modules(root: Path, work: Path) -> dict[Path, str]:
    """:data:`COMPILED` compiled in ``work`` (a copy of the package, so that nothing is written into the
    checkout): each extension module built, by its path in the wheel."""
    shutil.copytree(root / "kgforge", work / "kgforge", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (work / "setup.py").write_text(_SETUP.format(files=list(COMPILED)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if done.returncode:
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        raise CompileError(f"exit {done.returncode}: {lines[-1] if lines else 'no output'}")
    suffixes = (".so", ".pyd")
    built = [
        path for path in work.rglob("*") if path.suffix in suffixes and "build" not in path.relative_to(work).parts
    ]
    return {path: path.relative_to(work).as_posix() for path in built}


def install_wheel(folder: Path) -> Path:
    """This checkout's wheel, built without build isolation (hatchling, mypy and setuptools from the environment:
    the ``test`` and ``bench`` extras) and installed into ``folder``/site, which this returns: put first on
    ``PYTHONPATH``, with ``PYTHONSAFEPATH`` set, it is the kgforge a process imports instead of the checkout."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    root = Path(__file__).resolve().parent
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(folder), str(root)], check=True)
    (wheel,) = folder.glob("kgforge-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(folder / "site"), str(wheel)], check=True)
    return folder / "site"
