"""`kgforge ground` on the real KdConv dev sets: gold attrs recovered, scores recomputed here, claims that
catch corrupted values; value normalisation as properties."""

from __future__ import annotations

import copy
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge import Domain
from kgforge.grounding import GroundReport
from kgforge.grounding.corruption import shifted_digits
from kgforge.grounding.matching import MatchOptions, amounts
from kgforge.grounding.normalise import form, value_key
from tests.conftest import run_cli, shared_file

# measured on the shared dev sets (docs/grounding.md), the shipped model (trained on them): travel 0.965, film 0.876,
# music 0.883 (the rules alone 0.957, 0.871, 0.876); the floors sit under them to catch a regression (0.85 asked)
F1_FLOORS = {"travel": 0.95, "film": 0.865, "music": 0.865}
HAND_RULES = MatchOptions(model="rules")  # the hand-made cases below are the rules' (see test_grounding_rules.py)


def build_kdconv_domain(domain: str, workdir: Path) -> None:
    """travel from KdConv's travel KB; film and music (whose KBs are not shared) from their dev sets' attrs."""
    source = (
        f"kdconv:{shared_file('kdconv/travel/kb_travel.json')}"
        if domain == "travel"
        else f"kdconv-dialogues:{shared_file(f'kdconv/{domain}/dev.json')}"
    )
    run_cli("build", domain, "--source", source, "--workdir", str(workdir))


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("kg")
    for domain in ("travel", "film", "music"):
        build_kdconv_domain(domain, workdir)
    return workdir


def triple(attr: dict) -> tuple[str, str, str]:
    return form(attr["name"]), attr["attrname"].strip(), form(attr["attrvalue"])


def reference_scores(gold_dialogues: list[dict], predicted: list[list[list[dict]]]) -> tuple[dict, dict]:
    """Micro and per-relation (tp, fp, fn) computed independently of kgforge's tally."""
    micro, per = [0, 0, 0], {}
    for dialogue, messages in zip(gold_dialogues, predicted):
        for message, attrs in zip(dialogue["messages"], messages):
            gold = {triple(a) for a in message.get("attrs", [])}
            said = {triple(a) for a in attrs}
            for group, found in ((gold & said, 0), (said - gold, 1), (gold - said, 2)):
                for t in group:
                    micro[found] += 1
                    per.setdefault(t[1], [0, 0, 0])[found] += 1
    return {"tp": micro[0], "fp": micro[1], "fn": micro[2]}, per


def f1(counts: dict) -> float:
    return 2 * counts["tp"] / (2 * counts["tp"] + counts["fp"] + counts["fn"])


@pytest.mark.slow  # grounds the real KdConv dev sets of three domains
@pytest.mark.parametrize("domain", ["travel", "film", "music"])
def test_gold_attrs_recovered_and_scored(kg, tmp_path, domain):
    gold = json.loads(shared_file(f"kdconv/{domain}/dev.json").read_text(encoding="utf-8"))
    stripped = copy.deepcopy(gold)
    for dialogue in stripped:
        for message in dialogue["messages"]:
            message.pop("attrs", None)
    (tmp_path / "in.json").write_text(json.dumps(stripped, ensure_ascii=False), encoding="utf-8")
    report = Domain(domain, kg).ground(tmp_path / "in.json", tmp_path / "out.json")
    assert report.micro is None  # nothing to score: no gold in the input
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    predicted = [[m["attrs"] for m in d["messages"]] for d in out]
    micro, per = reference_scores(gold, predicted)
    assert f1(micro) >= F1_FLOORS[domain]

    # the same file with its gold: attrs untouched, the same predictions beside them, the same figures
    scored = Domain(domain, kg).ground(shared_file(f"kdconv/{domain}/dev.json"), tmp_path / "scored.json")
    again = json.loads((tmp_path / "scored.json").read_text(encoding="utf-8"))
    for original, grounded in zip(gold, again):
        for message, row in zip(original["messages"], grounded["messages"]):
            assert row.get("attrs") == message.get("attrs")
    assert [[m["predicted_attrs"] for m in d["messages"]] for d in again] == predicted
    assert (scored.micro.tp, scored.micro.fp, scored.micro.fn) == (micro["tp"], micro["fp"], micro["fn"])
    assert scored.micro.f1 == pytest.approx(f1(micro))
    for relation, (tp, fp, fn) in per.items():
        score = scored.per_relation[relation]
        assert (score.tp, score.fp, score.fn) == (tp, fp, fn)


