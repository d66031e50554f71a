"""A domain on disk: its folder layout and single-writer lock (``layout``), the published build's manifest
(``manifest``), file checksums (``checksums``), the graph as polars tables (``tables``), bounded SPARQL
(``query``) and RDF export (``rdf_export``). Everything above reads and publishes stores through here.
"""
