"""F31: `translate` approves nothing by itself. Every proposal is written ``keep = review`` and only a
person's ``yes`` applies it; a label that is no name (NUL, ESC sequences, a newline with a forged review row,
bidi overrides, a lone surrogate, megabytes of text) is refused as a proposal, counted, said on the command
line and quarantined, and never reaches the review file or the graph. Before, each was written ``keep = yes``
and, applied, became an ``rdfs:label``."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.errors import InputError
from kgforge.languages.translate import MAX_LABEL_CHARS, label_problem
from tests.qa_support import chat_server
from tests.translate_support import DICTIONARY, films_domain, review_rows, write_rows

FORGED_ROW = "Ye Lou\nyes\tentity\thttps://kgforge.org/entity/evil\tzh\t娄烨\ten\tEVIL\t"
HOSTILE = {  # source -> what a hostile (or broken) model answers, and the character the refusal names
    "娄烨": ("Lou\x00Ye", "U+0000"),
    "地区": ("\x1b[2J\x1b[31mregion\x1b[0m", "U+001B"),
    "人物": (FORGED_ROW, "U+000A"),
    "中国大陆": ("\u202eanihC dnalniaM", "U+202E (right-to-left override)"),
    "剧情": ("drama" * 600_000, "3,000,000 characters long, more than 512"),
    "爱情": ("ro\ud800mance", "U+D800 (a lone surrogate)"),
}


def hostile_reply(prompt: str) -> str:
    items = json.loads(prompt[prompt.index("\n[") :])
    return json.dumps({i["id"]: HOSTILE.get(i["text"], (DICTIONARY.get(i["text"], ""),))[0] for i in items})


def test_hostile_labels_are_refused_counted_and_never_approved(tmp_path, cli):
    films = films_domain(tmp_path)
    review = tmp_path / "review.tsv"
    with chat_server(hostile_reply) as chat:
        proposed = films.translate("en", review, llm_url=chat.url, llm_model="hostile")
        run = cli(
            "translate", "films", "--lang", "en", "--out", str(tmp_path / "again.tsv"), "--llm-url", chat.url,
            "--llm-model", "hostile", "--workdir", str(films.workdir),
        )  # fmt: skip
    assert (proposed.refused, proposed.proposed, proposed.unanswered) == (len(HOSTILE), 1, 0)
    raw = review.read_bytes()
    assert len(raw) < 4096 and len(raw.splitlines()) == 1 + sum(proposed.items.values())  # no forged row
    assert not re.search("[\x00-\x08\x0b-\x1f\u202e\u2066-\u2069]", raw.decode("utf-8"))
    rows = {row["source"]: row for row in review_rows(review)}
    for source, (_, named) in HOSTILE.items():
        assert rows[source]["keep"] == "" and rows[source]["label"] == "", source
        assert rows[source]["note"].startswith("refused: the model's label ") and named in rows[source]["note"]
    assert rows["电影"]["keep"] == "review" and rows["电影"]["label"] == "film"
    quarantined = [json.loads(line) for line in proposed.quarantine.read_text("utf-8").splitlines()]
    assert len(quarantined) == len(HOSTILE) and all(e["reason"].startswith("label refused: ") for e in quarantined)
    assert all(e["record"].isascii() for e in quarantined)  # escaped: no control or bidi character in the file
    assert run.returncode == 0 and "Traceback" not in run.stderr
    assert f"{len(HOSTILE)} labels refused as proposals" in run.stdout and "labels refused" in run.stdout


def test_only_a_persons_yes_applies_and_a_hostile_label_they_write_is_refused(tmp_path):
    films = films_domain(tmp_path)
    review = tmp_path / "review.tsv"
    with chat_server(hostile_reply) as chat:
        films.translate("en", review, llm_url=chat.url, llm_model="hostile")
    before = films.paths.store_link.resolve()
    with pytest.raises(InputError, match=r"no row says keep = yes \(1 still say review"):
        films.apply_translations(review, "en")  # the model's proposals, unreviewed, apply nothing
    rows = review_rows(review)
    lou = next(i for i, row in enumerate(rows) if row["source"] == "娄烨")
    rows[lou] |= {"keep": "yes", "label": "Lou\x1b]8;;http://evil\x07Ye"}
    write_rows(review, rows)
    with pytest.raises(InputError, match=re.escape(f"line {lou + 2}: the label holds U+001B (a control character)")):
        films.apply_translations(review, "en")
    assert films.paths.store_link.resolve() == before  # nothing was loaded
    rows[lou]["label"] = "Lou Ye"
    for row in rows:
        row["keep"] = "yes" if row["label"] else row["keep"]
    write_rows(review, rows)
    applied = films.apply_translations(review, "en")
    assert (applied.loaded["entity"], applied.loaded["type"], applied.unreviewed) == (1, 1, 0)
    labels = films.query("SELECT ?e ?l WHERE { GRAPH <https://kgforge.org/graph/translated/en> { ?e rdfs:label ?l } }")
    assert {row["l"].value for row in labels.rows} == {"Lou Ye", "film"}


@pytest.mark.parametrize(
    ("label", "named"),
    [
        ("a\x00b", "U+0000 (a control character) at character 2"),
        ("\x1b[31mred", "U+001B"),
        ("two\nlines", "U+000A"),
        ("cr\rhere", "U+000D"),
        ("tab\there", "U+0009"),
        ("del\x7f", "U+007F"),
        ("next\x85line", "U+0085"),
        ("line\u2028separator", "U+2028 (line separator)"),
        ("\u202eevil", "U+202E (right-to-left override)"),
        ("iso\u2066late\u2069", "U+2066 (left-to-right isolate)"),
        ("mark\u200f", "U+200F (right-to-left mark)"),
        ("half\udc80", "U+DC80 (a lone surrogate)"),
        ("x" * (MAX_LABEL_CHARS + 1), "is 513 characters long, more than 512"),
    ],
)
def test_label_problem_names_what_makes_a_label_no_name(label, named):
    assert named in (label_problem(label) or "")


@pytest.mark.parametrize("label", ["Lou Ye", "Amélie", "周迅", "رجل", "👩\u200d💻 coder", "x" * MAX_LABEL_CHARS])
def test_names_pass(label):
    assert label_problem(label) is None


REFUSED = "\x00\x1b\n\r\t\x7f\x85\u2028\u2029\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
NAME_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters=REFUSED), max_size=MAX_LABEL_CHARS - 1
)


@given(NAME_TEXT, st.sampled_from(REFUSED), st.data())
def test_one_refused_character_anywhere_refuses_the_label(name, bad, data):
    assert label_problem(name) is None
    at = data.draw(st.integers(0, len(name)))
    problem = label_problem(name[:at] + bad + name[at:]) or ""
    assert problem.startswith(f"holds U+{ord(bad):04X} ") and problem.endswith(f"at character {at + 1}")
