"""Douban movie Top 250 (KdConv's film start entities): list pages → movie pages → celebrity pages.

List: ``/top250?start=N&filter=``, 25 films a page, ``span.next a`` to the next page, each film in
``ol.grid_view div.item``. Movie page: ``h1 span[property=v:itemreviewed]`` ("中文名 Original Name"),
``span.year``, ``#info`` lines (导演 / 编剧 / 主演 links to ``/celebrity/<id>/``), rating
``strong.rating_num``, synopsis ``span[property=v:summary]``, short comments ``#hot-comments span.short``.
Celebrity page: ``#content h1`` ("中文名 English Name"), ``#headline .info li`` rows, ``#intro``.
"""

from __future__ import annotations

import re

from kgforge.crawl.spec import Field, Follow, Infobox, Page, PageRule, Record, SiteSpec

_LATIN = re.compile(r"^(.*?[^\x00-\x7f])\s+([A-Za-z0-9][\x00-\x7f\u00c0-\u024f]*)$")


def split_bilingual(page: Page, record: Record) -> None:
    """``肖申克的救赎 The Shawshank Redemption`` → a Chinese name and an English one."""
    if not record.name:
        return
    record.name = re.sub(r"\s*\(\d{4}\)$", "", record.name)  # an unclosed <span> swallows the year
    match = _LATIN.match(record.name)
    if match:
        record.name, record.name_en = match.group(1).strip(), record.name_en or match.group(2).strip()


MOVIE_INFO = Infobox(
    rows="#info",
    lines=True,
    labels={
        "导演": "director",
        "编剧": "screenwriter",
        "主演": "starring",
        "类型": "genre",
        "制片国家/地区": "country",
        "语言": "language",
        "上映日期": "release_date",
        "片长": "duration",
        "又名": "alias",
        "IMDb": None,
        "IMDb链接": None,
        "官方网站": None,
    },
)

CELEBRITY_INFO = Infobox(
    rows="#headline .info li",
    label="span",
    labels={
        "性别": "gender",
        "星座": "zodiac_sign",
        "出生日期": "birth_date",
        "生卒日期": "birth_date",
        "出生地": "birth_place",
        "职业": "occupation",
        "更多外文名": "alias",
        "更多中文名": "alias",
        "家庭成员": "family",
        "imdb编号": None,
        "官方网站": None,
    },
)

SPEC = SiteSpec(
    name="douban_movie",
    domain="film",
    base_url="https://movie.douban.com",
    description="Douban movie Top 250 with movie and celebrity pages",
    start=(("/top250", "list"),),
    rules=(
        PageRule(
            "list",
            match=r"^/top250",
            follow=(
                Follow("ol.grid_view div.item div.hd a", "movie"),
                Follow("div.paginator span.next a", "list"),
            ),
        ),
        PageRule(
            "movie",
            match=r"^/subject/(\d+)/",
            entity_type="film",
            fields=(
                Field("name", "h1 span[property='v:itemreviewed']"),
                Field("release_date", "h1 span.year", pattern=r"(\d{4})"),
                Field("rating", "strong.rating_num[property='v:average']"),
                Field("plot", "span[property='v:summary']", lang="zh"),
                Field("comment", "#hot-comments .comment-item span.short", many=True, lang="zh", optional=True),
            ),
            infoboxes=(MOVIE_INFO,),
            follow=(Follow("#info a[rel='v:directedBy'], #info a[rel='v:starring']", "celebrity"),),
            hook=split_bilingual,
        ),
        PageRule(
            "celebrity",
            match=r"^/celebrity/(\d+)/",
            entity_type="star",
            fields=(
                Field("name", "#content h1"),
                Field("information", "#intro .bd", lang="zh"),
            ),
            infoboxes=(CELEBRITY_INFO,),
            hook=split_bilingual,
        ),
    ),
)
