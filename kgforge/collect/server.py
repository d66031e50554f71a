"""Running a collection under uvicorn on the server stack of ``kgforge serve``: the same socket binding (a busy
port or an unknown host is one line), connection deadlines and cap, and hygiene middleware."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import uvicorn

from kgforge.collect.app import create_collect_app
from kgforge.collect.folder import Folder
from kgforge.collect.service import CollectService
from kgforge.serve.domain import ServeOptions
from kgforge.serve.runner import Listening, listen, listening, uvicorn_config


def serve_collection(
    folder: Path | str,
    options: ServeOptions | None = None,
    *,
    workdir: Path | str | None = None,
    announce: Callable[[Listening], None] | None = None,
) -> None:
    """Serve the collection in ``folder`` until interrupted (the folder made by
    :func:`kgforge.collect.prepare_collection`)."""
    options = options or ServeOptions()
    service = CollectService(Folder(folder), workdir=workdir)
    try:
        sock = listen(options.host, options.port)
    except BaseException:
        service.close()
        raise
    if announce is not None:
        announce(listening(sock, options.host))
    uvicorn.Server(uvicorn_config(create_collect_app(service, options), options)).run(sockets=[sock])
