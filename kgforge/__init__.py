"""kgforge: build, query and export knowledge graphs for knowledge-grounded dialogue research.

``from kgforge import Domain`` is the public Python API (``kgforge.api``).
"""

import importlib
from typing import Any

from kgforge.core.version import __version__

__all__ = [
    "CrawlConfig",
    "Domain",
    "__version__",
    "build_candidates",
    "corpus_stats",
    "crawl_site",
    "load_spec",
    "site_names",
    "split_corpus",
    "write_card",
]
_API = {"Domain", "build_candidates", "corpus_stats", "split_corpus", "write_card"}
# Crawling loads the crawler alone (kgforge.api would load every stage): `kgforge crawl` starts quickly.
_CRAWL = {
    "CrawlConfig": "kgforge.crawl",
    "crawl_site": "kgforge.crawl.site_crawl",
    "load_spec": "kgforge.crawl",
    "site_names": "kgforge.crawl",
}


def __getattr__(name: str) -> Any:
    if name in _API or name in _CRAWL:
        # lazy: `import kgforge.core…` must not load every stage
        return getattr(importlib.import_module(_CRAWL.get(name, "kgforge.api")), name)
    raise AttributeError(f"module 'kgforge' has no attribute {name!r}")
