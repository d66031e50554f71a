"""MTime (时光网; DuConv's film source): the Top 100 list → movie pages → star pages.

Movie page (``movie.mtime.com/<id>/``): ``h1[property=v:itemreviewed]``, ``p.db_enname``, year in
``p.db_year``, genres ``a[property=v:genre]``, rating ``b[property=v:average]``, ``dl.info_l dd``
rows (``<strong>导演：</strong>`` + links to ``people.mtime.com/<id>/``), ``dl.main_actor``,
synopsis ``.plots_box p.lh18``, short comments ``.mod_short p``. Star page
(``people.mtime.com/<id>/``): ``.per_header h2`` / ``p.enname``, ``dl.per_info_cont`` dt/dd pairs.
"""

from __future__ import annotations

from crawlers._hooks import iso_dates
from kgforge.crawl.spec import Field, Follow, Infobox, PageRule, SiteSpec

SPEC = SiteSpec(
    name="mtime",
    domain="film",
    base_url="http://movie.mtime.com",
    hosts={"people.mtime.com": "/people", "www.mtime.com": "/www"},
    description="MTime Top 100 with movie and star pages (structured facts, synopses, short comments)",
    start=(("http://www.mtime.com/top/movie/top100/", "list"),),
    rules=(
        PageRule(
            "list",
            match=r"/top/movie/top100/",
            follow=(
                Follow("#asyncRatingRegion li .mov_con h2 a", "movie"),
                Follow("#PageNavigator a.next[href]", "list"),
            ),
        ),
        PageRule(
            "movie",
            match=r"^/(\d+)/$",
            entity_type="film",
            fields=(
                Field("name", "h1[property='v:itemreviewed']"),
                Field("name_en", "p.db_enname", optional=True),
                Field("release_date", "p.db_year a"),
                Field("genre", "a[property='v:genre']", many=True),
                Field("duration", ".otherbox", pattern=r"(\d+分钟)", optional=True),
                Field("mtime_rating", "b[property='v:average']"),
                Field("starring", "dl.main_actor a[rel='v:starring']", many=True, link=True, optional=True),
                Field("plot", ".plots_box p.lh18", lang="zh"),
                Field("short_comment", ".mod_short p.c_666", many=True, lang="zh", optional=True),
            ),
            infoboxes=(
                Infobox(
                    rows="dl.info_l dd",
                    label="strong",
                    labels={
                        "导演": "director",
                        "编剧": "screenwriter",
                        "国家地区": "country",
                        "发行公司": "distributor",
                        "制作公司": "production_company",
                    },
                ),
            ),
            follow=(Follow("dl.info_l a[rel='v:directedBy'], dl.main_actor a[rel='v:starring']", "star"),),
        ),
        PageRule(
            "star",
            match=r"/(\d+)/$",
            entity_type="star",
            fields=(
                Field("name", ".per_header h2"),
                Field("name_en", ".per_header p.enname", optional=True),
                Field("occupation", ".per_header p.mt15", split=r"\s*\|\s*", optional=True),
                Field("information", ".per_w_lt p", lang="zh", optional=True),
            ),
            infoboxes=(
                Infobox(
                    rows="dl.per_info_cont dt",
                    next_sibling=True,
                    labels={
                        "出生日期": "birth_date",
                        "出生地": "birth_place",
                        "身高": "height",
                        "体重": "weight",
                        "星座": "zodiac_sign",
                        "血型": "blood_type",
                    },
                ),
            ),
            hook=iso_dates,
        ),
    ),
)
