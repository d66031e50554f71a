"""Shared parts of the `kgforge collect` tests: a DuConv domain built from the shared DuConv sessions with goals
sampled on it, a collection folder, the real collection server on 127.0.0.1 (in a thread, as `kgforge collect`
configures it, or as its own process), workers driving it through the JSON API, and a scripted session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from kgforge.api import Domain
from kgforge.collect import prepare_collection
from kgforge.collect.app import create_collect_app
from kgforge.collect.folder import Folder
from kgforge.collect.service import CollectService
from kgforge.core.text import normalise_label
from kgforge.serve import ServeOptions
from tests.conftest import REPO, shared_file
from tests.serve_support import serving

DOMAIN = "duconv"
MARKUP = "<script>window.kgforgePwned = 1</script><b>粗体</b>"


def duconv_goals(root: Path, n: int = 6, style: str = "duconv") -> tuple[Path, Path]:
    """The DuConv domain built from the shared 250 dev sessions (derived pairs included) in ``root/kg``, and
    ``n`` goals of ``style`` sampled on it; returns (workdir, goals file)."""
    workdir = root / "kg"
    kg = Domain(DOMAIN, workdir)
    if not kg.paths.store_link.exists():
        kg.build(sources=[f"duconv:{shared_file('duconv/dev.head250.jsonl')}"])
        kg.derive()
    goals = root / f"goals-{style}-{n}.jsonl"
    if not goals.exists():
        kg.goals(n, goals, style=style)
    return workdir, goals


def new_collection(root: Path, name: str, workers: int = 4, style: str = "duconv", **options: Any) -> tuple[Path, Path]:
    """A collection folder ``root/name`` of the shared domain's goals; returns (folder, workdir)."""
    workdir, goals = duconv_goals(root, style=style)
    folder = root / name
    prepare_collection(DOMAIN, goals, style, folder, workdir=workdir, workers=workers, **options)
    return folder, workdir


def tokens(folder: Path) -> list[str]:
    return [token for token, _ in Folder(folder).workers()]


def admin_token(folder: Path) -> str:
    return Folder(folder).admin_token()


@contextmanager
def running_collection(folder: Path, workdir: Path, **options: Any) -> Iterator[str]:
    """The real collection app over ``folder`` in a thread of this process; yields its base URL."""
    served = ServeOptions(workers=1, **options)
    with serving(create_collect_app(CollectService(Folder(folder), workdir=workdir), served), served) as base:
        yield base


@contextmanager
def collection_process(folder: Path, workdir: Path, goals: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`kgforge collect` as its own process (killed on exit if it still runs), once it answers."""
    command = [sys.executable, "-m", "kgforge", "collect", DOMAIN, "--goals", str(goals), "--style", "duconv"]
    command += ["--out", str(folder), "--port", str(port), "--workdir", str(workdir)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/collect", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = process.stdout.read().decode() if process.stdout else ""
                    raise RuntimeError(f"kgforge collect did not start: {output}") from None
                time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(30)


@dataclass
class Worker:
    """A worker driving the JSON API with their token."""

    base: str
    token: str
    client: httpx.Client

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return self.client.request(method, self.base + path, headers=headers, **kwargs)

    def join(self) -> dict[str, Any]:
        reply = self.call("POST", "/api/collect/join")
        assert reply.status_code == 200, reply.text
        return reply.json()

    def view(self, sid: str) -> dict[str, Any]:
        reply = self.call("GET", f"/api/collect/session/{sid}")
        assert reply.status_code == 200, reply.text
        return reply.json()

    def turn(self, sid: str, text: str, facts: list[str] = ()) -> httpx.Response:
        return self.call("POST", f"/api/collect/session/{sid}/turn", json={"text": text, "facts": list(facts)})

    def finish(self, sid: str) -> httpx.Response:
        return self.call("POST", f"/api/collect/session/{sid}/finish")


def pair(first: Worker, second: Worker) -> str:
    """The session ``first`` (who asked first: the leader) and ``second`` are paired into."""
    assert first.join()["partner"] is False
    joined = second.join()
    assert joined["partner"] is True
    again = first.join()
    assert again["session"] == joined["session"] and again["partner"] is True
    return joined["session"]


def plain(text: str) -> str:
    return normalise_label(text)


def unsegmented(per_turn: list[list[list[str]]]) -> list[list[list[str]]]:
    """A DuConv export's per-turn triples as the workers were shown them (DuConv's word segmentation out)."""
    return [[[plain(x) for x in triple] for triple in turn] for turn in per_turn]


def script(view: dict[str, Any], turns: int = 8) -> list[tuple[str, str, list[str]]]:
    """A session of ``turns`` turns as (who: leader|follower, text, clicked fact ids): the leader opens on the
    first topic and states its facts, clicking each, and reaches the second topic last; the follower
    answers without knowledge. Deterministic, so two runs of it give the same session."""
    first, last = (plain(t) for t in view["topics"][:2])
    facts = [f for f in view["knowledge"] if f["relation"] != "领域" and len(plain(f["tail"])) <= 20]
    lines = []
    for n in range(turns):
        if n % 2:
            lines.append(("follower", ["是吗？", "挺有意思的。", "还有呢？", "好的，我会去看看。"][n // 2 % 4], []))
            continue
        if n == turns - 2:
            fact = next((f for f in facts if plain(f["head"]) == last), facts[-1])
            lines.append(
                (
                    "leader",
                    f"说到{last}，{plain(fact['head'])}的{plain(fact['relation'])}是{plain(fact['tail'])}。",
                    [fact["id"]],
                )
            )
            continue
        fact = facts[(n // 2) % len(facts)]
        text = f"{first}你知道吗？" if n == 0 else ""
        lines.append(
            (
                "leader",
                text + f"{plain(fact['head'])}的{plain(fact['relation'])}是{plain(fact['tail'])}。",
                [fact["id"]],
            )
        )
    return lines