# ---------------------------------------------------------------- claims against corrupted values

_DIGITS = re.compile(r"\d+")


def corrupt(value: str, rng: random.Random, other_places: list[str]) -> str | None:
    """A different value of the same shape: numbers changed (sometimes 元 swapped for 美元), or another place."""
    if _DIGITS.search(value):
        return shifted_digits(value, rng)  # kgforge.grounding.corruption's: the library's own corrupted copies
    return rng.choice(other_places) if other_places else None


def corrupt_dev_set() -> tuple[list[dict], list[tuple[int, int]]]:
    """The travel dev set with the value replaced in every message whose gold value occurs verbatim
    (Information left out), its attrs removed; and the (dialogue, message) places changed."""
    gold = json.loads(shared_file("kdconv/travel/dev.json").read_text(encoding="utf-8"))
    kb = json.loads(shared_file("kdconv/travel/kb_travel.json").read_text(encoding="utf-8"))
    rng = random.Random(28)
    dialogues, changed = copy.deepcopy(gold), []
    for d, dialogue in enumerate(dialogues):
        for m, message in enumerate(dialogue["messages"]):
            message.pop("attrs", None)
            for attr in gold[d]["messages"][m].get("attrs", []):
                value = attr["attrvalue"]
                if attr["attrname"] == "Information" or value not in message["message"]:
                    continue
                near = {t[2] for t in kb.get(attr["name"], []) if t[1] == "周边景点"}
                others = (
                    sorted(
                        name
                        for name in kb
                        if name not in near and name != attr["name"] and name not in message["message"]
                    )
                    if attr["attrname"] == "周边景点"
                    else []
                )
                new = corrupt(value, rng, others)
                if new and new != value:
                    message["message"] = message["message"].replace(value, new)
                    changed.append((d, m))
                    break
    return dialogues, changed


@pytest.mark.slow  # grounds the real KdConv travel dev set with corrupted values
def test_corrupted_values_are_contradicted(kg, tmp_path):
    dialogues, changed = corrupt_dev_set()
    (tmp_path / "corrupt.json").write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    Domain("travel", kg).ground(tmp_path / "corrupt.json", tmp_path / "out.json")
    out = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    caught = sum(any(c["status"] == "contradicted" for c in out[d]["messages"][m]["claims"]) for d, m in changed)
    assert len(changed) > 300
    assert caught / len(changed) >= CAUGHT_FLOOR

    Domain("travel", kg).ground(shared_file("kdconv/travel/dev.json"), tmp_path / "clean.json")
    clean = json.loads((tmp_path / "clean.json").read_text(encoding="utf-8"))
    gold_messages = [m for d in clean for m in d["messages"] if m.get("attrs")]
    flagged = sum(any(c["status"] == "contradicted" for c in m["claims"]) for m in gold_messages)
    assert flagged / len(gold_messages) <= 0.02


@pytest.mark.slow  # grounds the travel dev set in two fresh processes
def test_the_grounding_does_not_depend_on_what_else_the_process_did_with_jieba(kg, tmp_path):
    """Whether a name is an ordinary word is read from jieba's own dictionary, whether or not anything in the
    process loaded jieba's default tokenizer before (an export does): the same file either way."""
    script = (
        "import sys\n"
        "from kgforge import Domain\n"
        "if sys.argv[1] == 'after-jieba':\n"
        "    import jieba\n"
        "    jieba.initialize()\n"
        "Domain('travel', sys.argv[2]).ground(sys.argv[3], sys.argv[4])\n"
    )
    dev = shared_file("kdconv/travel/dev.json")
    for how in ("fresh", "after-jieba"):
        command = [sys.executable, "-c", script, how, str(kg), str(dev), str(tmp_path / f"{how}.json")]
        subprocess.run(command, check=True, capture_output=True)
    assert (tmp_path / "fresh.json").read_bytes() == (tmp_path / "after-jieba.json").read_bytes()


CAUGHT_FLOOR = 0.9


# ---------------------------------------------------------------- value normalisation

_WIDE = str.maketrans("0123456789:-", "０１２３４５６７８９：－")


