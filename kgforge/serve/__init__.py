"""`kgforge serve`: a read-only SPARQL endpoint and a browser explorer over one domain.

    from kgforge.serve import ServeOptions, serve
    serve("travel", "kg", ServeOptions(port=7878))          # blocks; Ctrl-C stops it

The endpoint speaks the SPARQL 1.1 Protocol (:mod:`kgforge.serve.protocol`); queries run in a pool of
worker processes under a deadline (:mod:`kgforge.serve.pool`, :mod:`kgforge.serve.worker`); every request
reads one published build (:mod:`kgforge.serve.domain`); the explorer's pages are in
:mod:`kgforge.serve.explorer`; :mod:`kgforge.serve.stages` runs the pipeline's stages for a served build.
Design, and why an ASGI app over pyoxigraph rather than ``oxigraph serve-read-only``: ``docs/serve.md``.

The names below load on first use, so a query worker (``python -m kgforge.serve.worker``) imports
pyoxigraph and nothing of the app.
"""

from typing import TYPE_CHECKING

from kgforge.core import lazy

if TYPE_CHECKING:  # each loaded with its module on first use (kgforge.core.lazy)
    from kgforge.serve.app import create_app as create_app
    from kgforge.serve.domain import ServeOptions as ServeOptions
    from kgforge.serve.runner import serve as serve

__getattr__, __dir__ = lazy.attach(__name__)
