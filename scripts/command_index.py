"""Write kgforge/cli/_commands.py (each command's module and the line `kgforge --help` lists for it) from the
command modules themselves; run it after adding a command or changing the first paragraph of its docstring:

    .venv/bin/python scripts/command_index.py          # rewrite kgforge/cli/_commands.py
    .venv/bin/python scripts/command_index.py --check  # exit 1 if it differs (tests run this)
"""

from __future__ import annotations

import sys
from pathlib import Path
from pprint import pformat

from kgforge.cli import command_index, interrupt_index

INDEX = Path(__file__).resolve().parent.parent / "kgforge" / "cli" / "_commands.py"
HEAD = '''"""Which module of :mod:`kgforge.cli` defines each top-level command, and the line `kgforge --help` lists for it.

`kgforge --help`, `--version` and shell completion read this instead of importing every command module
(which would load every stage: seconds instead of a tenth of one); `kgforge` reads what Ctrl-C and a full
disk leave from it too (each command's ``@when_interrupted``). Written by scripts/command_index.py
(tests check that it matches the modules): run it after adding a command or changing the first
paragraph of a command's docstring.
"""

from __future__ import annotations

'''


def render() -> str:
    interrupted, after_disk_full = interrupt_index()
    return (
        HEAD + f"COMMANDS: dict[str, tuple[str, str]] = {pformat(command_index(), width=118, sort_dicts=False)}\n"
        f"INTERRUPTED: dict[str, str] = {pformat(interrupted, width=118)}\n"
        f"AFTER_DISK_FULL: dict[str, str] = {pformat(after_disk_full, width=118)}\n"
    )


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if INDEX.read_text(encoding="utf-8") != text:
            print(f"{INDEX} is out of date: run scripts/command_index.py", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
