"""The demo's crowd: two scripted workers who chat under goals through a collection's own calls, the calls
``kgforge collect``'s server makes for two people in their browsers (pairing, turns with the facts clicked,
finishing with the checks). They stand in for people so that the demo runs the collection stage offline; what
they write is plain: the leader states one clicked fact a turn and names the second topic last."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from kgforge.collect import CollectError, CollectService, SessionView
from kgforge.collect.folder import Folder
from kgforge.collect.records import Checks, Fact
from kgforge.core.text import normalise_label

FOLLOWER_LINES = ("是吗？", "挺有意思的。", "还有呢？", "好的，我会去看看。")


def collect_scripted(folder: Path, workdir: Path, sessions: int, turns: int = 8) -> list[Checks]:
    """Pair the collection's workers two by two and chat ``sessions`` sessions of ``turns`` turns; the checks of
    each finished session (the folder's journal holds the sessions, as the server's would)."""
    workers = [worker for _, worker in Folder(folder).workers()]
    if len(workers) < 2 * sessions:
        raise CollectError(f"{folder}: {len(workers)} worker tokens for {sessions} sessions (two a session)")
    service = CollectService(Folder(folder), workdir=workdir)
    try:
        return [asyncio.run(_one_session(service, workers[2 * n], workers[2 * n + 1], turns)) for n in range(sessions)]
    finally:
        service.close()


async def _one_session(service: CollectService, leader: str, follower: str, turns: int) -> Checks:
    collection = service.collection
    await collection.join(leader)  # waits: the first to ask takes the first role
    sid = (await collection.join(follower)).session
    if sid is None:
        raise CollectError(f"workers {leader} and {follower} were not paired: every goal is taken")
    for who, text, facts in script(collection.view(leader, sid), turns):
        await collection.turn(leader if who == "leader" else follower, sid, text, list(facts))
    return await collection.finish(leader, sid)


def script(view: SessionView, turns: int) -> list[tuple[str, str, Sequence[str]]]:
    """(role, text, clicked fact ids) of each turn: the leader opens on the first topic, states one fact a turn
    (clicking it) and reaches the second topic in its last turn; the follower answers without knowledge."""
    topics = [normalise_label(t) for t in view.topics or ()]
    facts = [f for f in view.knowledge or () if f.relation != "领域" and len(normalise_label(f.tail)) <= 20]
    if len(topics) < 2 or not facts:
        raise CollectError(f"session {view.session}: a goal without two topics and their facts")
    lines: list[tuple[str, str, Sequence[str]]] = []
    for n in range(turns):
        if n % 2:
            lines.append(("follower", FOLLOWER_LINES[n // 2 % len(FOLLOWER_LINES)], ()))
        elif n == turns - 2:
            last = next((f for f in facts if normalise_label(f.head) == topics[1]), facts[-1])
            lines.append(("leader", f"说到{topics[1]}，{_stated(last)}", (last.id,)))
        else:
            fact = facts[(n // 2) % len(facts)]
            lines.append(("leader", (f"{topics[0]}你知道吗？" if n == 0 else "") + _stated(fact), (fact.id,)))
    return lines


def _stated(fact: Fact) -> str:
    head, relation, tail = (normalise_label(x) for x in fact.triple)
    return f"{head}的{relation}是{tail}。"
