"""Shared pieces of the translate tests: a small film domain (Chinese names, most with English ones), a
translator that knows its names, and reading and writing review files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from kgforge import Domain
from kgforge.core.schema import SourceSpec
from kgforge.sources.schema_infer import infer_schema

FILMS = [
    ("一声叹息", "A Sigh"),
    ("爱情神话", "The Equation of Love & Death"),
    ("苏州河", "Suzhou River"),
    ("如果·爱", "Perhaps Love"),
    ("画皮", "Painted Skin"),
    ("李米的猜想", "The Equation of Love and Death II"),
    ("夜宴", "The Banquet"),
    ("大明劫", "Fall of Ming"),
]
PEOPLE = [
    ("周迅", "Xun Zhou"),
    ("冯小刚", "Xiaogang Feng"),
    ("曹保平", "Baoping Cao"),
    ("娄烨", "Ye Lou"),
    ("陈可辛", "Peter Chan"),
]
GENRES = {"剧情": "drama", "爱情": "romance"}
TYPES = {"电影": "film", "人物": "person"}
OTHERS = {"地区": "region", "中国大陆": "Mainland China"}  # a relation named only in Chinese, and its value
DICTIONARY = dict(FILMS) | dict(PEOPLE) | GENRES | TYPES | OTHERS


def write_films(path: Path, english: bool = True) -> None:
    """Eight films and five people, every person in three films or more; names in zh and (``english``) en,
    but for 娄烨, whose English name only a translation gives."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["name", "name_en", "type", "rating", "director", "star", "genre", "地区"])
        for i, (zh, en) in enumerate(FILMS):
            out.writerow(
                [
                    zh,
                    en if english else "",
                    "电影",
                    f"{6 + i * 0.3:.1f}",
                    PEOPLE[i % 5][0],
                    f"{PEOPLE[(i + 1) % 5][0]}|{PEOPLE[(i + 2) % 5][0]}",
                    "剧情" if i % 2 else "爱情",
                    "中国大陆",
                ]
            )
        for zh, en in PEOPLE:
            out.writerow([zh, "" if zh == "娄烨" else en, "人物", "", "", "", "", ""])


def films_domain(tmp_path: Path) -> Domain:
    """The films domain built under ``tmp_path``."""
    source = tmp_path / "films.csv"
    write_films(source)
    domain = Domain("films", tmp_path / "kg")
    schema = infer_schema("films", [SourceSpec("csv", str(source))]).write(domain.paths.root / "schema.toml")
    domain.build([f"csv:{source}"], schema=str(schema.path))
    return domain


def dictionary_reply(prompt: str) -> str:
    """A translator that knows the test's names: answers every offered id from DICTIONARY."""
    items = json.loads(prompt[prompt.index("\n[") :])
    return json.dumps({item["id"]: DICTIONARY.get(item["text"], "") for item in items}, ensure_ascii=False)


def review_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
