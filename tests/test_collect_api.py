"""`kgforge collect` through its JSON API on a real server on 127.0.0.1: pairing, what each role may see, who may
post what and when, a whole session finished and exported, escaping, rate limits, the admin view and serve's
hardening. The domain is built from the shared DuConv sessions; goals are sampled on it by `kgforge goals`."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time

import httpx
import pytest

from kgforge.api import Domain
from kgforge.collect import export_collection
from kgforge.collect.collection import MAX_TEXT
from kgforge.datasets.duconv.export import SESSION
from kgforge.datasets.kdconv.export import DIALOGUES
from kgforge.exports.registry import format_named
from tests.collect_support import (
    DOMAIN,
    MARKUP,
    Worker,
    admin_token,
    duconv_goals,
    new_collection,
    pair,
    running_collection,
    script,
    tokens,
    unsegmented,
)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("collect-api")


@pytest.fixture(scope="module")
def site(root):
    folder, workdir = new_collection(root, "site", workers=20)
    with running_collection(folder, workdir) as base:
        yield folder, base


@pytest.fixture(scope="module")
def client():
    with httpx.Client(timeout=30) as c:
        yield c


@pytest.fixture
def crew(site, client):
    """``crew(n)``: three workers of the site, the n-th three (each test takes its own)."""
    folder, base = site
    return lambda n: [Worker(base, token, client) for token in tokens(folder)[3 * n : 3 * n + 3]]


def labels(view: dict) -> set[str]:
    return {x for fact in view["knowledge"] for x in (fact["head"], fact["tail"]) if len(x) >= 2}


def test_pairing_gives_the_roles_and_the_follower_never_the_goal_or_knowledge(crew):
    leader, follower, _ = crew(0)
    sid = pair(leader, follower)
    mine = leader.view(sid)
    assert (
        mine["role"] == "leader" and mine["your_turn"] is True and mine["knowledge"] and mine["goal"][0][0] == "START"
    )
    theirs = follower.view(sid)
    assert theirs["role"] == "follower" and theirs["your_turn"] is False
    assert not {"goal", "knowledge", "topics", "profile", "situation", "checks"} & set(theirs)
    fact = next(f for f in mine["knowledge"] if f["relation"] != "领域")
    assert leader.turn(sid, "你好！", [fact["id"]]).status_code == 200
    seen = follower.call("GET", f"/api/collect/session/{sid}").text
    assert not any(label in seen for label in labels(mine))  # no fact label, no goal topic, in any form
    turn = json.loads(seen)["turns"][0]
    assert turn["text"] == "你好！" and "facts" not in turn and "warnings" not in turn
    assert leader.view(sid)["turns"][0]["facts"] == [fact]


def test_a_third_token_gets_403_out_of_turn_409_and_bad_turns_400(crew, client, site):
    leader, follower, third = crew(1)
    sid = pair(leader, follower)
    assert third.turn(sid, "我也来说一句").status_code == 403
    assert third.call("GET", f"/api/collect/session/{sid}").status_code == 403
    assert third.finish(sid).status_code == 403
    refused = follower.turn(sid, "我先说")
    assert refused.status_code == 409 and "not your turn" in refused.json()["error"]
    for text, facts in [("", []), ("   \n ", []), ("字" * (MAX_TEXT + 1), []), ("好", ["f999"]), ("好", ["x; drop"])]:
        reply = leader.turn(sid, text, facts)
        assert reply.status_code == 400, (text[:10], facts, reply.text)
    assert (
        follower.call("POST", f"/api/collect/session/{sid}/turn", json={"text": "好", "facts": ["f0"]}).status_code
        == 409
    )
    assert (
        leader.call("POST", f"/api/collect/session/{sid}/turn", json={"text": "好", "facts": "f0"}).status_code == 400
    )
    assert leader.call("POST", f"/api/collect/session/{sid}/turn", content=b"text=hi").status_code == 415
    odd = leader.call(
        "POST", f"/api/collect/session/{sid}/turn", content=b"[1]", headers={"Content-Type": "application/json"}
    )
    assert odd.status_code == 400
    nobody = client.post(f"{site[1]}/api/collect/join", headers={"Authorization": "Bearer not-a-token"})
    assert nobody.status_code == 401 and nobody.headers["www-authenticate"] == "Bearer"
    assert client.post(f"{site[1]}/api/collect/join").status_code == 401
    admin = client.post(f"{site[1]}/api/collect/join", headers={"Authorization": f"Bearer {admin_token(site[0])}"})
    assert admin.status_code == 401  # the admin is no worker
    assert leader.view(sid)["turns"] == []  # nothing refused was kept


def test_a_turn_with_markup_comes_back_escaped_in_the_page(crew, client, site):
    leader, follower, _ = crew(2)
    sid = pair(leader, follower)
    assert leader.turn(sid, MARKUP).status_code == 200
    page = client.get(f"{site[1]}/collect", params={"token": follower.token})
    assert page.status_code == 200
    assert "&lt;script&gt;window.kgforgePwned" in page.text  # the rendered turn
    assert "<script>window" not in page.text and "</b>" not in page.text
    data = page.text.split('id="collect-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["view"]["turns"][0]["text"] == MARKUP  # the script's copy, as JSON, <> escaped
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer" and page.headers["cache-control"] == "no-store"
    assert client.get(f"{site[1]}/collect", params={"token": "nope"}).status_code == 403


def test_an_eight_turn_session_finishes_with_its_checks_and_exports(crew, site, tmp_path, cli):
    leader, follower, _ = crew(3)
    sid = pair(leader, follower)
    view = leader.view(sid)
    lines = script(view)
    for n, (who, text, facts) in enumerate(lines):
        speaker = leader if who == "leader" else follower
        reply = speaker.turn(sid, text, facts)
        assert reply.status_code == 200 and reply.json()["index"] == n, reply.text
        if n == 4:  # five turns so far
            early = leader.finish(sid)
            assert early.status_code == 409 and "at least 6 turns" in early.json()["error"]
    assert follower.finish(sid).status_code == 403
    checks = leader.finish(sid)
    assert checks.status_code == 200, checks.text
    checks = checks.json()
    assert checks["goal_reached"] and checks["passed"] and checks["turns"] == 8 and checks["facts_clicked"] == 4
    assert checks["facts_stated"] == 4 and checks["turns_with_warnings"] == 0
    assert leader.finish(sid).json() == checks  # again: the same answer
    assert leader.turn(sid, "还有一句").status_code == 409
    assert "checks" in leader.view(sid) and "checks" not in follower.view(sid)  # the checks name the goal's topics
    assert leader.view(sid)["state"] == "finished" and leader.view(sid)["your_turn"] is False

    duconv = export_collection(site[0], "duconv", tmp_path / "collected.txt")
    records = [json.loads(line) for line in (tmp_path / "collected.txt").read_text(encoding="utf-8").splitlines()]
    ours = next(r for r in records if r["collected"]["session"] == sid)
    assert duconv.layout_kind == "duconv-session" and format_named("duconv").check(ours, SESSION) == []
    assert len(ours["conversation"]) == len(ours["knowledge_per_turn"]) == 8
    by_id = {f["id"]: [f["head"], f["relation"], f["tail"]] for f in view["knowledge"]}
    assert unsegmented(ours["knowledge_per_turn"]) == [[by_id[i] for i in facts] for _, _, facts in lines]
    assert all(t in ours["knowledge"] for turn in ours["knowledge_per_turn"] for t in turn)
    assert ours["collected"]["workers"] == {"leader": "w0010", "follower": "w0011"}
    assert ours["collected"]["checks"] == checks and len(ours["collected"]["turn_seconds"]) == 8

    export_collection(site[0], "kdconv", tmp_path / "collected.json")
    dialogues = json.loads((tmp_path / "collected.json").read_text(encoding="utf-8"))
    mine = next(d for d in dialogues if d["collected"]["session"] == sid)
    assert format_named("kdconv").check(mine, DIALOGUES) == []
    attrs = [[[a["name"], a["attrname"], a["attrvalue"]] for a in m.get("attrs", [])] for m in mine["messages"]]
    assert [len(a) for a in attrs] == [len(facts) for _, _, facts in lines]
    assert [m["message"] for m in mine["messages"]] == [text for _, text, _ in lines]
    for out, rubric in (("collected.txt", "duconv-turn"), ("collected.json", "kdconv")):  # kgforge's own readers
        stats = json.loads(cli("corpus", "stats", str(tmp_path / out), "--json").stdout)
        assert stats["dialogues"] == len(records) and stats["utterances"] == 8 * len(records)
        scored = json.loads(cli("eval", str(tmp_path / out), "--no-out", "--json").stdout)
        assert scored["inputs"]["predictions"]["dialogues"] == len(records) and scored["metrics"]["distinct1"] > 0
        sheets = cli("rate", "sheet", rubric, "--system", f"people={tmp_path / out}", "--out", str(tmp_path / rubric))
        assert (tmp_path / rubric / "key.json").exists(), sheets.stdout


def test_a_long_poll_returns_when_the_partner_speaks(crew):
    leader, follower, _ = crew(4)
    sid = pair(leader, follower)
    got = {}

    def wait() -> None:
        got["view"] = follower.call("GET", f"/api/collect/session/{sid}", params={"since": 0, "wait": 20}).json()
        got["at"] = time.monotonic()

    waiting = threading.Thread(target=wait)
    waiting.start()
    time.sleep(0.5)
    sent = time.monotonic()
    assert leader.turn(sid, "你好").status_code == 200
    waiting.join(10)
    assert got["view"]["turns"][0]["text"] == "你好" and got["view"]["your_turn"] is True
    assert got["at"] - sent < 2


def test_one_token_flooding_is_slowed_down_alone(crew):
    flooder, other, _ = crew(5)
    replies = [flooder.call("POST", "/api/collect/join") for _ in range(60)]
    limited = [r for r in replies if r.status_code == 429]
    assert limited and int(limited[0].headers["retry-after"]) >= 1
    assert other.call("POST", "/api/collect/join").status_code == 200


def test_serve_s_hardening_guards_the_site(site, client):
    base = site[1]
    assert client.get(f"{base}/collect", headers={"Host": "evil.example"}).status_code == 421
    token = tokens(site[0])[-1]
    cross = client.post(
        f"{base}/api/collect/join", headers={"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
    )
    assert cross.status_code == 403
    for path in ("/collect", "/api/collect/join", "/collect/static/collect.js", "/nowhere"):
        reply = client.get(base + path)
        assert reply.headers["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
    assert client.get(f"{base}/collect/static/../folder.py").status_code == 404


def test_the_admin_view_shows_progress_and_a_live_export(site, client, tmp_path):
    folder, base = site
    admin = admin_token(folder)
    progress = client.get(f"{base}/api/collect/progress", headers={"Authorization": f"Bearer {admin}"})
    assert progress.status_code == 200 and progress.json()["goals"] == 6 and progress.json()["per_goal"] == 1
    worker = tokens(folder)[0]
    assert client.get(f"{base}/api/collect/progress", headers={"Authorization": f"Bearer {worker}"}).status_code == 401
    assert client.get(f"{base}/collect/admin").status_code == 403
    assert client.get(f"{base}/collect/admin", params={"token": worker}).status_code == 403
    page = client.get(f"{base}/collect/admin", params={"token": admin, "lang": "en"})
    assert page.status_code == 200 and "Collection progress" in page.text
    for session in progress.json()["sessions"]:
        assert session["session"] in page.text
    live = client.get(f"{base}/collect/admin/export", params={"token": admin, "format": "duconv"})
    assert live.status_code == 200 and "attachment" in live.headers["content-disposition"]
    if progress.json()["finished"]:
        export_collection(folder, "duconv", tmp_path / "now.txt")
        assert live.content == (tmp_path / "now.txt").read_bytes()
    assert client.get(f"{base}/collect/admin/export", params={"token": admin, "format": "durecdial"}).status_code == 400


def test_the_page_speaks_the_browser_s_language(site, client):
    base = site[1]
    english = client.get(f"{base}/collect", headers={"Accept-Language": "en-GB,en;q=0.9,zh;q=0.5"})
    assert "Waiting for a partner" in english.text and '<html lang="en">' in english.text
    chinese = client.get(f"{base}/collect", headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert "正在等待" in chinese.text
    assert "正在等待" in client.get(f"{base}/collect", params={"lang": "zh"}, headers={"Accept-Language": "en"}).text
    assert "正在等待" in client.get(f"{base}/collect").text  # neither asked: Chinese


def test_tokens_are_random_private_and_added_while_serving(site, client, cli):
    folder, base = site
    path = folder / "workers.tsv"
    assert (
        stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(folder / "admin.token").st_mode) == 0o600
    )
    found = tokens(folder)
    assert len(set(found)) == len(found) and all(len(t) >= 32 for t in found)  # 24 random bytes, urlsafe base64
    added = cli("collect", "tokens", str(folder), "--add", "2", "--json")
    assert added.returncode == 0, added.stderr
    report = json.loads(added.stdout)
    assert report["added"] == 2 and report["workers"] == len(found) + 2
    new = tokens(folder)[-1]
    assert new not in added.stdout  # the ids are shown, never the tokens
    joined = client.post(f"{base}/api/collect/join", headers={"Authorization": f"Bearer {new}"})
    assert joined.status_code == 200  # the running server took it without a restart


@pytest.mark.slow  # a second site: DuRecDial goal sequences sampled and exported for it (about 3 s)
def test_a_durecdial_session_shows_each_role_its_part_and_exports_knowledge_per_utterance(root, client, tmp_path):
    folder, workdir = new_collection(root, "durecdial", workers=2, style="durecdial")
    with running_collection(folder, workdir) as base:
        recommender, seeker = (Worker(base, token, client) for token in tokens(folder))
        sid = pair(recommender, seeker)
        mine, theirs = recommender.view(sid), seeker.view(sid)
        assert mine["role"] == "recommender" and {"goal", "knowledge", "profile", "step"} <= set(mine)
        assert "situation" not in mine
        assert theirs["role"] == "seeker" and {"profile", "situation"} <= set(theirs)
        assert not {"goal", "knowledge", "topics", "step"} & set(theirs)
        steps = len(mine["goal"])
        fact = mine["knowledge"][0]["id"]
        last = recommender.call("POST", f"/api/collect/session/{sid}/turn", json={"text": "你好", "step": steps + 1})
        assert last.status_code == 400  # no such step
        assert seeker.call("POST", f"/api/collect/session/{sid}/turn", json={"text": "嗨"}).status_code == 409
        for n in range(8):
            body = {"text": f"第{n}句", "facts": [fact] if n % 2 == 0 else []}
            if n == 4:
                body["step"] = steps
            speaker = recommender if n % 2 == 0 else seeker
            assert speaker.call("POST", f"/api/collect/session/{sid}/turn", json=body).status_code == 200
        moved_back = recommender.call("POST", f"/api/collect/session/{sid}/turn", json={"text": "x", "step": 1})
        assert moved_back.status_code == 400  # a goal step is never taken back
        assert recommender.view(sid)["step"] == steps
        assert recommender.finish(sid).status_code == 200
    export_collection(folder, "durecdial", tmp_path / "collected.txt")
    record = json.loads((tmp_path / "collected.txt").read_text(encoding="utf-8"))
    assert record["knowledge"] == [[[*by_fact(mine, fact)]] if n % 2 == 0 else [] for n in range(8)]
    assert record["conversation"][0] == "[1] 第0句" and record["conversation"][4] == f"[{steps}] 第4句"
    assert len(record["goal_type_list"]) == len(record["goal_topic_list"]) == 8
    assert record["user_profile"] == mine["profile"] and record["collected"]["workers"]["seeker"] == "w0002"


def by_fact(view: dict, fact_id: str) -> list[str]:
    fact = next(f for f in view["knowledge"] if f["id"] == fact_id)
    return [fact["head"], fact["relation"], fact["tail"]]


def test_the_command_s_mistakes_are_one_line_each(root, site, cli, tmp_path):
    workdir, goals = duconv_goals(root)
    base = ("collect", DOMAIN, "--style", "duconv", "--workdir", str(workdir))

    def fails(*args: str) -> str:
        result = cli(*base, *args, check=False)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        return result.stderr

    assert "no such file" in fails("--goals", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "a"))
    sequences = tmp_path / "sequences.jsonl"
    Domain(DOMAIN, workdir).goals(2, sequences, style="durecdial")
    said = fails("--goals", str(sequences), "--out", str(tmp_path / "b"))
    assert f"{sequences}:1: a 'sequence' goal; a duconv collection takes one_step, two_step goals" in said
    assert not (tmp_path / "b").exists()  # refused before anything was made
    other = tmp_path / "other.jsonl"
    other.write_text(goals.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert "made from other goals" in fails("--goals", str(other), "--out", str(site[0]))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        said = fails("--goals", str(goals), "--out", str(tmp_path / "c"), "--port", str(busy.getsockname()[1]))
    assert "already in use" in said and "--port" in said
    assert (
        "is exported as duconv or kdconv"
        in cli(
            "collect", "export", str(site[0]), "--format", "durecdial", "--out", str(tmp_path / "x"), check=False
        ).stderr
    )
