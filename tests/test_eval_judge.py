"""`kgforge eval --llm-judge RUBRIC` (a model scoring responses on a rubric through the synth client, against a chat
server on 127.0.0.1) with its agreement with a filled rating round, and `kgforge eval --logprobs FILE`
(perplexity from token log-probabilities)."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from kgforge.api import llm_judge, perplexity
from kgforge.core.errors import InputError
from kgforge.evaluation.rating import make_sheets
from kgforge.synth.judge import kappa
from tests.qa_support import chat_server

RESPONSES = [f"回复{i}" + ("，很好" if i % 3 else "") for i in range(9)]


def responses(tmp_path: Path) -> Path:
    path = tmp_path / "system.jsonl"
    rows = [{"id": f"r{i}", "context": ["你好"], "response": text} for i, text in enumerate(RESPONSES)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def rule(prompt: str) -> str:
    """The scripted judge: fluency 2 for a response that says 很好, else 0; coherence 1; not JSON for 回复3 once."""
    if "To rate:" not in prompt:  # asked again after the reply that was not JSON (回复3's)
        return json.dumps({"fluency": 0, "coherence": 1})
    text = prompt.split("To rate:\n", 1)[1].split("\n", 1)[0]
    if "回复3" in text:
        return "我觉得挺好"
    return json.dumps({"fluency": 2 if "很好" in text else 0, "coherence": 1})


def test_the_judge_scores_each_response_on_the_rubric(tmp_path: Path) -> None:
    path = responses(tmp_path)
    with chat_server(rule) as server:
        report = llm_judge("kdconv", url=server.url, model="judge", predictions=path, out=tmp_path / "judge.jsonl")
        asked = len(server.requests)
        again = llm_judge("KdConv", url=server.url, model="judge", predictions=path)
    assert report.items == report.judged == 9 and report.unjudged == 0 and report.bad_replies == {"not JSON": 1}
    assert report.means == {"fluency": pytest.approx(2 * 6 / 9), "coherence": 1.0}
    assert report.sent == asked == 10 and again.sent == 0 and again.requests == 10  # cached by request
    assert not Path(str(path) + ".judge.jsonl").exists()  # nothing beside the input that nobody asked for
    rows = [json.loads(line) for line in (tmp_path / "judge.jsonl").read_text().splitlines()]
    assert [r["scores"]["fluency"] for r in rows] == [2.0 if "很好" in t else 0.0 for t in RESPONSES]


def test_the_judges_agreement_with_a_filled_rating_round(tmp_path: Path) -> None:
    made = make_sheets("kdconv", {"sys": responses(tmp_path)}, tmp_path / "round", annotators=2, seed=1)
    for number, sheet in enumerate(made.sheets.values()):
        with open(sheet, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            row["fluency"] = "2" if "很好" in row["text"] else "0"  # the annotators agree with the judge
            row["coherence"] = str((int(re.sub(r"\D", "", row["text"])) + number) % 3)
        with open(sheet, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    with chat_server(rule) as server:
        report = llm_judge("kdconv", url=server.url, model="judge", ratings=tmp_path / "round")
    fluency, coherence = report.agreement["fluency"], report.agreement["coherence"]
    assert fluency == {"n": 9, "cohen_kappa": 1.0, "weighted_kappa": 1.0, "spearman": pytest.approx(1.0)}
    assert coherence["cohen_kappa"] == 0.0 or coherence["cohen_kappa"] is None  # the judge says 1 throughout
    with chat_server(rule) as server, pytest.raises(Exception, match="rated on 'kdconv', not 'msde'"):
        llm_judge("msde", url=server.url, model="judge", ratings=tmp_path / "round")


def test_kappa_against_its_definition() -> None:
    a = np.array([0, 1, 2, 2, 1, 0, 2, 1])
    b = np.array([0, 1, 2, 1, 1, 0, 2, 2])
    observed = np.mean(a == b)
    pa, pb = (np.bincount(x, minlength=3) / len(x) for x in (a, b))
    expected = float(pa @ pb)
    assert kappa(a, b) == pytest.approx((observed - expected) / (1 - expected))
    assert kappa(a, a, weighted=True) == pytest.approx(1.0) and kappa(np.zeros(4), np.zeros(4)) is None


def write(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "logprobs.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_perplexity_over_every_token_and_per_response(tmp_path: Path, cli) -> None:
    openai = {
        "choices": [{"logprobs": {"content": [{"token": "好", "logprob": -0.5}, {"token": "的", "logprob": -1.5}]}}]
    }
    path = write(tmp_path, [{"id": "a", "logprobs": [-1.0, -2.0, -3.0]}, openai])
    report = perplexity(path)
    assert report.tokens == 5 and report.responses == 2
    assert report.perplexity == pytest.approx(math.exp(8.0 / 5))
    assert report.mean_response_perplexity == pytest.approx((math.exp(2.0) + math.exp(1.0)) / 2)
    shown = json.loads(cli("eval", "--logprobs", str(path), "--json").stdout)
    assert shown["perplexity"] == pytest.approx(report.perplexity)


@pytest.mark.parametrize(
    ("line", "said"),
    [({"logprobs": [-1.0, 0.5]}, "no log-probability"), ({"logprobs": []}, "no token"), ({"text": "x"}, "expected")],
)
def test_a_bad_line_names_the_file_and_line(tmp_path: Path, line: object, said: str) -> None:
    path = write(tmp_path, [{"logprobs": [-1.0]}, line])
    with pytest.raises(InputError, match=rf"logprobs.jsonl:2: .*{said}"):
        perplexity(path)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(min_value=-20, max_value=0), min_size=1, max_size=6), min_size=1, max_size=6))
def test_perplexity_is_the_exponent_of_the_mean_negative_logprob(tmp_path_factory, rows: list[list[float]]) -> None:
    path = write(tmp_path_factory.mktemp("lp"), [{"logprobs": row} for row in rows])
    flat = [x for row in rows for x in row]
    report = perplexity(path)
    assert report.perplexity == pytest.approx(math.exp(-sum(flat) / len(flat))) and report.perplexity >= 1.0
    slack = 1e-9 * report.highest  # a mean of equal numbers may differ from them in the last bit
    assert report.lowest - slack <= report.mean_response_perplexity <= report.highest + slack
    assert stats.gmean([math.exp(-x) for x in flat]) == pytest.approx(report.perplexity)


def test_eval_llm_judge_on_the_command_line(tmp_path: Path, cli) -> None:
    path = responses(tmp_path)
    with chat_server(rule) as server:
        shown = json.loads(
            cli(
                "eval", str(path), "--llm-judge", "kdconv", "--llm-url", server.url, "--llm-model", "j", "--json"
            ).stdout
        )
        refused = cli("eval", str(path), "--llm-judge", "kdconv", check=False)
    assert shown["judged"] == 9 and shown["rubric"] == "kdconv" and shown["means"]["coherence"] == 1.0
    assert refused.returncode != 0 and "--llm-url" in refused.stderr and "Traceback" not in refused.stderr