@given(st.integers(1, 9999))
def test_a_price_and_its_writings_share_a_key(n):
    assert (
        value_key(f"{n}元")
        == value_key(str(n))
        == value_key(f"{n}块")
        == value_key(f"人民币{n}")
        == value_key(f"{n}元".translate(_WIDE))
    )
    assert value_key(f"{n}元") != value_key(f"{n}美元")
    assert value_key(f"{n}元") != value_key(f"{n + 1}元")


@given(
    st.integers(0, 10**7),
    st.sampled_from(["万", "亿", "元", "美元", "kg", "cm", "小时", "年前", "届", "%"]),
    st.integers(1, 3),
)
def test_an_amount_is_its_number_and_unit_however_written(n, unit, zeros):
    """What the claims compare: 1250.0万 is 1250万, 0054kg is 54kg, 180厘米 is 180cm; another number never is."""

    def said(text: str) -> list[tuple[str, str]]:
        return [(number, unit) for _, _, number, unit in amounts(form(text))]

    assert said(f"{n}.{'0' * zeros}{unit}") == said(f"{'0' * zeros}{n}{unit}") == said(f"{n}{unit}")
    assert said(f"{n}{unit}") != said(f"{n + 1}{unit}")
    assert said(f"{n}公斤") == said(f"{n}KG") and said(f"{n}厘米") == said(f"{n}cm")


@given(st.dates())
def test_a_date_and_its_writings_share_a_key(day):
    y, m, d = day.year, day.month, day.day
    writings = [f"{y}年{m:02d}月{d:02d}日", f"{y}年{m}月{d}日", f"{y}-{m}-{d}", f"{y}/{m:02d}/{d:02d}", f"{y}.{m}.{d}"]
    assert len({value_key(w) for w in writings if y >= 1000}) <= 1


@given(st.dates(), st.dates())
def test_different_dates_never_share_a_key(a, b):
    if a != b and a.year >= 1000 and b.year >= 1000:
        assert value_key(f"{a.year}年{a.month}月{a.day}日") != value_key(f"{b.year}-{b.month}-{b.day}")


@given(st.integers(0, 23), st.integers(0, 59), st.integers(0, 23), st.integers(0, 59))
def test_time_ranges_in_any_order_and_writing(h1, m1, h2, m2):
    first, second = f"周一{h1}:{m1:02d}-{h2}:{m2:02d}", f"周二{h2}:{m2:02d}-{h1}:{m1:02d}"
    assert value_key(f"{first}，{second}") == value_key(f"{second}；{first}".translate(_WIDE))
    assert value_key(f"{h1}:{m1:02d}至{h2}:{m2:02d}") == value_key(f"{h1:02d}:{m1:02d}~{h2}:{m2:02d}")
    if (h1, m1) != (h2, m2):
        assert value_key(f"{h1}:{m1:02d}-{h2}:{m2:02d}") != value_key(f"{h2}:{m2:02d}-{h1}:{m1:02d}")


@given(st.sampled_from(["延庆", "密云", "平谷", "怀柔"]))
def test_county_and_district_and_traditional_script(place):
    assert value_key(f"北京市{place}县") == value_key(f"北京市{place}区")
    assert value_key("門票免費") == value_key("门票免费")


_TRADITIONAL = [
    ("門", "门"),
    ("開", "开"),
    ("時", "时"),
    ("間", "间"),
    ("費", "费"),
    ("園", "园"),
    ("館", "馆"),
    ("東", "东"),
    ("臺", "台"),
    ("灣", "湾"),
    ("國", "国"),
    ("電", "电"),
    ("影", "影"),
    ("樂", "乐"),
]
_FULL_WIDTH = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}  # ASCII ! to ~ and their full-width forms


@given(
    st.lists(st.sampled_from(_TRADITIONAL), min_size=1, max_size=8),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=8),
)
def test_traditional_and_full_width_writings_share_a_form_and_key(pairs, ascii_text):
    traditional = "".join(t for t, _ in pairs) + "".join(_FULL_WIDTH[c] for c in ascii_text)
    simplified = "".join(s for _, s in pairs) + ascii_text
    assert form(traditional) == form(simplified)
    assert value_key(traditional) == value_key(simplified)


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(["元", "块", "美元", "小时", "天", ""]))
def test_different_amounts_never_share_a_key(a, b, unit):
    if a != b:
        assert value_key(f"{a}{unit}") != value_key(f"{b}{unit}")
        assert value_key(f"{a}元") != value_key(f"{b}块")


# ---------------------------------------------------------------- DuConv


