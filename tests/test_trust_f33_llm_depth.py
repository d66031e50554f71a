"""F33: a model's reply nested 100,000 levels deep is malformed, never a ``RecursionError``. Nesting is
bounded where replies are decoded (:data:`kgforge.llm.MAX_REPLY_DEPTH`, core.jsonio's depth check): in the
completion itself (one LLMError line) and in the content a stage reads as JSON (quarantined, and the stage
falls back: translate leaves the rows for the reviewer)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.llm import MAX_REPLY_DEPTH, BadReply, LLMError, json_reply
from tests.llm_support import ask, client, reply, server
from tests.qa_support import chat_server
from tests.translate_support import films_domain, review_rows

DEEP = 100_000


def nested(depth: int, opening: str = "[", closing: str = "]") -> str:
    return opening * depth + closing * depth


def test_a_completion_nested_100000_deep_is_one_error(tmp_path):
    body = ('{"choices": [{"message": {"content": "fine"}}], "extra": ' + nested(DEEP) + "}").encode()
    with server(lambda h, n: reply(h, body=body)) as (url, _), pytest.raises(LLMError) as caught:
        ask(client(url, tmp_path))
    assert (
        str(caught.value) == f"{url}/chat/completions: malformed reply: nested more than {MAX_REPLY_DEPTH} levels deep"
    )


@pytest.mark.parametrize("content", [nested(DEEP), '{"t1": ' + nested(DEEP, '{"a": ', "}").replace("}", "1}", 1) + "}"])
def test_a_reply_nested_100000_deep_is_quarantined_and_translate_leaves_the_rows(tmp_path, content, cli):
    films = films_domain(tmp_path)
    review = tmp_path / "review.tsv"
    with chat_server(lambda prompt: content) as chat:
        proposed = films.translate("en", review, llm_url=chat.url, llm_model="deep")
        run = cli(
            "translate", "films", "--lang", "en", "--out", str(tmp_path / "again.tsv"), "--llm-url", chat.url,
            "--llm-model", "deep2", "--workdir", str(films.workdir),
        )  # fmt: skip
    assert proposed.proposed == 0 and proposed.unanswered == sum(proposed.items.values())
    assert all(row["keep"] == "" and "quarantined" in row["note"] for row in review_rows(review))
    quarantined = [json.loads(line) for line in proposed.quarantine.read_text("utf-8").splitlines()]
    assert quarantined and all(
        entry["reason"] == f"malformed LLM reply: nested more than {MAX_REPLY_DEPTH} levels deep"
        for entry in quarantined
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr and "RecursionError" not in run.stderr


@given(st.integers(min_value=1, max_value=3 * MAX_REPLY_DEPTH), st.sampled_from(["[]", "{}"]))
def test_json_reply_reads_up_to_the_depth_and_refuses_past_it(depth, brackets):
    text = nested(depth, '{"k": ', "}").replace("}", "0}", 1) if brackets == "{}" else nested(depth)
    if depth <= MAX_REPLY_DEPTH:
        value = json_reply(text)
        assert value is not None
    else:
        with pytest.raises(BadReply, match=f"nested more than {MAX_REPLY_DEPTH} levels deep"):
            json_reply(text)
