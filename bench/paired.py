"""Paired before/after benchmark of our kernels: `python -m bench.paired`.

Runs the whole benchmark (`python -m bench --json`) alternately on a git
revision (`--before`, checked out in a temporary worktree) and on this
working tree, `--rounds` times each, the order swapped every round (ABBA...),
so both sides see the same phases of a noisy machine. Each side runs its own
`bench/` and `tcdialect/` with this venv's Python. The table gives, per
kernel, the median over rounds of our median time on each side, their ratio
(after / before) and the range of the per-round ratios: a kernel whose range
straddles 1.0 did not change beyond the noise.

    .venv/bin/python -m bench.paired --before main --rounds 2
    .venv/bin/python -m bench.paired --before d11da09 --output docs/paired.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _run_side(tree: Path, out: Path, extra: list[str]) -> dict[str, float]:
    """Our median seconds per kernel from one `python -m bench` run in `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, "-m", "bench", "--json", str(out), "--output", os.devnull]
    subprocess.run([*cmd, *extra], cwd=tree, env=env, check=True)
    data: dict[str, Any] = json.loads(out.read_text())
    times: dict[str, float] = {}
    for row in data["rows"]:
        ours = row["impls"].get("ours") or {}
        if ours.get("median_s") is not None and ours.get("error") is None:
            times[row["name"]] = float(ours["median_s"])
    return times


def _table(
    before: list[dict[str, float]], after: list[dict[str, float]], rev: str
) -> str:
    names = [n for n in before[0] if all(n in r for r in (*before, *after))]
    lines = [
        f"Paired runs: before = {rev}, after = the working tree; "
        f"{len(before)} rounds each, order alternated.",
        "",
        "| kernel | before ms | after ms | after / before | per-round range |",
        "|---|---|---|---|---|",
    ]
    for n in names:
        b = statistics.median(r[n] for r in before)
        a = statistics.median(r[n] for r in after)
        ratios = [ra[n] / rb[n] for rb, ra in zip(before, after)]
        lines.append(
            f"| {n} | {b * 1e3:.3g} | {a * 1e3:.3g} | {a / b:.3f} | "
            f"{min(ratios):.3f}-{max(ratios):.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.paired", description=__doc__)
    p.add_argument("--before", required=True, help="git revision to compare with")
    p.add_argument("--rounds", type=int, default=2, help="runs of each side")
    p.add_argument("--output", type=Path, default=None, help="Markdown table")
    p.add_argument("bench_args", nargs="*", help="passed to python -m bench (after --)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tc-paired-") as tmp:
        old = Path(tmp) / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(old), args.before],
            cwd=ROOT,
            check=True,
        )
        try:
            before: list[dict[str, float]] = []
            after: list[dict[str, float]] = []
            for r in range(args.rounds):
                sides = [("before", old, before), ("after", ROOT, after)]
                for label, tree, results in sides if r % 2 == 0 else sides[::-1]:
                    print(f"round {r + 1}: {label}", file=sys.stderr, flush=True)
                    out = Path(tmp) / f"{label}-{r}.json"
                    results.append(_run_side(tree, out, args.bench_args))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT)
    text = _table(before, after, args.before)
    print(text)
    if args.output is not None:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