@pytest.fixture(scope="module")
def duconv_kg(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("duconv")
    source = shared_file("duconv/dev.head250.jsonl")
    run_cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir))
    return workdir


def ground_duconv_file(kg: Path, source: Path, out: Path) -> tuple[GroundReport, list[dict]]:
    report = Domain("duconv", kg).ground(source, out, fmt="duconv")
    return report, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def duconv_grounded(duconv_kg, tmp_path_factory) -> tuple[list[dict], list[dict]]:
    source = shared_file("duconv/dev.head250.jsonl")
    report, grounded = ground_duconv_file(duconv_kg, source, tmp_path_factory.mktemp("out") / "grounded.jsonl")
    assert report.messages > 2000
    sessions = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    return sessions, grounded


def test_duconv_hand_checked_session(duconv_grounded):
    sessions, grounded = duconv_grounded
    first = grounded[0]
    assert {k: v for k, v in first.items() if k != "grounding"} == sessions[0]  # the session itself unchanged
    assert len(first["grounding"]) == len(first["conversation"])
    stated = [[tuple(first["knowledge"][i]) for i in g["knowledge"]] for g in first["grounding"]]
    assert ("王牌", "类型", "剧情") in stated[0]  # 喜欢 看 剧情 电影 吗
    assert first["grounding"][2]["topics"] == ["王牌"] and stated[2] == []  # a topic named, no fact stated
    assert stated[4] == [("林志玲", "评论", "兩岸 男人 的 唯一 共識")]  # Traditional comment, Simplified utterance
    assert {("林志玲", "代表作", "富春山居图"), ("林志玲", "体重", "54kg")} <= set(stated[6])
    assert stated[3] == stated[5] == stated[7] == []


def test_every_utterance_naming_an_object_is_grounded_to_its_triple(duconv_grounded):
    """Checked on words: a short object whose words occur, in order and whole, among the utterance's."""
    _, grounded = duconv_grounded
    relation_words = {"导演", "主演", "类型", "国家", "评论", "代表作"}
    checked = 0
    for session in grounded:
        for utterance, row in zip(session["conversation"], session["grounding"]):
            words = utterance.split()
            for i, (_, _, tail) in enumerate(session["knowledge"]):
                said = tail.split()
                if len(said) > 3 or len("".join(said)) < 2 or "".join(said) in relation_words:
                    continue
                if any(words[j : j + len(said)] == said for j in range(len(words) - len(said) + 1)):
                    checked += 1
                    assert i in row["knowledge"], (utterance, tail)
    assert checked > 500


def test_duconv_claims_a_supported_one_per_triple_stated(duconv_grounded):
    sessions, grounded = duconv_grounded
    for session in grounded:
        for utterance, row in zip(session["conversation"], session["grounding"]):
            supported = [c for c in row["claims"] if c["status"] == "supported"]
            stated = [session["knowledge"][i] for i in row["knowledge"]]
            assert [[c["name"], c["attrname"], c["graph"][0]] for c in supported] == stated
            assert all(utterance[slice(*c["span"])] == c["said"] for c in row["claims"])
    first = grounded[0]["grounding"][6]["claims"]  # 才 54kg: the weight said is the weight held
    assert {"name": "林志玲", "attrname": "体重", "said": "54kg", "span": [14, 18], "graph": ["54kg"]} in [
        {k: v for k, v in c.items() if k not in ("status", "score")} for c in first
    ]


def changed_numbers(sessions: list[dict], grounded: list[dict]) -> tuple[list[dict], list[tuple[int, int]]]:
    """The sessions with the numbers changed in every utterance that states a triple with a number by saying its
    object as written (其 票房 7.11亿, 评分 5.1, 54kg, 10 年前 上映); and the (session, utterance) places changed."""
    rng = random.Random(28)
    changed_sessions, changed = copy.deepcopy(sessions), []
    for s, (session, done) in enumerate(zip(changed_sessions, grounded)):
        for u, row in enumerate(done["grounding"]):
            tails = [session["knowledge"][i][2] for i in row["knowledge"]]
            said = next((t for t in tails if _DIGITS.search(t) and t in session["conversation"][u]), None)
            if said is not None:
                session["conversation"][u] = session["conversation"][u].replace(said, corrupt(said, rng, []) or said)
                changed.append((s, u))
    return changed_sessions, changed


