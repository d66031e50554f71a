"""``python -m kgforge …``: the `kgforge` command, for environments where the script is not on PATH."""

from kgforge.cli import main

if __name__ == "__main__":
    main()
