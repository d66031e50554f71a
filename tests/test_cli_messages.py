"""What a newcomer reads: the workdir rule in every "not found", did-you-mean for domains, hints that name
the domain typed, `kgforge domains`, dropped derived graphs on rebuild, Ctrl-C, and embed's --resume,
--max-time and threads. Every command runs as a user runs it: a real process, often from outside the repo."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.faults import CLI, wait_until_ready

RULE = "(the workdir: --workdir, else $KGFORGE_WORKDIR, else ./kg)"
SIGHTS = [f"景点{i}" for i in range(14)]


def write_kb(path: Path, n: int = 14) -> Path:
    """A KdConv-style travel KB: attractions sharing tickets, opening hours and neighbours, so derive pairs them."""
    kb = {}
    for i in range(n):
        name = f"景点{i}"
        kb[name] = [
            [name, "门票", f"{(i % 3) * 20}元"],
            [name, "开放时间", "全天"],
            [name, "建议游玩时间", f"{1 + i % 2}小时"],
            [name, "周边景点", f"景点{(i + 1) % n}"],
            [name, "周边景点", f"景点{(i + 2) % n}"],
            [name, "地址", f"北京市{i}号"],
        ]
    path.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    return path


def kg(*args: str, cwd: Path, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd, check=check, env=env)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A folder outside the repo whose ./kg holds travel (derived), film and bigtravel (schema travel)."""
    home = tmp_path_factory.mktemp("newcomer")
    kb = write_kb(home / "kb.json")
    for domain in ("travel", "film", "bigtravel"):
        kg("build", domain, "--schema", "travel", "--no-schema-sources", "--source", f"kdconv:{kb}", cwd=home)
    kg("derive", "travel", cwd=home)
    return home


def test_not_found_shows_the_rule_and_the_absolute_folder_it_looked_in(tmp_path):
    result = kg("stats", "travel", cwd=tmp_path, check=False, env={"KGFORGE_WORKDIR": ""})
    assert result.returncode == 1
    assert (
        f"no store for 'travel' in {tmp_path / 'kg'} {RULE}; no domain is built there yet; "
        "run `kgforge build travel` to build it"
    ) in result.stderr
    elsewhere = tmp_path / "elsewhere"
    result = kg("stats", "travel", cwd=tmp_path, check=False, env={"KGFORGE_WORKDIR": str(elsewhere)})
    assert f"in {elsewhere} {RULE}" in result.stderr


def test_kgforge_workdir_is_the_workdir_when_no_flag_is_given(built, tmp_path):
    result = kg("stats", "travel", "--json", cwd=tmp_path, env={"KGFORGE_WORKDIR": str(built / "kg")})
    assert json.loads(result.stdout)["triples"] > 0
    flag_wins = kg(
        "stats",
        "travel",
        "--workdir",
        str(tmp_path),
        cwd=tmp_path,
        check=False,
        env={"KGFORGE_WORKDIR": str(built / "kg")},
    )
    assert f"no store for 'travel' in {tmp_path} {RULE}" in flag_wins.stderr


