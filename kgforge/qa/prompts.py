"""The qa stage's prompts to a model and the checks its replies must pass: predicate selection, template
writing and judging answers. The client that sends them is :mod:`kgforge.llm`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kgforge.llm import BadReply, json_reply

MAX_PREDICATES_PER_CALL = 50


# ---------------------------------------------------------------- predicate selection


def selection_messages(type_label: str, language: str, chunk: list[tuple[str, dict[str, Any]]]) -> list[dict[str, str]]:
    lines = [
        f"{key}: {p['label']} (coverage {p['coverage']:.2f}, e.g. {str(p.get('example') or '')[:40]!r})"
        for key, p in chunk
    ]
    return [
        {
            "role": "system",
            "content": "You choose which facts about an entity people would ask a voice assistant "
            "about. Answer with JSON only.",
        },
        {
            "role": "user",
            "content": (
                f"Entity type: {type_label}. Question language: {language}.\n"
                "Predicates (id: name):\n" + "\n".join(lines) + "\n\n"
                "Keep the predicates whose values make interesting factoid questions; drop identifiers, codes, "
                'media, URLs and names. Reply as {"keep": [ids]} using only the ids above.'
            ),
        },
    ]


def keep_check(ids: set[str]) -> Callable[[str], list[str]]:
    def check(content: str) -> list[str]:
        value = json_reply(content)
        keep = value.get("keep") if isinstance(value, dict) else None
        if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
            raise BadReply('expected {"keep": ["p1", ...]}')
        unknown = sorted(set(keep) - ids)
        if unknown:
            raise BadReply(f"ids that were not offered: {', '.join(unknown[:5])}")
        return keep

    return check


# ---------------------------------------------------------------- templates and judging


def template_messages(type_label: str, predicate_label: str, language: str) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": "You write question templates for a conversational QA dataset. Answer with JSON only.",
        },
        {
            "role": "user",
            "content": (
                f"Write questions in {language} asking for the {predicate_label!r} of a {type_label}. For each of "
                "voice (spoken, natural) and text (terse, typed), give 3 templates naming the entity as {subject} "
                "and 3 referring back to it as {ref} (deixis). Use {predicate} for the predicate's name if you need "
                "it; never include an answer. Reply as "
                '{"voice": {"name": [...], "deixis": [...]}, "text": {"name": [...], "deixis": [...]}}.'
            ),
        },
    ]


def templates_check(content: str) -> dict[str, dict[str, list[str]]]:
    value = json_reply(content)
    if not isinstance(value, dict):
        raise BadReply("expected an object with voice and text")
    for interaction in ("voice", "text"):
        entry = value.get(interaction)
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(r), list) and entry[r] and all(isinstance(t, str) for t in entry[r])
            for r in ("name", "deixis")
        ):
            raise BadReply(f"{interaction} must give non-empty name and deixis lists of strings")
    return {i: {r: value[i][r] for r in ("name", "deixis")} for i in ("voice", "text")}


def judge_messages(question: str, gold: list[str], prediction: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You grade answers to factoid questions. Answer with JSON only."},
        {
            "role": "user",
            "content": (
                f"Question: {question}\nCorrect answers (any one suffices): {json.dumps(gold, ensure_ascii=False)}\n"
                f'Predicted answer: {prediction}\nIs the prediction correct? Reply as {{"correct": true}} or '
                '{"correct": false}.'
            ),
        },
    ]


def judge_check(content: str) -> bool:
    value = json_reply(content)
    if not isinstance(value, dict) or not isinstance(value.get("correct"), bool):
        raise BadReply('expected {"correct": true|false}')
    return value["correct"]
