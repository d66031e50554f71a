"""DuRecDial sessions in the ACL 2020 release layout and in DuRecDial 2.0's (zh and en twins), made from the
real ACL 2020 README example (``shared/data/durecdial/acl2020_readme_example.json``).

DuRecDial 2.0's own files are not in the shared data (its release archive is gone), so its dev layout is
built here from the real example: the same conversation with each utterance's knowledge annotated by hand
(the triple the utterance says), ``goal_type_list`` and ``goal_topic_list`` per utterance, and an English
twin translated by hand with the same triples in English.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_file

WEATHER_ZH = "晴, 西南风, 最高气温:2℃, 最低气温:-12℃"
WEATHER_EN = "sunny, southwest wind, highest temperature: 2℃, lowest temperature: -12℃"
SHOP_ZH, SHOP_EN = "大清花饺子（十一纬路店）", "Daqinghua Dumplings (Shiyiwei Road)"
DISH_ZH, DISH_EN = "糖醋排骨", "Sweet and Sour Spare Ribs"

# utterance index -> (zh triple, en triple)
ANNOTATED = {
    1: (["沈阳", "2018-12-24", WEATHER_ZH], ["Shenyang", "2018-12-24", WEATHER_EN]),
    3: ([WEATHER_ZH, "适合吃", DISH_ZH], [WEATHER_EN, "Perfect for eating", DISH_EN]),
    5: ([SHOP_ZH, "特色菜", DISH_ZH], [SHOP_EN, "Specials", DISH_EN]),
    7: (
        [SHOP_ZH, "地址", "沈河区十一纬路198号（近南二经街）"],
        [SHOP_EN, "Address", "No. 198 Shiyiwei Road, Shenhe District (near Nan'erjing Street)"],
    ),
    9: ([SHOP_ZH, "人均价格", "50"], [SHOP_EN, "Price per person", "50"]),
    11: ([SHOP_ZH, "评分", "4.8"], [SHOP_EN, "Rating", "4.8"]),
}
TYPES_ZH = ["问天气"] * 3 + ["美食推荐"] * 2 + ["兴趣点推荐"] * 9 + ["再见"] * 2
TYPES_EN = ["Ask about weather"] * 3 + ["Food recommendation"] * 2 + ["POI recommendation"] * 9 + ["Say goodbye"] * 2
TOPICS_ZH = ["NULL"] * 3 + [DISH_ZH] * 2 + [SHOP_ZH] * 9 + ["NULL"] * 2
TOPICS_EN = ["NULL"] * 3 + [DISH_EN] * 2 + [SHOP_EN] * 9 + ["NULL"] * 2
CONVERSATION_EN = [
    "[1] What's the weather like today?",
    f"Shenyang today: {WEATHER_EN}. It is a bit cold, keep warm.",
    "You know so much.",
    f"[2] Weather like this is perfect for 『 {DISH_EN} 』.",
    "Sweet and sour spare ribs are my favourite food, I want to eat them right now.",
    f"[3] I happen to know a place: I recommend 『 {SHOP_EN} 』 for sweet and sour spare ribs.",
    "Where is it?",
    "The address is No. 198 Shiyiwei Road, Shenhe District (near Nan'erjing Street).",
    "How much per person?",
    "50 yuan per person.",
    "What is its rating?",
    "Its rating is 4.8.",
    "I'll go alone at half past twelve today, please book it for me.",
    "OK, I'll book it for you.",
    "[4] I'll get ready then, goodbye.",
    "OK, goodbye, have a nice day!",
]
GOAL_EN = (
    f"[1] Ask about weather --> [2] Food recommendation ( 『 {DISH_EN} 』 ) --> "
    f"[3] POI recommendation ( 『 {SHOP_EN} 』 ) --> [4] Say goodbye"
)
PROFILE_EN = {
    "Name": "Chen Xuanqi",
    "Gender": "Male",
    "Age range": "Over 50",
    "Residence": "Shenyang",
    "Occupation status": "Working",
    "Favorite stars": ["He Jiong"],
    "Accepted food": DISH_EN,
    "Rejected": ["Movie"],
}


def acl2020(shared) -> dict[str, Any]:
    return json.loads(shared("durecdial/acl2020_readme_example.json").read_text(encoding="utf-8"))


def v2_session(shared, language: str = "zh", nested: bool = False) -> dict[str, Any]:
    """The example as a DuRecDial 2.0 dev session: knowledge per utterance (``nested``: each utterance's a
    list of triples, else the triple itself), in Chinese or English."""
    example = acl2020(shared)
    en = language == "en"
    knowledge: list[Any] = []
    for i in range(len(example["conversation"])):
        triple = ANNOTATED[i][en] if i in ANNOTATED else None
        knowledge.append(([triple] if triple else []) if nested else (triple or []))
    return {
        "user_profile": PROFILE_EN if en else example["user_profile"],
        "knowledge": knowledge,
        "conversation": CONVERSATION_EN if en else example["conversation"],
        "goal": GOAL_EN if en else example["goals"],
        "situation": "Chat time: 2018-12-24 12:00, at the office, Monday" if en else example["situation"],
        "goal_type_list": TYPES_EN if en else TYPES_ZH,
        "goal_topic_list": TOPICS_EN if en else TOPICS_ZH,
    }


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def run_readers(kind: str, path: Path) -> dict:
    """The real LIC-2020 readers of ``kind`` on ``path`` (``shared/readers/run-readers``; skips without the
    PaddlePaddle/Research mirror)."""
    kit = shared_file("durecdial").parent.parent / "readers"
    mirrors = next(
        (
            Path(root)
            for root in (os.environ.get("READERS_MIRRORS"), "/work/.mirror")
            if root and (Path(root) / "PaddlePaddle+Research" / "repo").is_dir()
        ),
        None,
    )
    if mirrors is None or not (kit / "run-readers").exists():
        pytest.skip(
            "no PaddlePaddle/Research mirror or readers kit: fetch github:PaddlePaddle/Research and set READERS_MIRRORS"
        )
    result = subprocess.run(
        [str(kit / "run-readers"), "--mirrors", str(mirrors), kind, str(path), "--json", "--allow-missing"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "READERS_PYTHON": sys.executable},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])
