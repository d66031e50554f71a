"""Raw-response cache on disk: every fetched response kept with its URL, status, headers and bytes.

File names are SHA-256 digests, never parts of a URL, so no URL can place a file outside the
cache folder. Metadata lives in ``meta/<aa>/<sha256(url)>.json``; bodies are content-addressed in
``bodies/<aa>/<sha256(body)>``. Both are written to a temporary file and renamed, so a kill leaves
either the old entry or the new one (the rename survives the process; like the frontier's WAL at
``synchronous=NORMAL`` it is not forced to disk against power loss, which would cost an fsync a
page). Re-parsing reads from here and never touches the network.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kgforge.core.files import part_owner, pid_alive, write_bytes_atomic


@dataclass
class CachedResponse:
    url: str  # the URL asked for
    final_url: str  # after redirects
    status: int
    headers: dict[str, str]
    body: bytes = field(repr=False)
    fetched_at: float = 0.0
    encoding: str | None = None  # detected when parsed, stored for the record
    elapsed: float = 0.0

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def url_key(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """A folder of cached responses keyed by URL."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def meta_path(self, url: str) -> Path:
        key = url_key(url)
        return self.root / "meta" / key[:2] / f"{key}.json"

    def body_path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 hex digest: {digest!r}")
        return self.root / "bodies" / digest[:2] / digest

    def get(self, url: str) -> CachedResponse | None:
        path = self.meta_path(url)
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            body = self.body_path(meta.pop("sha256")).read_bytes()
        except (FileNotFoundError, json.JSONDecodeError, KeyError, ValueError):
            return None
        return CachedResponse(body=body, **meta)

    def __contains__(self, url: str) -> bool:
        return self.get(url) is not None

    def remove_stale_temporaries(self) -> list[Path]:
        """Remove the temporary files of writes a killed process left behind (their pid is gone)."""
        removed = []
        for tmp in self.root.glob("*/*/*.part*") if self.root.is_dir() else []:
            pid = part_owner(tmp)
            if pid is not None and not pid_alive(pid):
                tmp.unlink(missing_ok=True)
                removed.append(tmp)
        return removed

    def put(self, response: CachedResponse) -> Path:
        digest = hashlib.sha256(response.body).hexdigest()
        body_path = self.body_path(digest)
        if not body_path.exists():
            write_bytes_atomic(body_path, response.body, durable=False)
        meta = {k: v for k, v in asdict(response).items() if k != "body"}
        meta["fetched_at"] = meta["fetched_at"] or time.time()
        meta["sha256"] = digest
        meta_path = self.meta_path(response.url)
        write_bytes_atomic(
            meta_path, json.dumps(meta).encode("ascii"), durable=False
        )  # \uXXXX escapes: any URL is storable
        return meta_path
