"""`Domain` works from every place Python code runs, and runs the user's code once: a script without an
``if __name__ == "__main__":`` guard, ``python -`` (the script on stdin), ``python -c``, and a Jupyter kernel.

The worker processes kgforge starts (the query worker, the dump-parsing pool) are kgforge's own modules,
so they never import the user's ``__main__`` again. The user code here appends a line to a file at its top
level, builds the demo domain, queries, derives, makes goals, exports, trains a tiny embedding, asks for
related entities and imports a Wikidata dump through the parsing pool (2 workers); the file must hold
that line exactly once, then the closing one.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

USER_CODE = textwrap.dedent("""\
    with open("marks", "a") as f:
        f.write("started\\n")
    from pathlib import Path
    from kgforge import Domain
    from kgforge.publish.domain_import import import_into_domain
    from kgforge.demo.wikidata_dump import write_demo_dump
    from kgforge.publish.link import start_entity_names
    from kgforge.store.snapshot import Snapshot

    kg = Domain("demo", workdir="kg")
    kg.build()
    facts = kg.query("entity_facts", name="霸王别姬", limit=5)
    assert facts.rows
    kg.derive()
    goals = kg.goals(n=4, out="kg/demo/exports/goals.jsonl", seed=0)
    export = kg.export(goals.out, "kg/demo/exports/test.duconv.jsonl", fmt="duconv", layout="sample")
    model = kg.embed(model="DistMult", dim=8, epochs=1, threads=1, evaluation="none")
    similar = kg.related("霸王别姬", k=2)
    dump = write_demo_dump("demo-wikidata.json")
    imported = import_into_domain("demo", "wikidata", dump, {"seed_names": start_entity_names(Snapshot.open("demo", Path("kg"))),
                                  "hops": 1, "workers": 2, "batch_bytes": 512}, Path("kg"), show_progress=False)
    assert imported.source["quads"] > 0
    with open("marks", "a") as f:
        f.write(f"finished {len(facts.rows)} {goals.goals} {export.records} {len(similar.results)}\\n")
""")


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("KGFORGE_WORKDIR", None)
    return env


def run_python(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, input=stdin, capture_output=True, text=True, env=environment(), timeout=600
    )


def assert_ran_once(folder: Path, result: subprocess.CompletedProcess | None = None) -> None:
    detail = "" if result is None else f"\nstdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-4000:]}"
    lines = (folder / "marks").read_text(encoding="utf-8").splitlines() if (folder / "marks").exists() else []
    assert lines[:1] == ["started"] and len(lines) == 2, f"user code ran {lines}{detail}"
    assert lines[1].startswith("finished 5 4 4 2"), lines  # 5 facts, 4 goals, 4 exported, 2 related
    if result is not None:
        assert result.returncode == 0, detail


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_once(tmp_path):
    (tmp_path / "user_script.py").write_text(USER_CODE, encoding="utf-8")
    assert_ran_once(tmp_path, run_python(["user_script.py"], tmp_path))


@pytest.mark.slow
def test_python_reading_the_script_from_stdin_runs_it_once(tmp_path):
    assert_ran_once(tmp_path, run_python(["-"], tmp_path, stdin=USER_CODE))


@pytest.mark.slow
def test_python_dash_c_runs_it_once(tmp_path):
    assert_ran_once(tmp_path, run_python(["-c", USER_CODE], tmp_path))


@pytest.mark.slow
def test_a_jupyter_kernel_runs_each_cell_once(tmp_path):
    jupyter_client = pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    manager = jupyter_client.KernelManager(kernel_name="python3")  # ipykernel's own spec: this interpreter
    manager.start_kernel(cwd=str(tmp_path), env=environment())
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        cells = USER_CODE.split("\nkg = ")  # two cells, as a notebook would have them
        errors = [run_cell(client, cell) for cell in (cells[0], "kg = " + cells[1])]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert errors == [None, None]
    assert_ran_once(tmp_path)


def run_cell(client, code: str) -> str | None:
    """Execute one cell; its error (name, value and traceback) or None."""
    message_id = client.execute(code)
    error = None
    while True:
        try:
            message = client.get_iopub_msg(timeout=600)
        except queue.Empty:
            return "the kernel did not finish the cell within 600 s"
        if message["parent_header"].get("msg_id") != message_id:
            continue
        if message["msg_type"] == "error":
            content = message["content"]
            error = f"{content['ename']}: {content['evalue']}\n" + "\n".join(content["traceback"])
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return error


@pytest.mark.slow
def test_distributed_embedding_from_a_script_without_a_guard_runs_it_once(tmp_path):
    """Lightning's ddp_spawn (PyTorch's spawn) prepares its processes from a bare ``__main__``."""
    pytest.importorskip("pytorch_lightning")
    script = textwrap.dedent("""\
        with open("marks", "a") as f:
            f.write("started\\n")
        from kgforge import Domain
        kg = Domain("demo", workdir="kg")
        kg.build()
        model = kg.embed(model="DistMult", dim=8, epochs=1, threads=2, devices=2, evaluation="none")
        with open("marks", "a") as f:
            f.write(f"finished {model.as_dict()['training']['devices']}\\n")
    """)
    (tmp_path / "ddp_script.py").write_text(script, encoding="utf-8")
    result = run_python(["ddp_script.py"], tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "marks").read_text(encoding="utf-8").splitlines() == ["started", "finished 2"]
