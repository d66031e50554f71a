"""Write kgforge/datasets/durecdial/goal_transitions.tsv: DuRecDial's goal-type transitions, counted over real
sessions (only type names and counts are written; see kgforge/datasets/durecdial/goal_types.py). Run from the checkout:

    .venv/bin/python scripts/durecdial_goal_transitions.py ../shared/data/durecdial/lic2020_baseline_resource_dev.txt \
        ../shared/data/durecdial/acl2020_readme_example.json
    .venv/bin/python scripts/durecdial_goal_transitions.py --check FILE...   # exit 1 if the table differs

Any DuRecDial session files serve (LIC-2020 resource or competition layouts, DuRecDial 2.0, the ACL 2020
release): with DuRecDial's full train file the table holds every transition its sessions make.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kgforge.datasets.durecdial.goal_types import SHIPPED_TABLE, GoalTransitions


def main(argv: list[str]) -> int:
    check = "--check" in argv
    files = [Path(a) for a in argv if a != "--check"]
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    text = GoalTransitions.from_sessions(files).table_text()
    if check:
        same = SHIPPED_TABLE.read_text(encoding="utf-8") == text
        print(f"{SHIPPED_TABLE}: {'up to date' if same else 'differs; rerun without --check'}")
        return 0 if same else 1
    SHIPPED_TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {SHIPPED_TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
