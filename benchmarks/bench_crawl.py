"""Crawl throughput against a local server with politeness off, and request spacing with it on.

    python benchmarks/bench_crawl.py [--small] [--pages N] [--repeats R] [--scrapy PATH]

Serves a generated Douban-shaped site (Top-250-style list pages of 25 films, each film a page) on
127.0.0.1 and crawls it with the real ``douban_movie`` spec:

1. politeness off (``CrawlConfig.impolite()``: 16 connections, no delay, no robots.txt): pages per
   minute of the whole crawl (fetch, cache write, link extraction, frontier commit per page), then
   re-parsing every cached page into records; beside the same URLs fetched by a bare sequential
   ``requests`` loop (no cache, no parsing) in the same run, and the Scrapy anchor: ``scrapy bench``
   run here when a ``scrapy`` executable is given or found, else its published ~3,000 pages/min;
2. politeness on (``delay`` 0.25 s, one connection per host; then robots.txt ``Crawl-delay: 1``):
   the gaps the server measured between consecutive requests, beside the configured delay.

Prints medians and ratios and writes ``benchmarks/results/bench_crawl.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgforge.crawl import CrawlConfig, crawl, load_spec, read_records  # noqa: E402
from kgforge.crawl.loopback import LoopbackSite, Route, Static  # noqa: E402

SCRAPY_ANCHOR_PAGES_PER_MIN = 3000
PER_LIST = 25


def film_page(i: int) -> bytes:
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>影片{i}</title></head><body>
<div id="wrapper"><div id="content"><h1><span property="v:itemreviewed">影片{i} Film {i}</span>
<span class="year">({1950 + i % 70})</span></h1><div id="info">
<span class="pl">类型:</span> <span property="v:genre">剧情</span> / <span property="v:genre">爱情</span><br/>
<span class="pl">制片国家/地区:</span> 中国大陆<br/><span class="pl">语言:</span> 汉语普通话<br/>
<span class="pl">片长:</span> <span property="v:runtime" content="{90 + i % 60}">{90 + i % 60}分钟</span><br/></div>
<strong class="ll rating_num" property="v:average">{5 + i % 50 / 10:.1f}</strong>
<span property="v:summary">{"这是一部关于成长与离别的电影。" * 20}</span>
</div></div></body></html>""".encode()


def list_page(start: int, films: int) -> bytes:
    items = "".join(
        f'<li><div class="item"><div class="info"><div class="hd"><a href="/subject/{n}/">'
        f'<span class="title">影片{n}</span></a></div></div></div></li>'
        for n in range(start, min(start + PER_LIST, films))
    )
    more = start + PER_LIST < films
    nxt = f'<span class="next"><a href="?start={start + PER_LIST}&amp;filter=">后页&gt;</a></span>' if more else ""
    return (
        f'<html><head><meta charset="utf-8"></head><body><ol class="grid_view">{items}</ol>'
        f'<div class="paginator">{nxt}</div></body></html>'
    ).encode()


