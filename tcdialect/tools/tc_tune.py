"""The `tc-tune` command: `TcTuneMain` with the default arguments."""

import sys

from tcdialect.tune.cli import TcTuneMain


def main() -> None:
    sys.exit(TcTuneMain().run())


if __name__ == "__main__":
    main()
