"""The parts of `kgforge collect` on their own: the journal (group commit, a cut-short last line, damage named),
the exporters (hypothesis: any session gives records the seeds' readers take, with every clicked fact as gold),
turn text cleaning, the page's language, the rate limit, tokens, and what a collection folder refuses."""

from __future__ import annotations

import asyncio
import json
import os
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.collect import CollectError, Refused, add_tokens, export_collection
from kgforge.collect.collection import MAX_TEXT, clean_text
from kgforge.collect.folder import Folder, Tokens
from kgforge.collect.i18n import page_language
from kgforge.collect.journal import Journal, read_journal
from kgforge.collect.records import Checks, Collected, GoalView, Turn, Verdict
from kgforge.collect.service import Buckets
from kgforge.collect.styles import STYLES, facts_of
from kgforge.core.text import normalise_label
from kgforge.datasets.duconv.export import SESSION
from kgforge.datasets.kdconv.export import DIALOGUES
from kgforge.exports.registry import format_named

# ---------------------------------------------------------------- the journal


def test_concurrent_appends_are_all_on_disk_in_few_flushes(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)

    async def many() -> None:
        await asyncio.gather(*(journal.append({"event": "turn", "n": n}) for n in range(200)))

    asyncio.run(many())
    journal.close()
    events = list(read_journal(path, repair=False))
    assert sorted(e["n"] for e in events) == list(range(200))
    assert journal.flushes < 200  # grouped: a write and an fsync for many lines


def test_a_cut_short_last_line_is_dropped_and_cut_off_only_when_repairing(tmp_path):
    path = tmp_path / "journal.jsonl"
    Journal(path).append_now({"event": "session", "session": "s00001"})
    whole = path.read_bytes()
    path.write_bytes(whole + '{"event": "turn", "text": "半'.encode())
    assert [e["event"] for e in read_journal(path, repair=False)] == ["session"]
    assert path.read_bytes() != whole  # an export leaves a running server's line alone
    with pytest.warns(RuntimeWarning, match="incomplete last line"):
        assert [e["event"] for e in read_journal(path, repair=True)] == ["session"]
    assert path.read_bytes() == whole
    journal = Journal(path)
    journal.append_now({"event": "finish"})
    journal.close()
    assert [e["event"] for e in read_journal(path, repair=True)] == ["session", "finish"]


