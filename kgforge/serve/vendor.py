"""Re-create the explorer's vendored browser libraries from the npm registry.

    python -m kgforge.serve.vendor          # fetch the pinned versions with `npm pack`, copy, record sha256
    python -m kgforge.serve.vendor --check  # verify the files in static/vendor/ against VENDOR.json

The explorer loads nothing from a CDN: the built files of these npm packages ship inside the Python
package, unmodified, each beside its licence. Only ``npm`` is needed, and only to refresh them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VENDOR = Path(__file__).resolve().parent / "static" / "vendor"
MANIFEST = VENDOR / "VENDOR.json"
PACKAGES = {  # npm package@version → {file in the package: name in static/vendor/}
    "cytoscape@3.34.4": {"dist/cytoscape.min.js": "cytoscape.min.js", "LICENSE": "LICENSE.cytoscape"},
    "codemirror@5.65.21": {
        "lib/codemirror.js": "codemirror.js",
        "lib/codemirror.css": "codemirror.css",
        "mode/sparql/sparql.js": "sparql.js",
        "LICENSE": "LICENSE.codemirror",
    },
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch() -> dict[str, dict[str, str]]:
    record: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for spec, files in PACKAGES.items():
            packed = (
                subprocess.run(
                    ["npm", "pack", spec, "--silent"], cwd=folder, check=True, capture_output=True, text=True
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            with tarfile.open(Path(folder) / packed) as archive:
                for inner, name in files.items():
                    member = archive.extractfile(f"package/{inner}")
                    if member is None:  # a folder or a link to one: nothing to copy
                        raise SystemExit(f"{spec}: package/{inner} in {packed} is not a file")
                    with open(VENDOR / name, "wb") as out:
                        shutil.copyfileobj(member, out)
                    record[name] = {"package": spec, "path": inner, "sha256": sha256(VENDOR / name), "license": "MIT"}
    MANIFEST.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def check() -> list[str]:
    """Files that are missing or differ from what VENDOR.json recorded."""
    record = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return [
        name
        for name, entry in record.items()
        if not (VENDOR / name).is_file() or sha256(VENDOR / name) != entry["sha256"]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    if parser.parse_args().check:
        bad = check()
        print("vendored files ok" if not bad else f"differ from VENDOR.json: {', '.join(bad)}")
        sys.exit(1 if bad else 0)
    for name, entry in fetch().items():
        print(f"{name}: {entry['package']} {entry['path']} sha256 {entry['sha256'][:16]}…")


if __name__ == "__main__":
    main()
