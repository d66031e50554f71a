"""kgforge: build, query and export knowledge graphs for knowledge-grounded dialogue research.

``from kgforge import Domain`` is the public Python API (``kgforge.api``).
"""

from typing import Any

from kgforge.core.version import __version__

__all__ = ["Domain", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Domain":
        # lazy: `import kgforge.core…` must not load every stage
        from kgforge.api import Domain

        return Domain
    raise AttributeError(f"module 'kgforge' has no attribute {name!r}")