def test_duconv_changed_numbers_are_contradicted(duconv_kg, duconv_grounded, tmp_path):
    """As for KdConv travel: a number said in place of the session's own is contradicted (ratings, box office,
    weights, how many years ago), and the unchanged utterances are rarely flagged."""
    sessions, grounded = duconv_grounded
    changed_sessions, changed = changed_numbers(sessions, grounded)
    path = tmp_path / "changed.jsonl"
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in changed_sessions), encoding="utf-8")
    report, out = ground_duconv_file(duconv_kg, path, tmp_path / "out.jsonl")
    contradicted = [any(c["status"] == "contradicted" for c in out[s]["grounding"][u]["claims"]) for s, u in changed]
    assert len(changed) > 50 and sum(contradicted) / len(changed) >= CAUGHT_FLOOR
    assert report.claims["contradicted"] >= sum(contradicted)
    rows = [row for session in grounded for row in session["grounding"]]
    flagged = sum(any(c["status"] == "contradicted" for c in row["claims"]) for row in rows)
    assert flagged / len(rows) <= 0.02


def test_cli_json_and_a_bad_record(kg, tmp_path):
    gold = json.loads(shared_file("kdconv/travel/dev.json").read_text(encoding="utf-8"))[:2]
    (tmp_path / "two.json").write_text(json.dumps(gold, ensure_ascii=False), encoding="utf-8")
    done = run_cli(
        "ground",
        "travel",
        "--dialogues",
        str(tmp_path / "two.json"),
        "--out",
        str(tmp_path / "o.json"),
        "--workdir",
        str(kg),
        "--json",
    )
    report = json.loads(done.stdout)
    assert report["dialogues"] == 2 and report["scores"]["micro"]["tp"] > 0 and report["claims"]["supported"] > 0
    bad = gold + [{"name": "故宫", "messages": "not a list"}]
    (tmp_path / "bad.json").write_text(json.dumps(bad, ensure_ascii=False, indent=1), encoding="utf-8")
    failed = run_cli(
        "ground",
        "travel",
        "--dialogues",
        str(tmp_path / "bad.json"),
        "--out",
        str(tmp_path / "b.json"),
        "--workdir",
        str(kg),
        check=False,
    )
    assert failed.returncode == 1 and "bad.json:" in failed.stderr and "not a KdConv dialogue" in failed.stderr
    assert "Traceback" not in failed.stderr and not (tmp_path / "b.json").exists()


# ---------------------------------------------------------------- claims on short literal values


def small_index():
    from kgforge.grounding.index import GroundingIndex, make_fact

    def facts(subject: str, *pairs: tuple[str, str]) -> list:
        return [make_fact(subject, relation, value, None, False, 24) for relation, value in pairs]

    return GroundingIndex(
        names={"a": ["星际穿越"], "b": ["天使爱美丽"], "c": ["故宫"]},
        facts_of={
            "a": facts("a", ("国家", "美国"), ("类型", "科幻")),
            "b": facts("b", ("国家", "法国")),
            "c": facts("c", ("门票", "旺季60元，淡季40元"), ("开放时间", "8:30-17:00")),
        },
        relation_words={"国家", "类型", "门票", "开放时间"},
    )


def claims_of(index, topics: list[str], message: str) -> list[tuple[str, str | None, str, str]]:
    from kgforge.grounding.matching import DialogueMatcher

    _, said = DialogueMatcher(index, topics, HAND_RULES).message(message)
    return [(index.label(c.subject), c.relation, c.said, c.status) for c in said]


def test_a_word_valued_literal_said_against_the_subject_is_contradicted():
    index = small_index()
    assert claims_of(index, ["星际穿越"], "它是法国拍的。") == [("星际穿越", "国家", "法国", "contradicted")]
    assert claims_of(index, ["星际穿越"], "它是美国拍的。") == [("星际穿越", "国家", "美国", "supported")]
    # 法国 is the country of the other film in focus: said of it, not against 星际穿越
    assert claims_of(index, ["星际穿越", "天使爱美丽"], "法国的那部我也看过。") == [
        ("天使爱美丽", "国家", "法国", "supported")
    ]


def test_phrase_valued_relations_are_not_judged_word_by_word():
    """门票 and 开放时间 hold phrases with numbers (a closed vocabulary they are not): their words are no
    values the automaton of short literals holds, so a message about a place is not judged by them."""
    index = small_index()
    automaton = index.literal_automaton
    assert "法国" in automaton.keys and "科幻" in automaton.keys
    assert "淡季" not in automaton.keys and "旺季60元" not in automaton.keys


