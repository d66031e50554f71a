"""`kgforge crawl SITE`: fetch a site politely into ``<workdir>/<domain>/raw/crawl/<site>/``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from kgforge import CrawlConfig, crawl_site, load_spec, site_names
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    HTTP_URL,
    NON_NEGATIVE,
    NON_NEGATIVE_NUMBER,
    NOTHING_CHANGED,
    POSITIVE,
    POSITIVE_NUMBER,
    JsonOption,
    WorkdirOption,
    app,
    bars_wanted,
    console,
    emit_json,
    err_console,
    one_of,
    show_mapping,
    when_interrupted,
)

if TYPE_CHECKING:
    from kgforge.api import CrawlReport  # kgforge.api loads every stage: the command imports the crawler alone

CRAWL_HINT = "interrupted: the pages fetched so far are cached; rerun with --resume to continue the crawl"
CRAWL_AFTER_DISK_FULL = "rerun it with --resume (the pages fetched so far are cached)"


# The options of `kgforge crawl`, in the order --help lists them (the command's signature keeps it).
SiteArgument = Annotated[
    str,
    typer.Argument(
        parser=one_of(site_names()), metavar="SITE", help="Site spec in crawlers/: " + ", ".join(site_names()) + "."
    ),
]
PageLimitOption = Annotated[
    int | None, typer.Option(parser=POSITIVE, help="Stop after this many pages (all runs of the crawl together).")
]
ResumeCrawlOption = Annotated[bool, typer.Option("--resume", help="Continue an unfinished crawl where it stopped.")]
RestartOption = Annotated[
    bool,
    typer.Option("--restart", help="Discard an unfinished crawl's frontier (the cache is kept) and begin again."),
]
BaseUrlOption = Annotated[
    str | None, typer.Option(parser=HTTP_URL, help="Crawl a mirror or a test server instead of the real site.")
]
CrawlDomainOption = Annotated[
    str | None, typer.Option(parser=DOMAIN, help="Domain folder to crawl into (default: the spec's).")
]
DelayOption = Annotated[
    float,
    typer.Option(
        parser=NON_NEGATIVE_NUMBER, help="Seconds between requests to one host (robots.txt Crawl-delay raises it)."
    ),
]
JitterOption = Annotated[
    float, typer.Option(parser=NON_NEGATIVE_NUMBER, help="Each wait is stretched by a random 0..JITTER fraction.")
]
ConcurrencyOption = Annotated[int, typer.Option(parser=POSITIVE, help="Requests in flight per host.")]
MaxAgeOption = Annotated[
    float | None,
    typer.Option(
        parser=NON_NEGATIVE_NUMBER,
        help="Refetch cached pages older than this many seconds (default: cached pages never expire).",
    ),
]
ReadTimeoutOption = Annotated[
    float, typer.Option(parser=POSITIVE_NUMBER, help="Give up on a response silent this many seconds.")
]
TotalTimeoutOption = Annotated[
    float,
    typer.Option(
        parser=POSITIVE_NUMBER,
        help="Give up on a response not complete "
        "after this many seconds: connect, headers and body together, "
        "however slowly they trickle in.",
    ),
]
MaxCrawlDelayOption = Annotated[
    float,
    typer.Option(
        parser=NON_NEGATIVE_NUMBER,
        help="Largest robots.txt "
        "Crawl-delay obeyed: a host asking for more is left for "
        "--resume (coverage partial, with a warning).",
    ),
]
RetriesOption = Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Retries on 429, 5xx and network errors.")]
MaxBytesOption = Annotated[int, typer.Option(parser=POSITIVE, help="Largest response accepted, in bytes.")]
IgnoreRobotsOption = Annotated[
    bool, typer.Option("--ignore-robots", help="Do not obey robots.txt (logged); only for sites you run yourself.")
]


@app.command("crawl")
@when_interrupted(CRAWL_HINT, after_disk_full=CRAWL_AFTER_DISK_FULL)
def crawl_command(
    site: SiteArgument,
    limit: PageLimitOption = None,
    resume: ResumeCrawlOption = False,
    restart: RestartOption = False,
    base_url: BaseUrlOption = None,
    domain: CrawlDomainOption = None,
    delay: DelayOption = 1.0,
    jitter: JitterOption = 0.1,
    concurrency: ConcurrencyOption = 1,
    max_age: MaxAgeOption = None,
    read_timeout: ReadTimeoutOption = 30.0,
    total_timeout: TotalTimeoutOption = 120.0,
    max_crawl_delay: MaxCrawlDelayOption = 60.0,
    retries: RetriesOption = 3,
    max_bytes: MaxBytesOption = 5 * 1024 * 1024,
    ignore_robots: IgnoreRobotsOption = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Crawl SITE politely (robots.txt, per-host delay, retries); pages are cached, so --resume after a
    kill fetches nothing twice and `kgforge build DOMAIN --source crawl:SITE` re-parses offline."""
    spec = load_spec(site, base_url)
    if ignore_robots:
        err_console.print(f"[yellow]warning[/]: robots.txt of {spec.base_url} is ignored at your request")
    config = CrawlConfig(
        delay=delay,
        jitter=jitter,
        per_host_concurrency=concurrency,
        workers=max(4, concurrency),
        cache_max_age=max_age,
        read_timeout=read_timeout,
        total_timeout=total_timeout,
        max_crawl_delay=max_crawl_delay,
        max_retries=retries,
        max_bytes=max_bytes,
        obey_robots=not ignore_robots,
    )
    report = crawl_site(
        site,
        domain=domain,
        workdir=workdir,
        base_url=base_url,
        config=config,
        limit=limit,
        resume=resume,
        restart=restart,
        progress=bars_wanted(json_out),
    )
    for text in report.summary.partial:
        err_console.print(f"[yellow]warning[/]: {escape(text)}", soft_wrap=True)
    if json_out:
        emit_json(report.as_dict())
        return
    _show_crawl(f"crawled {site} from {spec.base_url}", report)


def _show_crawl(title: str, report: CrawlReport) -> None:
    """The first warnings and failures on stderr, then the counts, each host's robots.txt and what is left."""
    summary, warnings = report.summary, report.field_warnings
    for text in warnings[:20]:
        err_console.print(f"[yellow]warning[/]: {escape(text)}", soft_wrap=True)
    for failure in summary.failures[:20]:
        err_console.print(f"[red]failed[/]: {escape(failure['url'])}: {escape(failure['reason'])}", soft_wrap=True)
    show_mapping(
        title,
        {
            "fetched": summary.fetched,
            "from cache": summary.cached,
            "failed": summary.failed,
            "skipped": summary.skipped,
            "pending": summary.pending,
            "retries": summary.retries,
            "pages/s": summary.pages_per_second,
            "records": report.records,
            "field warnings": len(warnings),
            "folder": str(report.folder),
        },
    )
    for origin, note in summary.robots.items():
        console.print(f"  robots {origin}: {note}", markup=False)
    if summary.pending:
        console.print(f"  {summary.pending} pages left: run again with --resume to continue")


@app.command("crawl-sites")
@when_interrupted(NOTHING_CHANGED)
def crawl_sites_command(json_out: JsonOption = False) -> None:
    """List the site specs `kgforge crawl` knows."""
    specs = {name: load_spec(name) for name in site_names()}
    if json_out:
        emit_json(
            {n: {"domain": s.domain, "base_url": s.base_url, "description": s.description} for n, s in specs.items()}
        )
        return
    for name, spec in specs.items():
        console.print(f"  {name:<16} {spec.domain:<8} {spec.base_url:<34} {spec.description}", markup=False)
