"""`TcTuneMain`: the `tc-tune` command, over `tcdialect.tune.autotune`.

::

    tc-tune FILE.tc [--entry NAME] --sizes M=64,N=64 [--target cpu]
            [--budget-s 30] [--strategy genetic|model|random] [--trials N]
            [--executor local|ray] [--seed N] [--jobs N] [--repeat N]
            [--set NAME=VALUE ...] [--quiet]

The inputs are random arrays of the shapes the sizes give (floating-point
values in [0, 1), integers 0); the best options are stored in the cache
(`TCDIALECT_CACHE_DIR`, ...) where a later `define` of the same definition
finds them, and printed last. `--set` passes a strategy setting
(`--set population=20 --set generations=5`). Errors (a bad file, sizes,
definition) go to stderr with exit status 1.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from tcdialect.diagnostics import TCError

TOOL_NAME = "tc-tune"


def _setting(text: str) -> tuple[str, Any]:
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not '{text}'")
    try:
        parsed: Any = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return name.strip(), parsed


class TcTuneMain:
    """The command line (see the module docstring); `run(argv)` returns the
    exit status. Subclasses may add arguments in `register_arguments`."""

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None):
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.parser = argparse.ArgumentParser(
            prog=TOOL_NAME,
            description="Tune a TC definition's options for given sizes "
            "and store the best in tcdialect's cache.",
        )
        self.register_arguments()

    def register_arguments(self) -> None:
        p = self.parser
        p.add_argument("file", help="the TC source file")
        p.add_argument("--entry", help="the definition (when the file has several)")
        p.add_argument("--sizes", required=True, help="size bindings, e.g. M=64,N=64")
        p.add_argument("--target", default="cpu", help="the target (default: cpu)")
        p.add_argument("--budget-s", type=float, default=60.0, help="seconds to search")
        p.add_argument(
            "--strategy",
            default="genetic",
            choices=("genetic", "model", "random"),
            help="the search strategy (default: genetic)",
        )
        p.add_argument("--trials", type=int, help="at most this many candidates")
        p.add_argument(
            "--executor", default="local", choices=("local", "ray"), help="where to run"
        )
        p.add_argument("--seed", type=int, default=0, help="the search's random seed")
        p.add_argument("--jobs", type=int, help="compile processes")
        p.add_argument(
            "--repeat", type=int, default=5, help="timed calls per candidate"
        )
        p.add_argument(
            "--set",
            type=_setting,
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a strategy setting (e.g. population=20)",
        )
        p.add_argument("--quiet", action="store_true", help="no progress or summary")

    def inputs(self, kernel: Any, sizes: dict[str, int]) -> list[np.ndarray[Any, Any]]:
        """Random inputs of the shapes `sizes` give."""
        from tcdialect.arguments import numpy_dtype

        rng = np.random.default_rng(0)
        arrays: list[np.ndarray[Any, Any]] = []
        for tensor, t in zip(kernel.checked.inputs, kernel.defop.input_types):
            shape = tuple(e.evaluate(sizes) for e in tensor.extents)
            dtype = numpy_dtype(t.element_type)
            if np.issubdtype(dtype, np.floating):
                arrays.append(rng.random(shape).astype(dtype))
            else:
                arrays.append(np.zeros(shape, dtype=dtype))
        return arrays

    def run(self, argv: Sequence[str] | None = None) -> int:
        import tcdialect
        from tcdialect.transforms.tc_specialize import parse_sizes
        from tcdialect.tune.tuner import Tuner

        args = self.parser.parse_args(argv)
        try:
            with open(args.file, encoding="utf-8") as f:
                source = f.read()
            kernel = tcdialect.define(
                source, args.entry, target=args.target, filename=args.file
            )
            sizes = parse_sizes(args.sizes)
            missing = [s for s in kernel.checked.sizes if s not in sizes]
            if missing:
                raise TCError(f"--sizes gives no value for {', '.join(missing)}")
            tuner = Tuner(
                kernel,
                self.inputs(kernel, sizes),
                budget_s=args.budget_s,
                strategy=args.strategy,
                executor=args.executor,
                verbose=not args.quiet,
                trials=args.trials,
                seed=args.seed,
                jobs=args.jobs,
                repeat=args.repeat,
                settings=dict(args.set),
                out=self.out,
            )
            best = tuner.run().options
        except TCError as err:  # its text says "error:" already
            print(f"{TOOL_NAME}: {err}", file=self.err)
            return 1
        except OSError as err:
            print(f"{TOOL_NAME}: error: {err}", file=self.err)
            return 1
        print(repr(best), file=self.out)
        return 0