# ---------------------------------------------------------------- stretches that state more than one fact


def facts_stated(index, topics: list[str], message: str) -> set[tuple[str, str, str]]:
    from kgforge.grounding.matching import DialogueMatcher

    found, _ = DialogueMatcher(index, topics, HAND_RULES).message(message)
    return {(index.label(s.fact.subject), s.fact.relation, s.fact.value) for s in found}


def test_values_said_together_are_each_stated():
    """第64届、74届…提名 says two awards with their common words once: each is stated by most of its
    characters and all of its numbers, and the longer stretch does not hide the other; an award whose
    number is not said is not."""
    from kgforge.grounding.index import GroundingIndex, make_fact

    awards = ["第64届奥斯卡奖最佳男配角提名", "第74届奥斯卡奖最佳男配角提名", "第81届奥斯卡奖最佳男配角提名"]
    index = GroundingIndex(
        names={"k": ["本金斯利"]}, facts_of={"k": [make_fact("k", "主要成就", a, None, False, 24) for a in awards]}
    )
    assert facts_stated(index, ["本金斯利"], "第64届、74届奥斯卡奖最佳男配角提名。") == {
        ("本金斯利", "主要成就", awards[0]),
        ("本金斯利", "主要成就", awards[1]),
    }


def test_two_relations_named_in_full_with_one_value():
    from kgforge.grounding.index import GroundingIndex, make_fact

    index = GroundingIndex(
        names={"f": ["可可西里"], "p": ["陆川"]},
        facts_of={
            "f": [
                make_fact("f", "导演", "陆川", "p", False, 24),
                make_fact("f", "编剧", "陆川", "p", False, 24),
                make_fact("f", "制片人", "陆川", "p", False, 24),
            ]
        },
        types_of={"f": frozenset({"电影"}), "p": frozenset({"人物"})},
    )
    assert facts_stated(index, ["可可西里"], "它的编剧和导演都是陆川。") == {
        ("可可西里", "编剧", "陆川"),
        ("可可西里", "导演", "陆川"),
    }
    assert facts_stated(index, ["可可西里"], "导演是陆川。") == {("可可西里", "导演", "陆川")}


def test_one_name_of_two_entities_relates_neither():
    """The album 孙燕姿 and its singer 孙燕姿: the name said once is not the album's 专辑歌手."""
    from kgforge.grounding.index import GroundingIndex, make_fact

    index = GroundingIndex(
        names={"album": ["孙燕姿（孙燕姿同名专辑）"], "singer": ["孙燕姿"], "other": ["风筝"]},
        facts_of={
            "album": [make_fact("album", "专辑歌手", "孙燕姿", "singer", False, 24)],
            "other": [make_fact("other", "专辑歌手", "孙燕姿", "singer", False, 24)],
        },
        types_of={"album": frozenset({"专辑"}), "other": frozenset({"专辑"}), "singer": frozenset({"歌手"})},
    )
    assert facts_stated(index, ["风筝"], "是孙燕姿的专辑。") == {("风筝", "专辑歌手", "孙燕姿")}


@pytest.mark.slow  # grounds the real film dev set twice
def test_trying_only_the_facts_a_message_could_state_changes_nothing(kg, tmp_path, monkeypatch):
    """The matcher tries, for each entity in focus, only the facts a message could state (names, parts,
    shared runs of characters); trying every fact instead grounds the film dev set the same way."""
    from kgforge.grounding.facts import SubjectFacts

    dev = shared_file("kdconv/film/dev.json")
    fast = Domain("film", kg).ground(dev, tmp_path / "fast.json")
    monkeypatch.setattr(SubjectFacts, "tried", lambda self, message, mentioned, grams: list(self.facts))
    slow = Domain("film", kg).ground(dev, tmp_path / "slow.json")
    assert (tmp_path / "fast.json").read_text(encoding="utf-8") == (tmp_path / "slow.json").read_text(encoding="utf-8")
    assert fast.micro == slow.micro