def test_workdir_that_is_a_file_is_one_line_not_a_traceback(tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("x")
    for args in (["stats", "travel"], ["domains"], ["build", "travel", "--source", "kdconv:kb.json"]):
        result = kg(*args, "--workdir", str(afile), cwd=tmp_path, check=False)
        assert result.returncode == 1, args
        assert result.stderr.strip() == f"error: --workdir: {afile} is a file, not a folder {RULE}", args


def test_did_you_mean_names_the_closest_built_domain(built):
    result = kg("stats", "travle", cwd=built, check=False)
    assert result.returncode == 1
    assert (
        f"no domain 'travle' in {built / 'kg'} {RULE}; did you mean 'travel'? (built: bigtravel, film, travel)"
    ) in result.stderr


def test_goals_hint_names_the_domain_typed_not_its_schema(built, tmp_path):
    result = kg(
        "goals",
        "bigtravel",
        "--n",
        "3",
        "--one-step-ratio",
        "0",
        "--out",
        str(tmp_path / "g.jsonl"),
        cwd=built,
        check=False,
    )
    assert result.returncode == 1
    assert "run `kgforge derive bigtravel` first" in result.stderr
    assert "derive travel" not in result.stderr
    assert f"for 'bigtravel' in {built / 'kg'} {RULE}" in result.stderr


def test_domains_lists_what_is_built(built, tmp_path):
    text = kg("domains", cwd=built).stdout
    assert f"3 domain(s) in {built / 'kg'} {RULE}" in text
    for name in ("bigtravel", "film", "travel"):
        assert f"\n{name}  " in text
    assert "derived: associated" in text
    listing = {d["name"]: d for d in json.loads(kg("domains", "--json", cwd=built).stdout)}
    assert listing["travel"]["derived"] == ["associated"] and listing["film"]["derived"] == []
    assert listing["travel"]["quads"] > listing["film"]["quads"] > 0
    assert listing["film"]["size_bytes"] > 0 and listing["film"]["build_id"] and listing["film"]["built_at"]
    assert listing["film"]["embeddings"] == []
    empty = kg("domains", cwd=tmp_path).stdout
    assert f"no domain is built in {tmp_path / 'kg'} {RULE}; build one with `kgforge build DOMAIN" in empty


def test_rebuild_says_which_derived_graph_it_dropped_and_how_to_restore_it(tmp_path):
    kb = write_kb(tmp_path / "kb.json")
    build = ["build", "trip", "--schema", "travel", "--no-schema-sources", "--source", f"kdconv:{kb}"]
    kg(*build, cwd=tmp_path)
    derived = json.loads(kg("derive", "trip", "--json", cwd=tmp_path).stdout)
    rebuilt = kg(*build, "--full", cwd=tmp_path).stdout  # unchanged sources would keep the derived graph
    assert (
        f"dropped derived graph associated ({derived['quads']:,} quads); run `kgforge derive trip` to restore"
        in rebuilt
    )
    again = json.loads(kg(*build, "--json", cwd=tmp_path).stdout)
    assert again["dropped_graphs"] == []  # nothing left to drop


def _interrupt(args: list[str], cwd: Path, ready) -> subprocess.CompletedProcess:
    """Run ``kgforge ARGS``, send SIGINT (Ctrl-C) once ``ready()`` holds, and collect what it printed."""
    process = subprocess.Popen(CLI + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until_ready(process, args, ready, 180)
    assert process.poll() is None, "finished before it could be interrupted"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def _messages(stderr: str) -> list[str]:
    """What stderr says besides the progress bars (the lines with an ETA)."""
    return [line for line in stderr.splitlines() if line.strip() and " eta " not in line]


@pytest.mark.slow  # signals a running build
def test_ctrl_c_during_a_build_keeps_the_published_store_and_says_so(tmp_path):
    small, large = write_kb(tmp_path / "small.json"), write_kb(tmp_path / "large.json", n=60_000)
    kg("build", "trip", "--schema", "travel", "--no-schema-sources", "--source", f"kdconv:{small}", cwd=tmp_path)
    before = json.loads(kg("stats", "trip", "--json", cwd=tmp_path).stdout)
    builds = tmp_path / "kg" / "trip" / "builds"
    result = _interrupt(
        ["build", "trip", "--schema", "travel", "--no-schema-sources", "--source", f"kdconv:{large}"],
        tmp_path,
        lambda: any((b / ".incomplete").exists() for b in builds.iterdir()),
    )
    assert result.returncode == 130
    lines = _messages(result.stderr)
    assert lines == [
        "interrupted: the published store is unchanged (the unfinished build was discarded); rerun the same command"
    ], result.stderr
    assert json.loads(kg("stats", "trip", "--json", cwd=tmp_path).stdout) == before
    assert not any((b / ".incomplete").exists() for b in builds.iterdir())


EMBED = ["embed", "travel", "--model", "DistMult", "--dim", "8", "--evaluation", "none", "--threads", "1"]


@pytest.mark.slow  # trains an embedding
def test_embed_resume_without_a_checkpoint_says_so_and_trains_from_the_start(built):
    work = built / "kg" / "travel" / "models" / ".never.work"
    result = kg(*EMBED, "--epochs", "1", "--resume", "--name", "never", cwd=built)
    assert f"--resume: no checkpoint in {work} {RULE}, so training started from the beginning" in " ".join(
        result.stderr.split()
    )
    assert (built / "kg" / "travel" / "models" / "never" / "bundle.json").exists()


@pytest.mark.slow  # kills a training run
def test_embed_resume_after_a_run_killed_before_its_first_checkpoint_trains_from_the_start(built):
    work = built / "kg" / "travel" / "models" / ".early.work"
    work.mkdir(parents=True)  # what a run SIGKILLed before its first checkpoint leaves
    training = json.loads(kg(*EMBED, "--epochs", "1", "--resume", "--name", "early", "--json", cwd=built).stdout)[
        "training"
    ]
    assert training["resumed_from"] is None and training["epochs_completed"] == 1
    assert training["resume_note"].startswith(f"--resume: no checkpoint in {work} ")


@pytest.mark.slow  # trains, interrupted and resumed
def test_ctrl_c_during_embed_keeps_a_checkpoint_and_max_time_counts_from_the_resumed_run(built):
    torch = pytest.importorskip("torch")
    checkpoint = built / "kg" / "travel" / "models" / ".ctrlc.work" / "checkpoint.pt"
    result = _interrupt(
        [*EMBED, "--epochs", "100000", "--patience", "0", "--checkpoint-every", "0", "--name", "ctrlc"],
        built,
        lambda: checkpoint.exists() and torch.load(checkpoint, weights_only=True)["state"]["elapsed"] > 2,
    )
    assert result.returncode == 130
    lines = _messages(result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"interrupted: checkpoint kept at {checkpoint} (epoch ")
    assert lines[0].endswith("rerun the same command with --resume to continue")
    kept = torch.load(checkpoint, weights_only=True)["state"]
    resumed = json.loads(
        kg(
            *EMBED,
            "--epochs",
            "100000",
            "--patience",
            "0",
            "--checkpoint-every",
            "0",
            "--name",
            "ctrlc",
            "--resume",
            "--max-time",
            "1",
            "--json",
            cwd=built,
        ).stdout
    )["training"]
    assert resumed["resumed_from"] == {"epoch": kept["epoch"], "batch": kept["batch"]}
    assert resumed["stopped_by"] == "--max-time 1s"
    # the interrupted run had trained over 2 s already: --max-time 1 must still give this run its own second
    assert resumed["seconds"] >= kept["elapsed"] + 1


def test_embed_threads_default_to_the_cores_available(built):
    summary = json.loads(kg(*EMBED[:-2], "--epochs", "1", "--name", "threads", "--json", cwd=built).stdout)
    assert summary["training"]["cpu_threads"] == len(os.sched_getaffinity(0))


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _assert_png(path: Path) -> None:
    from matplotlib import image  # lazy: only the figure tests read PNGs back

    assert path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 1000
    height, width = image.imread(path).shape[:2]
    assert height > 100 and width > 100


def test_stats_plot_writes_the_relation_and_degree_figures_and_says_where(built, tmp_path):
    folder = tmp_path / "figures"
    text = kg("stats", "travel", "--plot", str(folder), cwd=built).stdout
    for name in ("travel-relations.png", "travel-degrees.png"):
        assert f"wrote {folder / name}" in text
        _assert_png(folder / name)
    here = kg("stats", "film", "--plot", ".", cwd=tmp_path, env={"KGFORGE_WORKDIR": str(built / "kg")}).stdout
    assert f"wrote {tmp_path / 'film-relations.png'}" in here
    _assert_png(tmp_path / "film-degrees.png")


def test_embed_writes_its_loss_and_validation_curves_beside_the_bundle(built):
    text = kg(*EMBED, "--epochs", "3", "--name", "curves", cwd=built).stdout
    figure = built / "kg" / "travel" / "models" / "curves-training.png"
    assert f"wrote the loss and validation curves to {figure}" in text
    _assert_png(figure)
    metrics = json.loads((figure.with_name("curves") / "metrics.json").read_text(encoding="utf-8"))["training"]
    assert len(metrics["loss_curve"]) == len(metrics["validation_loss_curve"]) == 3


@pytest.mark.slow  # a fresh interpreter per command
def test_the_command_line_starts_without_matplotlib():
    probe = (
        "import sys; from kgforge.cli._lazy import load_commands; load_commands(); print('matplotlib' in sys.modules)"
    )
    result = subprocess.run([*CLI[:2], probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_export_prints_a_short_summary_not_the_manifest(built, tmp_path):
    goals = tmp_path / "goals.jsonl"
    kg("goals", "travel", "--n", "4", "--out", str(goals), cwd=built)
    out = tmp_path / "train.jsonl"
    text = kg("export", "travel", "--goals", str(goals), "--format", "duconv", "--out", str(out), cwd=built).stdout
    lines = text.strip().splitlines()
    assert lines[0].startswith("exported travel as duconv sample: 4 records, ")
    assert lines[1:4] == [f"  wrote {out}", f"  wrote {out}.manifest.json", f"  wrote {out}.ids.txt"]
    assert lines[4] == "  coverage: 4 of 4 goals exported, 0 rejected by the checks"
    assert len(lines) == 5 and "sha256" not in text and "store_hash" not in text
    manifest = json.loads(
        kg(
            "export", "travel", "--goals", str(goals), "--format", "duconv", "--out", str(out), "--json", cwd=built
        ).stdout
    )
    assert len(manifest["out_sha256"]) == 64  # the whole manifest stays in --json


def test_goals_validate_prints_one_readable_line_per_goal_problem(built, tmp_path):
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text(
        "\n".join(
            json.dumps(record, ensure_ascii=False)
            for record in (
                {"goal": [["START", "景点0", "景点1"], ["景点0", "周边景点", "景点1"]]},
                {"goal": [["START", "景点0", "999元"], ["景点0", "门票", "999元"]]},
                {"goal": "nope"},
            )
        )
        + "\n",
        encoding="utf-8",
    )
    text = kg("goals", "travel", "--validate", str(sessions), cwd=built).stdout
    assert f"{sessions}: 2 goals, 1 with every triple in the graph, 1 of those found" in text
    assert "  line 3 (unreadable): goal must be a list of 3-item lists" in text
    assert "  line 2 (one_step): goal triple(s) absent from the graph: 景点0 门票 999元" in text
    assert "{'" not in text and "'line':" not in text