def test_a_damaged_line_inside_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "journal.jsonl"
    path.write_text('{"event": "session"}\nnot json\n{"event": "turn"}\n', encoding="utf-8")
    with pytest.raises(CollectError, match=r"journal.jsonl:2: not a journal line"):
        list(read_journal(path, repair=True))
    path.write_text('{"event": "session"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(CollectError, match=r"journal.jsonl:2: not a journal event"):
        list(read_journal(path, repair=True))


# ---------------------------------------------------------------- the exporters

KNOWLEDGE = [
    ["变形金刚2", "类型", "科幻"],
    ["变形金刚2", "领域", "电影"],
    ["变形金刚2", "导演", "迈克尔 · 贝"],
    ["迈克尔 · 贝", "评分", "8.1"],
    ["迈克尔 · 贝", "领域", "明星"],
    ["变形金刚2", "时光网 短评", "依然 不错 ， 最后 沙漠 场面 真 壮观"],
]
GOAL = [["START", "变形金刚2", "迈克尔 · 贝"], ["变形金刚2", "导演", "迈克尔 · 贝"]]
VIEW = GoalView(
    "g-1",
    ("变形金刚2", "迈克尔 · 贝"),
    tuple(tuple(line) for line in GOAL),
    facts_of(KNOWLEDGE),
    {"goal": GOAL, "knowledge": KNOWLEDGE, "history": [], "response": "null"},
)
SEGMENTER = STYLES.get("duconv").exports["duconv"].tools([VIEW])
CHECKS = Checks(True, ("变形金刚2", "迈克尔 · 贝"), 0, True, 0, 0, 0, True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda t: any(not c.isspace() and unicodedata.category(c) != "Cc" for c in t)  # what clean_text keeps
)
turns = st.lists(st.tuples(texts, st.lists(st.sampled_from([f"f{i}" for i in range(6)]), unique=True)), min_size=1)


def collected(lines: list[tuple[str, list[str]]]) -> Collected:
    made = tuple(
        Turn(n, STYLES.get("duconv").speaker(n), f"w{n % 2}", clean_text(text), tuple(facts), 100.0 + n, Verdict())
        for n, (text, facts) in enumerate(lines)
    )
    return Collected("s00001", "g-1", "duconv", {"leader": "w0", "follower": "w1"}, made, 100.0, 200.0, CHECKS)


@settings(max_examples=25, deadline=None)
@given(turns)
def test_a_duconv_export_is_a_session_its_readers_take_with_every_clicked_fact(lines):
    session = collected(lines)
    layout = STYLES.get("duconv").exports["duconv"]
    record = layout.record(VIEW, session, SEGMENTER)
    assert format_named("duconv").check(record, SESSION) == []
    assert ["".join(u.split()) for u in record["conversation"]] == ["".join(t.text.split()) for t in session.turns]
    assert record["knowledge_per_turn"] == [[KNOWLEDGE[int(f[1:])] for f in facts] for _, facts in lines]
    read = format_named("duconv").source_dialogue(json.loads(json.dumps(record)), 1, SESSION)
    assert read.topic_names == ["变形金刚2", "迈克尔 · 贝"] and len(read.texts) == len(lines)


@settings(max_examples=25, deadline=None)
@given(turns)
def test_a_kdconv_export_carries_each_clicked_fact_as_the_message_s_attrs(lines):
    session = collected(lines)
    record = STYLES.get("duconv").exports["kdconv"].record(VIEW, session, None)
    assert format_named("kdconv").check(record, DIALOGUES) == []
    assert [m["message"] for m in record["messages"]] == [t.text for t in session.turns]
    for message, (_, facts) in zip(record["messages"], lines):
        gold = [(a["name"], a["attrname"], a["attrvalue"]) for a in message.get("attrs", [])]
        wanted = [KNOWLEDGE[int(f[1:])] for f in facts]
        assert gold == [(normalise_label(h), normalise_label(r), t) for h, r, t in wanted]
        assert ("attrs" in message) == bool(facts)  # KdConv leaves the key out on a message without any
    read = format_named("kdconv").source_dialogue(record, 1, DIALOGUES)
    assert len(read.gold) == sum(len(facts) for _, facts in lines)


def test_a_durecdial_export_has_knowledge_and_goals_per_utterance():
    style = STYLES.get("durecdial")
    steps = (("寒暄", ""), ("电影推荐", "忍者神龟2"), ("再见", ""))
    record = {"goal": "[1] 寒暄 --> [2] 电影推荐 ( 『 忍者神龟2 』 ) --> [3] 再见", "knowledge": KNOWLEDGE[:2]}
    view = GoalView("g-2", ("忍者神龟2",), (), facts_of(KNOWLEDGE[:2]), record, {"姓名": "郭浩然"}, "聊天时间", steps)
    spoken = [("你好", (), 1), ("你好呀", (), 1), ("推荐你看科幻片", ("f0",), 2), ("好的", (), 2), ("再见", (), 3)]
    made = tuple(Turn(n, style.speaker(n), "w", t, f, 1.0, Verdict(), s) for n, (t, f, s) in enumerate(spoken))
    out = style.exports["durecdial"].record(view, Collected("s1", "g-2", "durecdial", {}, made, 0.0, 2.0, CHECKS), None)
    assert out["conversation"] == ["[1] 你好", "你好呀", "[2] 推荐你看科幻片", "好的", "[3] 再见"]
    assert out["knowledge"] == [[], [], [KNOWLEDGE[0]], [], []]
    assert out["goal_type_list"] == ["寒暄", "寒暄", "电影推荐", "电影推荐", "再见"]
    assert out["goal_topic_list"] == ["NULL", "NULL", "忍者神龟2", "忍者神龟2", "NULL"]
    assert out["user_profile"] == {"姓名": "郭浩然"} and out["situation"] == "聊天时间"


# ---------------------------------------------------------------- what a worker sends


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=1200))
def test_a_kept_text_is_one_line_of_at_most_the_limit_or_refused(text):
    said = "".join(c for c in text if not c.isspace() and unicodedata.category(c) != "Cc")  # what must survive
    try:
        kept = clean_text(text)
    except Refused as exc:
        assert exc.status == 400 and (not said or len(text) > MAX_TEXT)
        return
    assert kept and len(kept) <= MAX_TEXT and kept == kept.strip()
    assert not any(unicodedata.category(c) == "Cc" for c in kept)  # no line break, no control character
    assert "".join(kept.split()) == said


