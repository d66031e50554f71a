"""A domain on disk: its folder layout, single-writer lock and swap (``layout``), a build's manifest as typed
records (``manifest``), the Oxigraph store inside a build (``oxigraph``), file checksums (``checksums``), the graph as polars tables (``tables``), bounded SPARQL
(``query``) and RDF export (``rdf_export``). Everything above reads and publishes stores through here.
"""
