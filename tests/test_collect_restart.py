"""`kgforge collect` killed with SIGKILL and started again: every open session goes on where it was, nothing a
worker was told was accepted is lost, and the export equals that of a run never interrupted. The server runs as
its own process (the real command), the workers talk to it over HTTP."""

from __future__ import annotations

import json
import signal
import threading
import time

import httpx
import pytest

from kgforge.collect import export_collection
from tests.collect_support import (
    Worker,
    collection_process,
    duconv_goals,
    new_collection,
    pair,
    script,
    tokens,
)
from tests.serve_support import free_socket

pytestmark = pytest.mark.slow  # the real command started three times, killed twice


def port() -> int:
    sock = free_socket()
    number = sock.getsockname()[1]
    sock.close()
    return number


def without_times(path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        for key in ("started", "finished", "turn_seconds"):
            record["collected"].pop(key)
    return records


def play(base: str, folder, lines=None, stop_after: int | None = None) -> list:
    """The scripted session between the folder's first two workers, from where it stands; returns the script."""
    with httpx.Client(timeout=30) as client:
        leader, follower = (Worker(base, token, client) for token in tokens(folder)[:2])
        joined = leader.join()
        sid = joined["session"] if joined["partner"] else pair_after(leader, follower)
        view = leader.view(sid)
        lines = lines or script(view)
        for n in range(len(view["turns"]), len(lines)):
            if stop_after is not None and n > stop_after:
                return lines
            who, text, facts = lines[n]
            assert (leader if who == "leader" else follower).turn(sid, text, facts).status_code == 200
        assert leader.finish(sid).status_code == 200
    return lines


def pair_after(leader: Worker, follower: Worker) -> str:
    joined = follower.join()
    assert joined["partner"] and joined["role"] == "follower"
    return joined["session"]


def test_a_killed_server_resumes_every_open_session_and_exports_what_an_uninterrupted_one_does(tmp_path):
    workdir, goals = duconv_goals(tmp_path)
    calm, _ = new_collection(tmp_path, "calm", workers=2)
    killed, _ = new_collection(tmp_path, "killed", workers=2)

    with collection_process(calm, workdir, goals, at := port()):
        play(f"http://127.0.0.1:{at}", calm)

    at = port()
    with collection_process(killed, workdir, goals, at) as server:
        lines = play(f"http://127.0.0.1:{at}", killed, stop_after=2)  # three turns, then SIGKILL between turns
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    at = port()
    with collection_process(killed, workdir, goals, at) as server:
        base = f"http://127.0.0.1:{at}"
        with httpx.Client(timeout=30) as client:
            leader, follower = (Worker(base, token, client) for token in tokens(killed)[:2])
            again = follower.join()
            assert again["partner"] and again["role"] == "follower"  # back in the session, not waiting
            view = follower.view(again["session"])
            assert [t["text"] for t in view["turns"]] == [text for _, text, _ in lines[:3]]
            assert view["your_turn"] is True  # the fourth turn is the follower's, as before the kill
        lines = play(base, killed, lines, stop_after=4)
        server.send_signal(signal.SIGKILL)
        server.wait(30)
    with collection_process(killed, workdir, goals, at := port()):
        play(f"http://127.0.0.1:{at}", killed, lines)

    for fmt, name in (("duconv", "out.txt"),):
        export_collection(calm, fmt, tmp_path / f"calm.{name}")
        export_collection(killed, fmt, tmp_path / f"killed.{name}")
        assert without_times(tmp_path / f"killed.{name}") == without_times(tmp_path / f"calm.{name}")
    first = without_times(tmp_path / "killed.out.txt")[0]
    assert len(first["conversation"]) == 8 and first["collected"]["checks"]["passed"]


def test_every_acknowledged_turn_survives_a_kill_in_the_middle_of_a_burst(tmp_path):
    workdir, goals = duconv_goals(tmp_path)
    folder, _ = new_collection(tmp_path, "burst", workers=2)
    acknowledged: list[str] = []
    at = port()
    with collection_process(folder, workdir, goals, at) as server:
        base = f"http://127.0.0.1:{at}"
        client = httpx.Client(timeout=10)
        leader, follower = (Worker(base, token, client) for token in tokens(folder)[:2])
        sid = pair(leader, follower)

        def talk() -> None:
            try:
                for n in range(16):
                    text = f"第{n}句"
                    if (leader if n % 2 == 0 else follower).turn(sid, text).status_code == 200:
                        acknowledged.append(text)
            except httpx.TransportError:
                pass  # the server died under the request: that turn was never acknowledged

        talking = threading.Thread(target=talk)
        talking.start()
        while len(acknowledged) < 5 and talking.is_alive():
            time.sleep(0.005)
        server.send_signal(signal.SIGKILL)
        talking.join(30)
        client.close()
    with collection_process(folder, workdir, goals, at := port()), httpx.Client(timeout=30) as client:
        kept = [t["text"] for t in Worker(f"http://127.0.0.1:{at}", tokens(folder)[0], client).view(sid)["turns"]]
    assert kept[: len(acknowledged)] == acknowledged  # nothing acknowledged is lost, in order
    assert len(kept) <= len(acknowledged) + 1  # at most the turn in flight when the kill came