@pytest.mark.parametrize(
    ("asked", "header", "chosen"),
    [
        (None, "en-US,en;q=0.9", "en"),
        (None, "fr-FR,fr;q=0.9,en;q=0.5,zh;q=0.4", "en"),
        (None, "en;q=0.3,zh-CN;q=0.8", "zh"),
        (None, "fr", "zh"),
        (None, "", "zh"),
        (None, "en;q=0, zh;q=garbage", "zh"),
        ("en", "zh-CN", "en"),
        ("EN", "", "en"),
        ("de", "en", "en"),
    ],
)
def test_the_page_language(asked, header, chosen):
    assert page_language(asked, header) == chosen


def test_the_rate_limit_refills_over_time():
    now = [0.0]
    buckets = Buckets(rate=2.0, burst=3.0, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [None, None, None]
    assert buckets.take("a") == pytest.approx(0.5)
    assert buckets.take("b") is None  # another worker's bucket
    now[0] = 0.5
    assert buckets.take("a") is None and buckets.take("a") is not None


def test_tokens_are_compared_by_value_and_none_is_anyone_s():
    tokens = Tokens([("tok-a", "w0001"), ("tok-b", "w0002")], "adm")
    assert tokens.worker("tok-a") == "w0001" and tokens.worker("tok-b") == "w0002"
    assert tokens.worker("tok-") is None and tokens.worker("adm") is None and tokens.worker("\udcff") is None
    assert tokens.is_admin("adm") and not tokens.is_admin("tok-a") and not tokens.is_admin("")


# ---------------------------------------------------------------- folders


def test_a_folder_that_is_no_collection_is_one_clear_error(tmp_path, cli):
    for args in (
        ("collect", "tokens", str(tmp_path), "--add", "1"),
        ("collect", "export", str(tmp_path), "--format", "duconv", "--out", str(tmp_path / "x")),
    ):
        result = cli(*args, check=False)
        assert result.returncode == 1 and "is not a collection folder" in result.stderr
        assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    with pytest.raises(CollectError, match="not a collection folder"):
        add_tokens(tmp_path, 1)


def test_workers_tsv_damage_is_named(tmp_path):
    folder = Folder(tmp_path)
    (tmp_path / "workers.tsv").write_text("token\tworker\nabc\tw0001\nbroken line\n", encoding="utf-8")
    with pytest.raises(CollectError, match=r"workers.tsv:3: expected TOKEN<TAB>WORKER"):
        folder.workers()
    (tmp_path / "workers.tsv").write_text("abc\tw0001\nabc\tw0002\n", encoding="utf-8")
    with pytest.raises(CollectError, match="appears twice"):
        folder.workers()


def test_new_workers_get_the_next_ids_and_private_files(tmp_path):
    folder = Folder(tmp_path)
    assert folder.add_workers(2) == ["w0001", "w0002"]
    assert folder.add_workers(1) == ["w0003"]
    assert os.stat(tmp_path / "workers.tsv").st_mode & 0o777 == 0o600
    assert not list(Path(tmp_path).glob("*.part*"))
    assert len({t for t, _ in folder.workers()}) == 3


def test_an_export_names_what_it_cannot_write(tmp_path):
    with pytest.raises(CollectError, match="not a collection folder"):
        export_collection(tmp_path, "duconv", tmp_path / "out.txt")
