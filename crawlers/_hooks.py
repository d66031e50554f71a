"""Small code hooks shared by site specs, for what CSS selectors cannot say."""

from __future__ import annotations

import re

from kgforge.crawl.spec import Page, Record

_CHINESE_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})日")


def iso_dates(page: Page, record: Record) -> None:
    """``1952年8月12日`` → ``1952-08-12`` in date-valued facts, so sites agree on dates."""
    for fact in record.facts:
        if fact.relation.endswith("_date"):
            fact.value = _CHINESE_DATE.sub(lambda m: f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}", fact.value)


def strip_english_suffix(page: Page, record: Record) -> None:
    """``故宫The Palace Museum`` (a heading holding both names) → ``故宫``."""
    if record.name and record.name_en and record.name.endswith(record.name_en):
        record.name = record.name[: -len(record.name_en)].strip()
