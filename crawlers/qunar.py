"""Qunar travel (去哪儿; KdConv's travel start entities): a city's attraction list → attraction pages.

List: ``/p-cs299914-beijing-jingdian`` (then ``-1-2``, ``-1-3``…), attractions in
``ul.list_item li.item a.titlink``, ``div.b_paging a.next`` to the next page. Attraction page
(``/p-oi<id>-<pinyin>``): ``h1.tit`` holding the Chinese name and ``span.entit`` the English one,
score ``span.cur_score``, ``div.e_summary_list dl`` rows (地址, 电话, 开放时间, 门票, 用时参考),
description ``div.e_db_content_box``, comments ``ul#comment_box .e_comment_content``, and nearby
attractions ``div.b_nearby a.titlink``.
"""

from __future__ import annotations

from crawlers._hooks import strip_english_suffix
from kgforge.crawl.spec import Field, Follow, Infobox, PageRule, SiteSpec

SPEC = SiteSpec(
    name="qunar",
    domain="travel",
    base_url="https://travel.qunar.com",
    description="Qunar's Beijing attraction list with attraction pages",
    start=(("/p-cs299914-beijing-jingdian", "list"),),
    rules=(
        PageRule(
            "list",
            match=r"-jingdian",
            follow=(
                Follow("ul.list_item li.item a.titlink", "attraction"),
                Follow("div.b_paging a.next", "list"),
            ),
        ),
        PageRule(
            "attraction",
            match=r"/p-oi(\d+)-",
            entity_type="attraction",
            fields=(
                Field("name", "div.b_title h1.tit"),
                Field("name_en", "div.b_title h1.tit span.entit", optional=True),
                Field("rating", "span.cur_score"),
                Field("information", "div.b_detail_summary div.e_db_content_box", lang="zh"),
                Field("comment", "ul#comment_box li .e_comment_content", many=True, lang="zh", optional=True),
                Field("nearby", "div.b_nearby li a.titlink", many=True, link=True, optional=True),
            ),
            infoboxes=(
                Infobox(
                    rows="div.e_summary_list dl",
                    label="dt",
                    value="dd",
                    labels={
                        "地址": "address",
                        "电话": "phone",
                        "开放时间": "opening_hours",
                        "门票": "ticket",
                        "用时参考": "suggested_duration",
                        "官网": None,
                    },
                ),
            ),
            follow=(Follow("div.b_nearby li a.titlink", "attraction"),),
            hook=strip_english_suffix,
        ),
    ),
)
