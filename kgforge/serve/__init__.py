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

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"create_app": "kgforge.serve.app", "ServeOptions": "kgforge.serve.domain", "serve": "kgforge.serve.runner"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'kgforge.serve' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
