"""Benchmark: how long `kgforge --version` and `kgforge --help` take to start, beside `python -c "import typer"`
(the floor: kgforge's command line is a typer app), a two-command typer app's `--help` (the floor for
rendering help) and a bare `python -c pass`, in the same run.

    python benchmarks/bench_startup.py            # 21 rounds
    python benchmarks/bench_startup.py --rounds 7

Each round runs the five commands once, in turn, as fresh processes (the way a shell starts them), so a
load that comes and goes hits them alike. Reports the median and the spread of each, and the load average.
Writes benchmarks/results/bench_startup.json. Target: `kgforge --version` median <= 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CLI = [sys.executable, "-m", "kgforge"]
COMMANDS = {
    "kgforge --version": [*CLI, "--version"],
    "kgforge --help": [*CLI, "--help"],
    "python -c 'import typer'": [sys.executable, "-c", "import typer"],
    # the floor for --help: a two-command typer app renders the same rich help panels
    "two-command typer app --help": [
        sys.executable,
        "-c",
        "import typer\napp = typer.Typer()\napp.command('a')(lambda: None)\napp.command('b')(lambda: None)\napp()",
        "--help",
    ],
    "python -c pass": [sys.executable, "-c", "pass"],
}
TARGET_S = 0.5


def seconds(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    runs: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # one warm-up each: the first run reads the files from disk
        seconds(command)
    load_before = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, command in COMMANDS.items():
            runs[name].append(seconds(command))
    result = {
        "rounds": args.rounds,
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "median_s": {name: round(statistics.median(times), 3) for name, times in runs.items()},
        "min_max_s": {name: [round(min(times), 3), round(max(times), 3)] for name, times in runs.items()},
        "target_s": TARGET_S,
    }
    result["met"] = result["median_s"]["kgforge --version"] <= TARGET_S
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_startup.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
