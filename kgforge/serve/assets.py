"""The explorer's static files (its own JS and CSS, and the vendored graph and editor libraries).

A request names a file by its path inside ``static/``; it is looked up in the list of files that folder
held when the server started, so no path (``../``, ``%2e%2e/``, ``..%2f``, ``\\``, a symlink) can reach
anything else: a name that is not on the list is a 404, whatever it decodes to.
"""

from __future__ import annotations

import mimetypes
from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

STATIC = Path(__file__).resolve().parent / "static"
CACHE_CONTROL = "public, max-age=3600"


@cache
def asset_files(folder: Path = STATIC) -> dict[str, Path]:
    """Path inside ``folder`` (POSIX form) → file, for every regular file found there."""
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


async def serve(request: Request) -> Response:
    return await serve_from(STATIC, request)


async def serve_from(folder: Path, request: Request) -> Response:
    """The file ``request`` names inside ``folder`` (another package's static files: ``kgforge collect``)."""
    found = asset_files(folder).get(request.path_params["path"])
    if found is None:
        return PlainTextResponse("no such file\n", status_code=404)
    media_type = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
    if media_type.startswith("text/") or media_type == "application/javascript":
        media_type += "; charset=utf-8"
    return FileResponse(
        found, media_type=media_type, headers={"Cache-Control": CACHE_CONTROL, "X-Content-Type-Options": "nosniff"}
    )
