"""Running the app under uvicorn, loopback by default."""

from __future__ import annotations

import ipaddress
import logging
import socket
from pathlib import Path

import uvicorn

from kgforge.serve import kg
from kgforge.serve.app import create_app
from kgforge.serve.domain import ServeOptions

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (127.0.0.0/8, ::1)."""
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def serve(domain: str, workdir: Path | str | None = None, options: ServeOptions | None = None,
          sock: socket.socket | None = None) -> None:
    """Serve ``domain`` until interrupted. The store must exist (a clear error otherwise, before binding)."""
    options = options or ServeOptions()
    paths = kg.domain_paths(domain, workdir)
    kg.published_build(paths)
    if sock is None and not is_loopback(options.host):
        log.warning("listening on %s: the endpoint and explorer are reachable from other machines", options.host)
    config = uvicorn.Config(create_app(paths, options), host=options.host, port=options.port, log_level="warning",
                            access_log=False, timeout_graceful_shutdown=5, lifespan="on")
    server = uvicorn.Server(config)
    server.run(sockets=[sock] if sock is not None else None)
