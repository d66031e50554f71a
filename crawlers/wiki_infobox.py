"""A MediaWiki / Baidu-Baike-style encyclopedia: category pages → articles with an infobox.

Category page (MediaWiki): article links in ``#mw-pages li a``, the next page ``#mw-pages >
a[href*=pagefrom]``. Article: title ``#firstHeading`` (MediaWiki) or
``.lemmaWgt-lemmaTitle-title h1`` (Baike); infobox ``table.infobox`` rows (``th`` label, ``td``
value) or Baike's ``dl.basicInfo-block`` ``dt``/``dd`` pairs; the lead paragraph
``.mw-parser-output > p`` or ``.lemma-summary``. Point it at another wiki with ``--base-url``
and at another category by changing ``start``.
"""

from __future__ import annotations

import re

from crawlers._hooks import iso_dates
from kgforge.crawl.spec import Field, Follow, Infobox, Page, PageRule, Record, SiteSpec

_QUALIFIER = re.compile(r"\s*[(（][^()（）]+[)）]$")
_FOOTNOTE = re.compile(r"\s*\[\d+\]")

LABELS = {
    "导演": "director",
    "编剧": "screenwriter",
    "主演": "starring",
    "制片人": "producer",
    "监制": "producer",
    "类型": "genre",
    "国家/地区": "country",
    "制片地区": "production_region",
    "语言": "language",
    "对白语言": "language",
    "片长": "duration",
    "上映日期": "release_date",
    "上映时间": "release_date",
    "出品公司": "production_company",
    "发行公司": "distributor",
    "票房": "box_office",
    "制作成本": "budget",
    "外文名": "name_en",
    "英文名": "name_en",
    "原名": "foreign_name",
    "中文名": None,
    "其它译名": "other_titles",
    "拍摄地点": "filming_location",
    "主要奖项": "major_awards",
}


def tidy_article(page: Page, record: Record) -> None:
    """``霸王别姬 (电影)`` → the name ``霸王别姬`` (the full title kept as an alias); footnote
    marks dropped; Chinese dates as ISO dates."""
    if record.name and _QUALIFIER.search(record.name):
        record.add("alias", record.name)
        record.name = _QUALIFIER.sub("", record.name)
    for fact in record.facts:
        fact.value = _FOOTNOTE.sub("", fact.value)  # "520万美元[1]": the footnote mark goes
    iso_dates(page, record)


SPEC = SiteSpec(
    name="wiki_infobox",
    domain="film",
    base_url="https://zh.wikipedia.org",
    description="MediaWiki/Baike-style infobox pages of a category (films by default)",
    start=(("/wiki/Category:%E4%B8%AD%E5%9B%BD%E5%A4%A7%E9%99%86%E7%94%B5%E5%BD%B1", "category"),),
    rules=(
        PageRule(
            "category",
            match=r"/wiki/Category:",
            follow=(
                Follow("#mw-pages li a", "article"),
                Follow("#mw-pages > a[href*='pagefrom']", "category"),
            ),
        ),
        PageRule(
            "article",
            match=r"/(?:wiki|item)/(.+)$",
            entity_type="film",
            fields=(
                Field("name", "#firstHeading, .lemmaWgt-lemmaTitle-title h1"),
                Field("information", ".mw-parser-output > p:not(.mw-empty-elt), .lemma-summary", lang="zh"),
            ),
            infoboxes=(
                Infobox(rows="table.infobox tr", label="th", value="td", labels=LABELS),
                Infobox(rows="dl.basicInfo-block dt", next_sibling=True, labels=LABELS),
            ),
            hook=tidy_article,
        ),
    ),
)
