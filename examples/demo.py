"""Parse examples/matmul.tc, print its tc dialect IR, and run it.

The kernel runs on the NumPy reference interpreter of the tc dialect (the
project's test oracle) and is checked against `A @ B`.

    make demo        # or: .venv/bin/python examples/demo.py
"""

import sys
from pathlib import Path

import numpy as np

from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.reference import run

MATMUL = Path(__file__).resolve().parent / "matmul.tc"
M, K, N = 64, 32, 16


def main() -> int:
    try:
        module = parse_tc(MATMUL.read_text(), str(MATMUL.name))
        print(f"// tc dialect IR of {MATMUL.name}")
        print(module)

        rng = np.random.default_rng(0)
        a = rng.standard_normal((M, K), dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        (c,) = run(module, "matmul", [a, b])
    except TCError as err:
        print(err, file=sys.stderr)
        return 1

    error = float(np.max(np.abs(c - a @ b)))
    print(f"\nmatmul on the reference interpreter, M={M} K={K} N={N}:")
    print(f"  output shape {c.shape}, dtype {c.dtype}, checksum {float(c.sum()):.6f}")
    print(f"  max |C - A @ B| = {error:.3e}")
    return 0 if error < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