def test_a_value_is_also_said_without_what_the_graph_adds_to_it():
    """162分钟(公映版) is said 162分钟, 西蒙比尤弗伊simonbeaufoy 西蒙比尤弗伊, 1984年10月18日 also 84年 — and
    a different length or year is not the value."""
    from kgforge.grounding.index import GroundingIndex, make_fact

    index = GroundingIndex(
        names={"f": ["阿凡达"], "p": ["芙蕾达平托"]},
        facts_of={
            "f": [
                make_fact("f", "片长", "162分钟(公映版)", None, False, 24),
                make_fact("f", "编剧", "西蒙比尤弗伊simonbeaufoy", None, False, 24),
            ],
            "p": [make_fact("p", "出生日期", "1984年10月18日", None, False, 24)],
        },
    )
    assert facts_stated(index, ["阿凡达"], "片长达到了162分钟。") == {("阿凡达", "片长", "162分钟(公映版)")}
    assert facts_stated(index, ["阿凡达"], "片长达到了126分钟。") == set()
    assert facts_stated(index, ["阿凡达"], "编剧是西蒙·比尤弗伊。") == {("阿凡达", "编剧", "西蒙比尤弗伊simonbeaufoy")}
    assert facts_stated(index, ["芙蕾达平托"], "84年出生的她，今年三十五岁。") == {
        ("芙蕾达平托", "出生日期", "1984年10月18日")
    }
    assert facts_stated(index, ["芙蕾达平托"], "85年出生的她。") == set()


# pieces values are written with: names, dates, numbers, separators, brackets, Latin spellings, widths
_VALUE_PIECES = ["电影", "导演", "1984年10月18日", "2004年6月", "162分钟", "(公映版)", "（美国）", "simon", "ＡＢ"]
_VALUE_PIECES += ["１２", "、", "，", ";", "/", "|", "《", "》", "“", "”", "(", "）", "·", "。", "！", "等", "年"]
_VALUE_PIECES += ['"', " ", "\u3000"]


@given(st.lists(st.sampled_from(_VALUE_PIECES), max_size=6).map("".join))
def test_a_plain_value_has_itself_as_its_only_part_as_the_general_rule_says(value):
    """``value_forms`` skips the splitting of a value with no separator, bracket, Latin letter or 年; the
    general rule gives every value the same parts."""
    from kgforge.grounding.index import value_form, value_forms, value_parts

    whole = value_form(value)
    assert value_forms(value) == (whole, value_parts(value, whole))


@given(st.lists(st.sampled_from(_VALUE_PIECES), max_size=6).map("".join))
def test_a_literals_list_words_are_its_split_parts_in_matching_form(value):
    """``list_words`` gives a value with no separator its form without splitting; the split gives the same."""
    from kgforge.grounding.index import _LIST_SEPARATORS, _TRAILING, list_words

    assert list_words(value) == tuple(_TRAILING.sub("", form(part)) for part in _LIST_SEPARATORS.split(value))


def test_a_subjects_facts_come_in_relation_then_value_order():
    """The fact table groups rows by a hash group-by (no sort of the whole graph) and reads labels per subject;
    each subject's facts are still listed by relation label, then value, whatever order the rows came in."""
    import polars as pl

    from kgforge.grounding.index import FactTable, FactVocabulary

    rows = [("b", "r:导演", "p1", True), ("a", "r:类型", "剧情", False), ("b", "r:主演", "p2", True)]
    rows += [("b", "r:导演", "王五", False), ("a", "r:上映时间", "2004年", False), ("b", "r:主演", "甲乙", False)]
    rows += [("b", "r:主演", "p3", True)]  # p3 has no label: its IRI is its value
    frame = pl.DataFrame(rows, schema=["s", "p", "o", "o_is_entity"], orient="row")
    relation = {"r:导演": "导演", "r:类型": "类型", "r:主演": "主演", "r:上映时间": "上映时间"}
    table = FactTable.from_frame(
        frame.sample(fraction=1.0, shuffle=True, seed=7),
        24,
        FactVocabulary(relation, frozenset(), {"p1": "张三", "p2": "李四"}),
    )
    assert [(f.relation, f.value, f.value_entity) for f in table.get("a")] == [
        ("上映时间", "2004年", None),
        ("类型", "剧情", None),
    ]
    assert [(f.relation, f.value, f.value_entity) for f in table.get("b")] == [
        ("主演", "p3", "p3"),
        ("主演", "李四", "p2"),
        ("主演", "甲乙", None),
        ("导演", "张三", "p1"),
        ("导演", "王五", None),
    ]
    assert table.get("missing") == []


# ---------------------------------------------------------------- claims against the entity in focus with values of the kind


