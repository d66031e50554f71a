"""Wikidata dumps → domain subgraphs: streamed framing, worker processes, truthy statements,
qualifiers, bilingual labels with a fallback chain, resumable passes, N-hop selection.

Modules: ``framing`` (reading dumps), ``values`` (the value → RDF table), ``entity`` (one entity →
triples), ``pipeline`` (worker processes), ``passes`` (resumable passes), ``select`` (seeds,
P279* closure, hops), ``dump`` (the importer), ``nt`` (truthy N-Triples), ``demo`` (a demo dump).
"""
