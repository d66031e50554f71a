"""kgforge: build, query and export knowledge graphs for knowledge-grounded dialogue research."""

from kgforge.core.version import __version__

__all__ = ["__version__"]