def kinds_index():
    """A film whose 主演 are people, a person with no entity values, an album counted in 首 by the graph (one of
    its numbers written bare), and a person's numbered awards."""
    from kgforge.grounding.index import GroundingIndex, make_fact

    return GroundingIndex(
        names={
            "film": ["教父3"],
            "actor": ["安迪·加西亚"],
            "other": ["凯西·贝茨"],
            "album": ["认了吧"],
            "album2": ["美妙生活"],
            "singer": ["林宥嘉"],
        },
        facts_of={
            "film": [make_fact("film", "主演", "安迪·加西亚", "actor", False, 24)],
            "actor": [make_fact("actor", "职业", "演员", None, False, 24)],
            "album": [make_fact("album", "曲目数量", "12", None, False, 24)],
            "album2": [make_fact("album2", "曲目数量", "10首", None, False, 24)],
            "singer": [make_fact("singer", "主要成就", "第14届全球华语榜中榜最佳新晋歌手", None, False, 24)],
        },
        types_of={"actor": frozenset({"star"}), "other": frozenset({"star"})},
        relation_words={"主演", "职业", "曲目数量", "主要成就"},
    )


def test_a_name_is_checked_against_the_first_entity_in_focus_with_values_of_its_kind():
    """安迪·加西亚, first in focus, holds no people; the film after him does: a person named who is none of its
    主演 is contradicted against the film, as a number is against the first entity with values of its unit."""
    index = kinds_index()
    said = claims_of(index, ["教父3", "安迪·加西亚"], "主演还有凯西·贝茨。")
    assert ("教父3", "主演", "凯西·贝茨", "contradicted") in said
    assert not any(c[3] == "contradicted" for c in claims_of(index, ["教父3", "安迪·加西亚"], "主演是安迪·加西亚。"))


def test_a_number_with_a_counter_of_the_graphs_is_checked_against_the_relations_values():
    """The graph writes 10首 for one album's 曲目数量, so 首 counts that relation: 15首 said of an album holding 12
    (written bare) is contradicted, 12首 is not, and 首 after a number no one in focus counts is left alone."""
    index = kinds_index()
    assert index.counted_by == {"曲目数量": frozenset({"首"})}
    assert ("认了吧", "曲目数量", "15", "contradicted") in claims_of(index, ["认了吧"], "这张专辑收录了15首歌。")
    assert not any(c[3] == "contradicted" for c in claims_of(index, ["认了吧"], "这张专辑收录了12首歌。"))
    assert not any(c[3] == "contradicted" for c in claims_of(index, ["教父3"], "我听了15首歌。"))


def test_a_numbered_value_said_with_other_numbers_is_contradicted():
    """The words of 林宥嘉's award with another edition are a wrong value of his, said of him (in focus); the
    award as the graph writes it is not; and no one in focus holding those words, nothing is claimed (a graph of
    dialogues' attrs holds few of anyone's awards)."""
    index = kinds_index()
    wrong = claims_of(index, ["林宥嘉"], "他获得了第15届全球华语榜中榜最佳新晋歌手。")
    assert ("林宥嘉", "主要成就", "第15届全球华语榜中榜最佳新晋歌手", "contradicted") in wrong
    right = claims_of(index, ["林宥嘉"], "他获得了第14届全球华语榜中榜最佳新晋歌手。")
    assert not any(c[3] == "contradicted" for c in right)
    assert not any(c[3] == "contradicted" for c in claims_of(index, ["教父3"], "第15届全球华语榜中榜最佳新晋歌手。"))


def test_a_word_jieba_does_not_cut_is_left_to_the_claims_stage():
    """巴西 of 巴西人 is no word of the message by jieba's cuts: the rules claim nothing of it; the claims stage
    (a model, or claims being collected for training) gets it as a refused claim, and its status is the model's."""
    from kgforge.grounding.matching import DialogueMatcher

    index = small_index()
    assert claims_of(index, ["星际穿越"], "导演是个法国人。") == []
    matcher = DialogueMatcher(index, ["星际穿越"], HAND_RULES)
    matcher.collect_claims = []
    matcher.message("导演是个法国人。")
    [(claim, features)] = matcher.collect_claims
    assert (claim.said, claim.status, claim.refused, features[-1]) == ("法国", "contradicted", True, 1.0)
    _, said = DialogueMatcher(index, ["星际穿越"]).message("导演是个法国人。")  # the shipped model weighs it
    assert [(c.said, c.refused) for c in said if c.status != "supported"] == [("法国", False)]
