"""kgforge: build, query and export knowledge graphs for knowledge-grounded dialogue research.

``from kgforge import Domain`` is the public Python API (``kgforge.api``).
"""

from typing import Any

from kgforge.core.version import __version__

__all__ = ["Domain", "__version__", "build_candidates", "corpus_stats", "split_corpus", "write_card"]
_API = {"Domain", "build_candidates", "corpus_stats", "split_corpus", "write_card"}


def __getattr__(name: str) -> Any:
    if name in _API:
        # lazy: `import kgforge.core…` must not load every stage
        from kgforge import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgforge' has no attribute {name!r}")
