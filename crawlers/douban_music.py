"""Douban music Top 250 (KdConv's music start entities): list pages → album pages → musician pages.

List: ``/top250?start=N``, albums in ``tr.item`` (``div.pl2 a``), ``span.next a`` to the next page.
Album page: ``#wrapper h1 span``, ``#info`` lines (表演者 links to ``/musician/<id>/``, 流派,
发行时间, 出版者, 又名), ``#link-report .intro``, the track list ``div.track-list``. Musician
page: ``#content h1`` and ``#headline .info li`` rows, as on celebrity pages.
"""

from __future__ import annotations

import re

from crawlers.douban_movie import split_bilingual
from kgforge.crawl.spec import Field, Follow, Infobox, Page, PageRule, Record, SiteSpec

_TRACK = re.compile(r"^\s*\d+[.、]\s*(.+)$")


def tracks(page: Page, record: Record) -> None:
    """The number of tracks, from the track list's numbered lines."""
    box = page.soup.select_one("div.track-list div.indent")
    if box is None:
        record.warn("track_count", "no track list (div.track-list div.indent)")
        return
    lines = [line for line in box.get_text("\n").splitlines() if _TRACK.match(line)]
    if lines:
        record.add("track_count", str(len(lines)))


MUSICIAN_INFO = Infobox(
    rows="#headline .info li",
    label="span",
    labels={
        "星座": "zodiac_sign",
        "出生日期": "birth_date",
        "出生地": "birth_place",
        "职业": "occupation",
        "更多外文名": "alias",
        "更多中文名": "alias",
        "性别": None,
        "家庭成员": None,
        "imdb编号": None,
        "官方网站": None,
    },
)

SPEC = SiteSpec(
    name="douban_music",
    domain="music",
    base_url="https://music.douban.com",
    description="Douban music Top 250 with album and musician pages",
    start=(("/top250", "list"),),
    rules=(
        PageRule(
            "list",
            match=r"^/top250",
            follow=(
                Follow("tr.item div.pl2 > a", "album"),
                Follow("div.paginator span.next a", "list"),
            ),
        ),
        PageRule(
            "album",
            match=r"^/subject/(\d+)/",
            entity_type="album",
            fields=(
                Field("name", "#wrapper h1 span"),
                Field("information", "#link-report .intro", lang="zh", optional=True),
            ),
            infoboxes=(
                Infobox(
                    rows="#info",
                    lines=True,
                    labels={
                        "表演者": "album_artist",
                        "流派": "genre",
                        "发行时间": "release_date",
                        "出版者": "record_label",
                        "又名": "alias",
                        "专辑类型": None,
                        "介质": None,
                        "唱片数": None,
                        "条形码": None,
                        "ISRC(中国)": None,
                    },
                ),
            ),
            follow=(Follow("#info a[href*='/musician/']", "musician"),),
            hook=tracks,
        ),
        PageRule(
            "musician",
            match=r"^/musician/(\d+)/",
            entity_type="singer",
            fields=(
                Field("name", "#content h1"),
                Field("information", "#intro .bd", lang="zh", optional=True),
            ),
            infoboxes=(MUSICIAN_INFO,),
            hook=split_bilingual,
        ),
    ),
)
