"""kgforge: build, query and export knowledge graphs for knowledge-grounded dialogue research."""

__version__ = "0.1.0"
