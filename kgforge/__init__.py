"""kgforge: build, query and export knowledge graphs for knowledge-grounded dialogue research.

``from kgforge import Domain`` is the public Python API (``kgforge.api``).
"""

from typing import TYPE_CHECKING

from kgforge.core import lazy
from kgforge.core.version import __version__ as __version__

if TYPE_CHECKING:  # each loaded on first use (kgforge.core.lazy): `import kgforge.core…` must not load every stage
    from kgforge.api import Domain as Domain
    from kgforge.api import build_candidates as build_candidates
    from kgforge.api import corpus_stats as corpus_stats
    from kgforge.api import split_corpus as split_corpus
    from kgforge.api import write_card as write_card

    # crawling loads the crawler alone (kgforge.api would load every stage): `kgforge crawl` starts quickly
    from kgforge.crawl import CrawlConfig as CrawlConfig
    from kgforge.crawl import load_spec as load_spec
    from kgforge.crawl import site_names as site_names
    from kgforge.crawl.site_crawl import crawl_site as crawl_site

__getattr__, __dir__ = lazy.attach(__name__)