def site_routes(pages: int) -> dict[str, Route]:
    films = pages - -(-pages // (PER_LIST + 1))  # pages = films + list pages
    routes: dict[str, Route] = {
        "/robots.txt": Static(b"User-agent: *\nDisallow: /private/\n", 200, {"Content-Type": "text/plain"})
    }
    for start in range(0, films, PER_LIST):
        routes["/top250" if start == 0 else f"/top250?start={start}&filter="] = Static(list_page(start, films))
    for n in range(films):
        routes[f"/subject/{n}/"] = Static(film_page(n))
    return routes


def impolite_run(pages: int, work: Path) -> dict[str, float]:
    with LoopbackSite(routes=site_routes(pages)) as site:
        spec = load_spec("douban_movie", site.base_url)
        started = time.perf_counter()
        summary = crawl(spec, work, CrawlConfig.impolite(), show_progress=False)
        seconds = time.perf_counter() - started
        urls = [site.base_url + path for path in site.routes if path != "/robots.txt"]
    parse_started = time.perf_counter()
    records = sum(1 for _ in read_records(work))
    parse_seconds = time.perf_counter() - parse_started
    return {
        "pages": summary.fetched,
        "failed": summary.failed,
        "seconds": seconds,
        "pages_per_min": summary.fetched / seconds * 60,
        "records": records,
        "reparse_pages_per_min": records / parse_seconds * 60,
        "urls": urls,
    }


def bare_requests_run(pages: int) -> float:
    """The same pages fetched one after another by a plain requests.Session: pages per minute."""
    with LoopbackSite(routes=site_routes(pages)) as site:
        session = requests.Session()
        paths = [p for p in site.routes if p != "/robots.txt"]
        started = time.perf_counter()
        for path in paths:
            _ = session.get(site.base_url + path, timeout=10).content
        return len(paths) / (time.perf_counter() - started) * 60


def scrapy_bench(executable: str | None, seconds: int) -> dict[str, object]:
    scrapy = executable or shutil.which("scrapy")
    if not scrapy:
        return {"source": "published anchor (scrapy bench)", "pages_per_min": SCRAPY_ANCHOR_PAGES_PER_MIN}
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(
            [scrapy, "bench", "-s", f"CLOSESPIDER_TIMEOUT={seconds}", "-s", "LOG_LEVEL=INFO"],
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=seconds + 60,
        )
    rates = [int(r) for r in re.findall(r"at (\d+) pages/min", out.stderr)]
    rates = [r for r in rates if r] or [0]
    return {
        "source": f"scrapy bench run here ({scrapy})",
        "pages_per_min": statistics.median(rates[1:] or rates),
        "samples": rates,
    }


def polite_gaps(delay: float, pages: int, robots: bytes | None, work: Path) -> dict[str, float]:
    routes = site_routes(200)
    if robots is not None:
        routes["/robots.txt"] = Static(robots, 200, {"Content-Type": "text/plain"})
    with LoopbackSite(routes=routes) as site:
        spec = load_spec("douban_movie", site.base_url)
        crawl(spec, work, CrawlConfig(delay=delay, jitter=0.0), limit=pages, show_progress=False)
        times = [entry.time for entry in site.log]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    return {"requests": len(times), "median_gap": statistics.median(gaps), "min_gap": min(gaps), "max_gap": max(gaps)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="300 pages, 2 repeats, short Scrapy run")
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scrapy", help="path to a scrapy executable to run `scrapy bench` beside us")
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/bench_crawl.json"))
    args = parser.parse_args()
    pages, repeats = (300, 2) if args.small else (args.pages, args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        runs = [impolite_run(pages, Path(tmp) / f"run{i}") for i in range(repeats)]
        bare = [bare_requests_run(pages) for _ in range(repeats)]
        polite = polite_gaps(0.25, 12, None, Path(tmp) / "polite")
        crawl_delay = polite_gaps(0.25, 4, b"User-agent: *\nCrawl-delay: 1\n", Path(tmp) / "crawl_delay")
    scrapy = scrapy_bench(args.scrapy, 10 if args.small else 20)
    ours = statistics.median(r["pages_per_min"] for r in runs)
    result = {
        "pages": runs[0]["pages"],
        "repeats": repeats,
        "politeness_off": {
            "kgforge_pages_per_min_median": round(ours),
            "kgforge_runs": [round(r["pages_per_min"]) for r in runs],
            "reparse_from_cache_pages_per_min_median": round(
                statistics.median(r["reparse_pages_per_min"] for r in runs)
            ),
            "bare_sequential_requests_pages_per_min_median": round(statistics.median(bare)),
            "scrapy": scrapy,
            "ratio_to_scrapy": round(ours / scrapy["pages_per_min"], 2) if scrapy["pages_per_min"] else None,
            "ratio_to_bare_requests": round(ours / statistics.median(bare), 2),
            "failed": sum(r["failed"] for r in runs),
        },
        "politeness_on": {
            "configured_delay": 0.25,
            **{k: round(v, 4) for k, v in polite.items()},
            "crawl_delay_1s": {k: round(v, 4) for k, v in crawl_delay.items()},
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
