"""A seeded random TC program generator, a differential checker and a reducer.

The command line of `tcgen` (the first paragraph above is its ``--help``
description). It prints the program, the inputs' sizes and the failure::

    python -m tcdialect.testing.tcgen --seed N [--options '{"fusion": "min"}'] \\
        [--reduce [--time-limit S] [--isolate]] [--save FILE.tc]
    python -m tcdialect.testing.tcgen --file FILE.tc [--options ...]

``--isolate`` checks every reducer candidate in a fresh process (for
failures that kill the process, such as a segfault in compiled code): each
candidate is saved to a temporary ``.tc`` file and checked by
``python -m tcdialect.testing.tcgen --file``. The exit status is 0 when the
compiled kernel agrees with the reference, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tcdialect.testing.tcgen.checker import Failure, check
from tcdialect.testing.tcgen.generator import generate
from tcdialect.testing.tcgen.model import Program, load, save
from tcdialect.testing.tcgen.reducer import failure_predicate, reduce


def _isolated_predicate(
    failure: Failure, options: Mapping[str, object]
) -> Callable[[Program], bool]:
    """Like `failure_predicate`, but each check runs in a fresh Python process
    (for failures that kill the process, e.g. a segfault in compiled code)."""
    import subprocess
    import tempfile

    def still_fails(p: Program) -> bool:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "candidate.tc"
            save(p, path)
            cmd = [
                sys.executable,
                "-m",
                "tcdialect.testing.tcgen",
                "--file",
                str(path),
                "--options",
                json.dumps(dict(options)),
            ]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                return failure.kind == "timeout"
        if r.returncode < 0:
            return failure.kind == "signal"
        return f"# FAILED {failure.kind}:" in r.stdout

    return still_fails


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tcdialect.testing.tcgen",
        description=(__doc__ or "").split("\n\n")[0],
    )
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--seed", type=int, help="generate the program of this seed")
    src.add_argument(
        "--file", metavar="FILE.tc", help="check a reproducer written by --save"
    )
    ap.add_argument(
        "--options",
        default="{}",
        help="CpuOptions fields as JSON, e.g. '{\"threads\": 2}'",
    )
    ap.add_argument(
        "--reduce", action="store_true", help="shrink a failing program (needs --seed)"
    )
    ap.add_argument(
        "--isolate",
        action="store_true",
        help="--reduce checking each candidate in a new process (for crashes)",
    )
    ap.add_argument(
        "--time-limit",
        type=float,
        default=120.0,
        help="seconds for --reduce (default 120)",
    )
    ap.add_argument(
        "--save", metavar="FILE.tc", help="write the (reduced) failing program here"
    )
    args = ap.parse_args(argv)
    options = json.loads(args.options)
    program = generate(args.seed) if args.file is None else load(args.file)
    print(f"# seed={program.seed} options={json.dumps(options)}")
    print(program.describe())
    if args.isolate:
        signal = Failure("signal", "the check killed the process")
        killed = _isolated_predicate(signal, options)(program)
        failure = signal if killed else check(program, options)
    else:
        failure = check(program, options)
    if failure is None:
        print("# ok: the compiled kernel agrees with the reference")
        return 0
    print(f"# FAILED {failure}")
    if args.reduce:
        pred = (
            _isolated_predicate(failure, options)
            if args.isolate
            else failure_predicate(failure, options)
        )
        reduced = reduce(
            program, pred, args.time_limit, log=lambda m: print("#", m, file=sys.stderr)
        )
        print("\n# reduced:")
        print(reduced.describe())
        print(f"# {check(reduced, options) if not args.isolate else failure}")
        program = reduced
    if args.save:
        save(
            program,
            args.save,
            f"seed={program.seed} options={json.dumps(options)}\n"
            f"{failure.kind}: {failure.message.splitlines()[0] if failure.message else ''}",
        )
        print(f"# saved to {args.save}")
    return 1
