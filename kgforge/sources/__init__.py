"""Every importer, each turning one input into the quads of one named graph, behind one protocol
(``importer``: ``ImportContext``, the ``IMPORTERS`` registry): KdConv and DuConv files (``kdconv``,
``duconv``, ``names``), crawl output (``crawl``), Wikidata dumps (``wikidata/``), XLORE dumps and web API
(``xlore/``), and the name matching that seeds them (``matching``). Sources never import the build.
"""
