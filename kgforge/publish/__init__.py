"""Making and publishing builds: the build transaction (import -> load -> check -> swap), the writers that extend
the published build under the write lock (link, a Wikidata/XLORE import), and which sources a rebuild imports
again (refresh, inferred).

Named ``publish``, not ``build``: tools take a folder named ``build/`` for build output and skip it (GitHub's
Python ``.gitignore`` template ignores every ``build/``, pytest's ``norecursedirs`` never enters one), and this
one holds the transactional core."""
