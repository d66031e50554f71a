"""`kgforge ground --format durecdial`: the knowledge each utterance states, in DuRecDial 2.0's own shape,
measured against per-utterance gold where the input has it."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from kgforge.grounding.normalise import form
from kgforge.grounding.scoring import prf
from tests.conftest import run_cli
from tests.durecdial_sessions import ANNOTATED, acl2020, v2_session, write_lines


def ground(workdir, domain, path, out):
    result = run_cli(
        "ground",
        domain,
        "--dialogues",
        str(path),
        "--out",
        str(out),
        "--format",
        "durecdial",
        "--workdir",
        str(workdir),
        "--json",
    )
    return json.loads(result.stdout), [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def key(triple):
    return tuple(map(form, triple))


@pytest.mark.parametrize("language", ["zh", "en"])
def test_gold_per_utterance_knowledge_is_kept_and_the_prediction_scored_against_it(workdir, shared, tmp_path, language):
    session = v2_session(shared, language)
    path = write_lines(tmp_path / "dev.txt", [session])
    run_cli("build", f"g{language}", "--source", f"durecdial:{path}", "--workdir", str(workdir))
    report, [out] = ground(workdir, f"g{language}", path, tmp_path / "out.txt")
    assert {k: v for k, v in out.items() if k not in ("predicted_knowledge", "stated_knowledge", "claims")} == session
    predicted = out["predicted_knowledge"]
    assert len(predicted) == len(session["conversation"]) == len(out["stated_knowledge"]) == len(out["claims"])
    # every triple stated is a supported claim, its span the words said
    for utterance, stated, claims in zip(session["conversation"], out["stated_knowledge"], out["claims"]):
        supported = [c for c in claims if c["status"] == "supported"]
        assert [[c["name"], c["attrname"], c["graph"][0]] for c in supported] == stated
        assert all(utterance[slice(*c["span"])] == c["said"] for c in claims)
    assert report["claims"]["supported"] == sum(map(len, out["stated_knowledge"]))
    # the report's figures are the per-utterance comparison, computed here
    tp = sum(1 for p, g in zip(predicted, session["knowledge"]) if p and g and key(p) == key(g))
    fp = sum(1 for p, g in zip(predicted, session["knowledge"]) if p and (not g or key(p) != key(g)))
    fn = sum(1 for p, g in zip(predicted, session["knowledge"]) if g and (not p or key(p) != key(g)))
    assert report["scores"]["micro"] == asdict(prf(tp, fp, fn)) and report["gold_messages"] == 16
    # hand-checked: the weather, the restaurant's special (its name is said, so not the weather's dish), the
    # address, price and rating are each grounded to their own triple
    for i in (1, 3, 5, 7, 9, 11):
        assert predicted[i] == ANNOTATED[i][language == "en"], i
    assert report["scores"]["micro"]["recall"] == 1.0 and report["scores"]["micro"]["precision"] >= 0.85


@pytest.mark.slow  # grounds 100 real LIC-2020 sessions
def test_sessions_without_it_get_per_utterance_knowledge(workdir, shared, tmp_path):
    resource = shared("durecdial/lic2020_baseline_resource_dev.txt")
    run_cli("build", "res", "--source", f"durecdial:{resource}", "--workdir", str(workdir))
    sessions = [json.loads(line) for line in resource.read_text(encoding="utf-8").splitlines()]
    report, out = ground(workdir, "res", resource, tmp_path / "out.txt")
    assert report["scores"] is None and report["dialogues"] == 100 and report["grounded_utterances"] > 100
    for given, grounded in zip(sessions, out):
        assert grounded["session_knowledge"] == given["knowledge"]
        assert len(grounded["knowledge"]) == len(given["conversation"])
        assert all(t == [] or t in given["knowledge"] for t in grounded["knowledge"])
    stated = out[1]["stated_knowledge"]
    assert stated[1] == [out[1]["session_knowledge"][0]] and stated[1][0][0] == "天津"  # the weather report
    assert ["六国三春·川菜（环球金融中心店）", "人均价格", "85"] in stated[9]  # 人均 价格 在 85 ， 评分 有 5 哦
    assert out[2]["knowledge"][8] == ["谢娜", "成就", "中国 电视 金鹰奖 优秀 主持人 奖"]
    # 我 现在 为 你 播放 “ 路灯下的小姑娘 ” 吗: the song 谢娜 sings, not its comment (which starts with its name)
    assert out[2]["knowledge"][16] == ["谢娜", "演唱", "路灯下的小姑娘"]
    assert all(t[1] != "评论" for t in out[2]["stated_knowledge"][16])
    # the ACL 2020 layout keeps its kg and gains the per-utterance list
    example = acl2020(shared)
    _, [acl] = ground(workdir, "res", write_lines(tmp_path / "acl.txt", [example]), tmp_path / "acl.out")
    assert acl["kg"] == example["kg"] and acl["knowledge"][7][1] == "地址" and "session_knowledge" not in acl
