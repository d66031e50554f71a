"""A DuConv-scale synthetic knowledge base in KdConv's ``kb_<domain>.json`` format.

The DuConv paper's Table 2: about 144k entities, 3.6M triples, 45 relations. Films and stars,
power-law degrees (few hubs, many leaves), entity-valued relations between them, short literal
values from small vocabularies (so associated triples form), and long comment texts.

    python benchmarks/synthetic.py OUT.json [--entities N] [--triples N] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ENTITY_RELATIONS = {  # relation: (head type, tail type)
    "主演": ("film", "star"),
    "导演": ("film", "star"),
    "编剧": ("film", "star"),
    "制片人": ("film", "star"),
    "代表作": ("star", "film"),
    "好友": ("star", "star"),
    "家人": ("star", "star"),
    "丈夫": ("star", "star"),
    "妻子": ("star", "star"),
    "搭档": ("star", "star"),
}
LITERAL_RELATIONS = {  # relation: (head type, vocabulary size; 0 = free value)
    "类型": ("film", 24),
    "国家": ("film", 40),
    "口碑": ("film", 4),
    "是否上映": ("film", 2),
    "发布日期信息": ("film", 60),
    "上映时间": ("film", 0),
    "票房": ("film", 0),
    "时光网评分": ("film", 50),
    "评分": ("film", 50),
    "标签": ("film", 200),
    "票房排行": ("film", 100),
    "片长": ("film", 120),
    "对白语言": ("film", 30),
    "出品公司": ("film", 2000),
    "拍摄地点": ("film", 500),
    "出生日期": ("star", 0),
    "祖籍": ("star", 300),
    "星座": ("star", 12),
    "性别": ("star", 2),
    "职业": ("star", 20),
    "身高": ("star", 60),
    "体重": ("star", 60),
    "血型": ("star", 4),
    "民族": ("star", 56),
    "毕业院校": ("star", 400),
    "获奖": ("star", 800),
    "描述": ("star", 300),
    "生肖": ("star", 12),
    "学历": ("star", 6),
    "主要成就": ("star", 0),
    "出生地": ("star", 600),
    "国籍": ("star", 40),
}
TEXT_RELATIONS = {"时光网短评": "film", "评论": "star", "剧情介绍": "film", "幕后花絮": "film", "职业经历": "star"}
TYPE_RELATION = "领域"
TYPE_NAMES = {"film": "电影", "star": "明星"}
# 10 + 32 + 5 + 领域 = 48 relation names, of which 45 appear in a full-size graph
_CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


def _name(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(_CJK) for _ in range(length))


def _text(rng: random.Random) -> str:
    return "，".join(_name(rng, rng.randint(4, 12)) for _ in range(rng.randint(3, 9))) + "。"


class _Zipf:
    """Draws indices 0..n-1 with probability proportional to 1/(i+1)^a (hubs first)."""

    def __init__(self, rng: random.Random, n: int, a: float = 1.1) -> None:
        weights = [1.0 / (i + 1) ** a for i in range(n)]
        total = 0.0
        self.cumulative = []
        for w in weights:
            total += w
            self.cumulative.append(total)
        self.rng = rng

    def draw(self) -> int:
        import bisect

        return bisect.bisect_left(self.cumulative, self.rng.random() * self.cumulative[-1])


def write_synthetic_kb(
    path: Path, entities: int = 144_000, triples: int = 3_600_000, relations: int = 45, seed: int = 0
) -> dict:
    """Write the KB to ``path`` and return its counts; the same seed gives the same file."""
    rng = random.Random(seed)
    kinds = ["film" if rng.random() < 0.4 else "star" for _ in range(entities)]
    names = _unique_names(rng, entities)
    by_kind = {k: [i for i, kind in enumerate(kinds) if kind == k] for k in ("film", "star")}
    popularity = {k: _Zipf(rng, len(v)) for k, v in by_kind.items()}
    relation_pool = _relation_pool(relations)
    per_entity = _degrees(rng, entities, triples - entities)
    vocabularies: dict[str, list[str]] = {}
    written = 0
    partial = path.with_name(path.name + ".partial")  # a reader never sees half a KB (another run, a rebuild)
    with open(partial, "w", encoding="utf-8") as out:
        out.write("{\n")
        for i in range(entities):
            kind, head = kinds[i], names[i]
            facts = {(TYPE_RELATION, TYPE_NAMES[kind]): None}
            options = relation_pool[kind]
            for _ in range(per_entity[i] * 3):  # draws that repeat a fact are retried, within bounds
                if len(facts) > per_entity[i]:
                    break
                relation = rng.choice(options)
                facts.setdefault((relation, _value(rng, relation, names, by_kind, popularity, vocabularies)), None)
            facts = [[head, relation, value] for relation, value in facts]
            written += len(facts)
            sep = ",\n" if i < entities - 1 else "\n"
            out.write(f"{json.dumps(head, ensure_ascii=False)}: {json.dumps(facts, ensure_ascii=False)}{sep}")
        out.write("}\n")
    partial.replace(path)
    return {"path": str(path), "entities": entities, "triples_written": written, "seed": seed}


def cached_synthetic_kb(folder: Path, small: bool) -> Path:
    """The benchmarks' graph: DuConv scale (144k entities, 3.6M triples) or ``small`` (10k, 250k),
    generated into ``folder`` once and reused afterwards (the same seed gives the same file)."""
    entities, triples = (10_000, 250_000) if small else (144_000, 3_600_000)
    folder.mkdir(parents=True, exist_ok=True)
    kb = folder / f"synthetic_kb_{entities}.json"
    if not kb.exists():
        print(f"generating {kb} (a minute at full scale; reused afterwards) ...", file=sys.stderr)
        write_synthetic_kb(kb, entities=entities, triples=triples)
    return kb


def _unique_names(rng: random.Random, n: int) -> list[str]:
    names: dict[str, None] = {}
    while len(names) < n:
        names.setdefault(_name(rng, rng.randint(2, 5)), None)
    return list(names)


def _relation_pool(relations: int) -> dict[str, list[str]]:
    chosen = list(ENTITY_RELATIONS) + list(LITERAL_RELATIONS) + list(TEXT_RELATIONS)
    chosen = chosen[: max(1, relations - 1)]
    pool: dict[str, list[str]] = {"film": [], "star": []}
    for relation in chosen:
        head_kind = (
            ENTITY_RELATIONS.get(relation, (None,))[0]
            or LITERAL_RELATIONS.get(relation, (None,))[0]
            or TEXT_RELATIONS[relation]
        )
        pool[head_kind].append(relation)
    return pool


def _degrees(rng: random.Random, entities: int, extra: int) -> list[int]:
    """Power-law number of facts per entity, summing to ``extra``."""
    raw = [rng.paretovariate(1.6) for _ in range(entities)]
    scale = extra / sum(raw)
    degrees = [int(r * scale) for r in raw]
    for i in rng.sample(range(entities), extra - sum(degrees)):
        degrees[i] += 1
    return degrees


def _value(
    rng: random.Random,
    relation: str,
    names: list[str],
    by_kind: dict[str, list[int]],
    popularity: dict[str, _Zipf],
    vocabularies: dict[str, list[str]],
) -> str:
    if relation in ENTITY_RELATIONS:
        tail_kind = ENTITY_RELATIONS[relation][1]
        return names[by_kind[tail_kind][popularity[tail_kind].draw()]]
    if relation in TEXT_RELATIONS:
        return _text(rng)
    size = LITERAL_RELATIONS[relation][1]
    if size == 0:
        return f"{rng.randint(1920, 2020)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if relation not in vocabularies:
        vocabularies[relation] = [_name(rng, rng.randint(2, 6)) for _ in range(size)]
    vocabulary = vocabularies[relation]
    return vocabulary[min(int(rng.paretovariate(1.2)) - 1, size - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--entities", type=int, default=144_000)
    parser.add_argument("--triples", type=int, default=3_600_000)
    parser.add_argument("--relations", type=int, default=45)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(write_synthetic_kb(args.out, args.entities, args.triples, args.relations, args.seed)))


if __name__ == "__main__":
    main()
