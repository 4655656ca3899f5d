"""The `tc-cache` command: `TcCacheMain` with the default arguments."""

import sys

from tcdialect.cache.cli import TcCacheMain


def main() -> None:
    sys.exit(TcCacheMain().run())


if __name__ == "__main__":
    main()
