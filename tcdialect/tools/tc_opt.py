"""The `tc-opt` command: `TcOptMain` with the default arguments."""

from tcdialect.tc_opt_main import TcOptMain


def main() -> None:
    TcOptMain().run()


if __name__ == "__main__":
    main()
