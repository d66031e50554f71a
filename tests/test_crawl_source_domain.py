"""`kgforge build DOMAIN --source crawl:SITE` in a domain without the crawl, while another domain of the workdir
holds it (`kgforge crawl` puts a crawl in the spec's domain unless told): one line naming the domain whose raw/
folder holds it, and nothing fetched (issue 50, item 10; it used to crawl the whole site again, offline nothing,
then say "no usable record")."""

from __future__ import annotations

from kgforge.crawl.loopback import LoopbackSite
from tests.crawl_support import CLI_SETTINGS, SITES


def test_a_crawl_in_another_domain_is_named_not_crawled_again(cli, workdir):
    with LoopbackSite(SITES / "qunar") as site:
        cli("crawl", "qunar", "--base-url", site.base_url, *CLI_SETTINGS, "--workdir", str(workdir))  # into travel
        fetched = len(site.paths())
        wrong = cli("build", "film", "--source", "crawl:qunar", "--workdir", str(workdir), check=False)
        assert len(site.paths()) == fetched  # nothing fetched again
    crawl = workdir / "travel" / "raw" / "crawl" / "qunar"
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "no usable record" not in wrong.stderr
    assert f"the raw/ folder of domain 'travel' ({crawl}) does" in wrong.stderr
    assert "`kgforge build travel --source crawl:qunar`" in wrong.stderr and "--domain film" in wrong.stderr
    assert not (workdir / "film" / "raw" / "crawl" / "qunar").exists() and not (workdir / "film" / "store").exists()
    built = cli("build", "travel", "--source", "crawl:qunar", "--workdir", str(workdir), "--json")  # where it is
    assert '"records_ok": 2' in built.stdout
