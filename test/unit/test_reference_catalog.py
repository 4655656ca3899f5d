"""The TC kernel catalog (anchor-tc.md §10) through the frontend and the reference.

Each kernel is TC source, parsed with `parse_tc` and evaluated by the NumPy
reference interpreter on small random inputs (fixed seeds, a few sizes each:
odd ones, and a 0 extent where natural), and compared against a NumPy
expression written by hand and evaluated in float64. Tolerances grow with the
length of the reductions involved (kernels in 16-bit floats give their own).

The 16-bit kernels (`float16_*`, `bf16_*`) also run, like every kernel, in the
CPU, GPU-simulator and PTX catalogs, which compare with the reference to
float32 precision (`bfloat16` outputs, uint16 bit patterns, exactly): their
inputs are chosen so that every backend rounds to the same 16-bit values
(see `bf16_softmax_inputs`).
"""

from __future__ import annotations

import functools
import math
import statistics
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tcdialect import reference
from tcdialect.bfloat16 import from_bfloat16, round_to_bfloat16, to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

Sizes = dict[str, int]
Arr = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Kernel:
    name: str
    source: str
    #: Random inputs for the given sizes.
    inputs: Callable[[np.random.Generator, Sizes], list[Any]]
    #: The expected outputs, from the inputs (floats widened to float64).
    expected: Callable[..., Any]
    sizes: Sequence[Sizes]
    #: Effective reduction length, for the tolerance.
    red: Callable[[Sizes], int] = lambda s: 1
    entry: str | None = None
    #: Output dtypes (float32 for every output when None; "bfloat16" for the
    #: uint16 bit patterns of a bfloat16 output).
    dtypes: tuple[str, ...] | None = None
    #: Relative and absolute tolerance against the float64 expectation
    #: (from the reduction length when None).
    rtol: float | None = None
    #: Left out of the tests that sweep every kernel through many option
    #: sets and stages (test_schedules, test_stage_roundtrip): kernels whose
    #: compiles take seconds and whose features have tests of their own
    #: (recurrences: test_recurrence; builtins: test_expand_math_builtins).
    sweeps: bool = True


def U(rng: np.random.Generator, *shape: int) -> Arr:
    """Uniform float32 values in [-1, 1)."""
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


def P(rng: np.random.Generator, *shape: int) -> Arr:
    """Uniform float32 values in [0.5, 1.5): safe for divisions and logs."""
    return rng.uniform(0.5, 1.5, shape).astype(np.float32)


def relu(x: Arr) -> Arr:
    return np.maximum(x, 0.0)


def conv2d(I: Arr, W: Arr, stride: int = 1) -> Arr:
    """Valid cross-correlation: O[n,m,h,w] = Σ I[n,c,s·h+kh,s·w+kw]·W[m,c,kh,kw]."""
    N, _, H, Wd = I.shape
    M, _, KH, KW = W.shape
    HO = max(0, (H - KH) // stride + 1)
    WO = max(0, (Wd - KW) // stride + 1)
    O = np.zeros((N, M, HO, WO))
    if HO == 0 or WO == 0:
        return O
    for kh in range(KH):
        for kw in range(KW):
            patch = I[:, :, kh : kh + stride * (HO - 1) + 1 : stride][
                :, :, :, kw : kw + stride * (WO - 1) + 1 : stride
            ]
            O += np.einsum("nchw,mc->nmhw", patch, W[:, :, kh, kw])
    return O


def group_conv(I: Arr, W: Arr, B: Arr) -> Arr:
    outs = [conv2d(I[:, g], W[g]) for g in range(I.shape[1])]
    O = np.stack(outs, axis=1) if outs else np.zeros((I.shape[0], 0, W.shape[1], 0, 0))
    return O + B[None, :, :, None, None]


def maxpool2(I: Arr) -> Arr:
    B, C, H, W = I.shape
    HO, WO = H // 2, W // 2
    x = I[:, :, : 2 * HO, : 2 * WO].reshape(B, C, HO, 2, WO, 2)
    return x.max(axis=(3, 5))


def avgpool2(I: Arr) -> Arr:
    B, C, H, W = I.shape
    out = np.zeros((B, C, max(H - 1, 0), max(W - 1, 0)))
    for i in range(2):
        for j in range(2):
            out += I[:, :, i : i + H - 1, j : j + W - 1] / 4.0
    return out


def softmax(I: Arr) -> Arr:
    e = np.exp(I - I.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def quarters(rng: np.random.Generator, *shape: int) -> Arr:
    """float16 multiples of 1/4 in [-1, 1]: their products and sums of up to
    127 products are exact in float16, and float32 sums in any order."""
    return (rng.integers(-4, 5, shape) / 4).astype(np.float16)


def bf16_softmax_inputs(rng: np.random.Generator, sizes: Sizes) -> list[Arr]:
    """Rows of bfloat16 values in [-2, 2] (bit patterns) for which every
    backend computes the same bfloat16 softmax.

    The differences from the row maximum are exact bfloat16 values in
    [-4, 0]; their exps, in [2^-6, 1], are rounded to bfloat16, and a row is
    redrawn until no exp lies within 2^-16 (relative) of a rounding boundary,
    so float32 exps that differ by a few ulps (CPU polynomials, libdevice,
    NumPy) round alike. The rounded exps are multiples of 2^-13, so their
    float32 sum is exact in any order, and the rest is correctly rounded.
    """
    n, c = sizes["N"], sizes["C"]
    rows: list[Arr] = []
    while len(rows) < n:
        x = round_to_bfloat16(rng.uniform(-2.0, 2.0, c))
        d = round_to_bfloat16(x - x.max()) if c else x
        m, _ = np.frexp(np.exp(d.astype(np.float64)))
        scaled = m * 256.0  # the 8 significant bits of bfloat16 and the rest
        if np.all(np.abs(scaled - np.floor(scaled) - 0.5) > 2.0**-8):
            rows.append(x)
    return [to_bfloat16(np.array(rows, np.float32).reshape(n, c))]


def moments(x: Arr, axes: tuple[int, ...]) -> tuple[Arr, Arr]:
    mean = x.mean(axis=axes)
    var = (x * x).mean(axis=axes) - mean * mean
    return mean, var


#: An Elman RNN (PyTorch's `nn.RNN`, tanh): h(t) from h(t - 1), one step
#: after another; the input projection of all steps is one comprehension.
RNN_SOURCE = """
def rnn(float(T, B, I) X, float(B, N) H0, float(N, I) Wx, float(N, N) Wh,
        float(N) bias) -> (h) {
    xw(t, b, n) +=! Wx(n, r_i) * X(t, b, r_i)
    h(t, b, n) = H0(b, n) where t in 0:T + 1
    for t in 1:T + 1 {
        p(t, b, n) +=! Wh(n, r_k) * h(t - 1, b, r_k)
        h(t, b, n) = tanh(p(t, b, n) + xw(t - 1, b, n) + bias(n))
    }
}
"""

#: An LSTM layer (PyTorch's `nn.LSTM` gate order i, f, g, o; one bias).
LSTM_SOURCE = """
def lstm(float(T, B, I) X, float(B, N) H0, float(B, N) C0, float(4, N, I) Wx,
         float(4, N, N) Wh, float(4, N) bias) -> (h, c) {
    xw(t, g, b, n) +=! Wx(g, n, r_i) * X(t, b, r_i)
    h(t, b, n) = H0(b, n) where t in 0:T + 1
    c(t, b, n) = C0(b, n) where t in 0:T + 1
    for t in 1:T + 1 {
        z(t, g, b, n) +=! Wh(g, n, r_k) * h(t - 1, b, r_k)
        z(t, g, b, n) = z(t, g, b, n) + xw(t - 1, g, b, n) + bias(g, n)
        c(t, b, n) = f * c(t - 1, b, n) + i * tanh(z(t, 2, b, n))
            where i = 1.0 / (1.0 + exp(-z(t, 0, b, n))),
                  f = 1.0 / (1.0 + exp(-z(t, 1, b, n)))
        h(t, b, n) = tanh(c(t, b, n)) / (1.0 + exp(-z(t, 3, b, n)))
    }
}
"""


def rnn_steps(X: Arr, H0: Arr, Wx: Arr, Wh: Arr, bias: Arr) -> Arr:
    h = [H0]
    for x in X:
        h.append(np.tanh(h[-1] @ Wh.T + x @ Wx.T + bias))
    return np.stack(h)


def lstm_steps(
    X: Arr, H0: Arr, C0: Arr, Wx: Arr, Wh: Arr, bias: Arr
) -> tuple[Arr, Arr]:
    def sigmoid(v: Arr) -> Arr:
        return 1 / (1 + np.exp(-v))

    h, c = [H0], [C0]
    for x in X:
        z = np.einsum("gni,bi->gbn", Wx, x) + np.einsum("gnk,bk->gbn", Wh, h[-1])
        z += bias[:, None, :]
        c.append(sigmoid(z[1]) * c[-1] + sigmoid(z[0]) * np.tanh(z[2]))
        h.append(sigmoid(z[3]) * np.tanh(c[-1]))
    return np.stack(h), np.stack(c)


def bessel_series(x: Arr) -> tuple[Arr, Arr, Arr, Arr, Arr]:
    """J0, J1, Y0, Y1 and I1 of x (0 < x <= 12) from their power series
    (Abramowitz and Stegun 9.1.10, 9.1.11, 9.6.10)."""
    q, g = x * x / 4, 0.5772156649015329
    j0 = j1 = i1 = s0 = s1 = h = 0.0
    for k in range(60):
        c0 = q**k / math.factorial(k) ** 2
        c1 = c0 / (k + 1)
        j0, j1, i1 = j0 + (-1) ** k * c0, j1 + (-1) ** k * c1, i1 + c1
        s0 = s0 + (-1) ** k * h * c0  # h = H_k, psi(k + 1) = H_k - g
        s1 = s1 + (-1) ** k * (2 * h + 1 / (k + 1) - 2 * g) * c1
        h += 1 / (k + 1)
    y0 = 2 / math.pi * ((np.log(x / 2) + g) * j0 - s0)
    y1 = x / math.pi * (np.log(x / 2) * j1 - s1 / 2) - 2 / (math.pi * x)
    return j0, x / 2 * j1, y0, y1, x / 2 * i1


def probability_builtins(X: Arr, P: Arr) -> tuple[Arr, Arr, Arr]:
    nd = statistics.NormalDist()
    inv = np.vectorize(nd.inv_cdf)
    erfc = np.vectorize(math.erfc)
    lgamma = np.vectorize(math.lgamma)
    a = inv((1 + X) / 2) / math.sqrt(2) + np.vectorize(nd.cdf)(3 * X) + inv(P)
    b = (
        lgamma(P + X + 1.5)
        + np.exp(4 * X * X) * erfc(2 * X)
        - inv(P / 2) / math.sqrt(2)
    )
    c = np.cos(np.pi * X) * np.sin(np.pi * P) + np.sqrt(X * X + P * P + 1)
    c += 1 / np.sqrt(2 * X * X + P * P + 4) + 1 / np.cbrt(P) + 1 / np.hypot(X, P)
    return a, b, c + X / P


def gamma_bessel_builtins(X: Arr, Y: Arr) -> tuple[Arr, Arr]:
    j0, j1, _, _, _ = bessel_series(np.abs(X))  # J1 and I1 are odd
    _, _, y0, y1, _ = bessel_series(Y)
    j1, i1 = np.sign(X) * j1, np.sign(X) * bessel_series(12 * np.abs(X))[4]
    a = np.vectorize(math.gamma)(Y) + j0 + j1 + y0 + y1 + np.i0(4 * X) + i1
    step = np.nextafter(X.astype(np.float32), Y.astype(np.float32)) - X
    b = np.floor(np.log2(Y)) + np.vectorize(math.remainder)(8 * X, Y) + 1e6 * step
    b += np.sqrt(X * X + Y * Y + 2) + 1 / np.sqrt(X * X + Y * Y + 1)
    return a, b


KERNELS: list[Kernel] = [
    Kernel(
        "add_sub",
        """
        def add_sub(float(N) A, float(N) B) -> (C, D) {
            C(i) = A(i) + B(i)
            D(i) = A(i) - B(i)
        }
        """,
        lambda r, s: [U(r, s["N"]), U(r, s["N"])],
        lambda A, B: (A + B, A - B),
        [{"N": 1}, {"N": 100}, {"N": 7}, {"N": 0}],
    ),
    Kernel(
        "copy",
        "def copy(float(M, N) I) -> (O) { O(m, n) = I(m, n) }",
        lambda r, s: [U(r, s["M"], s["N"])],
        lambda I: I,
        [{"M": 5, "N": 3}, {"M": 64, "N": 64}, {"M": 0, "N": 3}],
    ),
    Kernel(
        "scale",
        """
        def scale(float(M, N) I, float s) -> (O, O2) {
            O(m, n) = 3.5 * I(m, n)
            O2(m, n) = s * I(m, n)
        }
        """,
        lambda r, s: [U(r, s["M"], s["N"]), -1.25],
        lambda I, s: (3.5 * I, s * I),
        [{"M": 3, "N": 5}, {"M": 1, "N": 9}],
    ),
    Kernel(
        "abs",
        "def abs(float(M, N) A) -> (O) { O(m, n) = fabs(A(m, n)) }",
        lambda r, s: [U(r, s["M"], s["N"])],
        np.abs,
        [{"M": 4, "N": 7}, {"M": 2, "N": 0}],
    ),
    Kernel(
        "relu",
        """
        def relu(float(B, M) I) -> (O, O2) {
            O(b, m) = fmax(I(b, m), 0.0)
            O2(b, m) = max(I(b, m), 0.0)
        }
        """,
        lambda r, s: [U(r, s["B"], s["M"])],
        lambda I: (relu(I), relu(I)),
        [{"B": 3, "M": 5}, {"B": 8, "M": 16}],
    ),
    Kernel(
        "sigmoid_tanh_cos",
        """
        def act(float(N, C, H, W) I) -> (S, T, Cs) {
            S(n, c, h, w) = 1.0 / (1.0 + exp(-I(n, c, h, w)))
            T(n, c, h, w) = tanh(I(n, c, h, w))
            Cs(n, c, h, w) = cos(I(n, c, h, w))
        }
        """,
        lambda r, s: [3 * U(r, s["N"], s["C"], s["H"], s["W"])],
        lambda I: (1 / (1 + np.exp(-I)), np.tanh(I), np.cos(I)),
        [{"N": 2, "C": 3, "H": 4, "W": 5}, {"N": 1, "C": 1, "H": 1, "W": 7}],
    ),
    # The builtins without a math op (docs/builtins.md): every one of them
    # in two kernels, on arguments inside their domains.
    Kernel(
        "probability_builtins",
        """
        def probability(float(N) X, float(N) P) -> (A, B, C) {
            A(i) = erfinv(X(i)) + normcdf(3.0 * X(i)) + normcdfinv(P(i))
            B(i) = lgamma(P(i) + X(i) + 1.5) + erfcx(2.0 * X(i)) + erfcinv(P(i))
            C(i) = cospi(X(i)) * sinpi(P(i)) + norm3d(X(i), P(i), 1.0)
                + rnorm4d(X(i), P(i), X(i), 2.0) + rcbrt(P(i)) + rhypot(X(i), P(i))
                + fdivide(X(i), P(i))
        }
        """,
        lambda r, s: [
            0.99 * U(r, s["N"]),
            r.uniform(0.05, 0.95, s["N"]).astype(np.float32),
        ],
        probability_builtins,
        [{"N": 9}],
        sweeps=False,
    ),
    Kernel(
        "gamma_bessel_builtins",
        """
        def gamma_bessel(float(N) X, float(N) Y) -> (A, B) {
            A(i) = tgamma(Y(i)) + j0(X(i)) + j1(X(i)) + y0(Y(i)) + y1(Y(i))
                + cyl_bessel_i0(4.0 * X(i)) + cyl_bessel_i1(12.0 * X(i))
            B(i) = logb(Y(i)) + remainder(8.0 * X(i), Y(i))
                + 1000000.0 * (nextafter(X(i), Y(i)) - X(i))
                + norm4d(X(i), Y(i), 1.0, 1.0) + rnorm3d(X(i), Y(i), 1.0)
        }
        """,
        lambda r, s: [U(r, s["N"]), P(r, s["N"])],
        gamma_bessel_builtins,
        [{"N": 9}],
        sweeps=False,
    ),
    Kernel(
        "cast",
        "def cast(float(M, N) A) -> (int32 O) { O(m, n) = int32(A(m, n) + 3.0) }",
        lambda r, s: [(20 * U(r, s["M"], s["N"]))],
        lambda A: np.trunc(A.astype(np.float32) + np.float32(3.0)).astype(np.int32),
        [{"M": 3, "N": 7}, {"M": 0, "N": 2}],
        dtypes=("int32",),
    ),
    Kernel(
        "transpose",
        "def transpose(float(N, C, H, W) I) -> (O) { O(c, n, w, h) = I(n, c, h, w) }",
        lambda r, s: [U(r, s["N"], s["C"], s["H"], s["W"])],
        lambda I: I.transpose(1, 0, 3, 2),
        [{"N": 2, "C": 3, "H": 4, "W": 5}, {"N": 1, "C": 3, "H": 1, "W": 2}],
    ),
    Kernel(
        "concat",
        """
        def concat(float(M, N) A, float(M, N) B) -> (O) {
            O(n, i, m) = i == 0 ? A(m, n) : B(m, n) where i in 0:2
        }
        """,
        lambda r, s: [U(r, s["M"], s["N"]), U(r, s["M"], s["N"])],
        lambda A, B: np.stack([A.T, B.T], axis=1),
        [{"M": 3, "N": 5}, {"M": 4, "N": 0}],
    ),
    Kernel(
        "gather_rows",
        "def gather(float(V, W) In, int32(L) Idx) -> (O) { O(l, w) = In(Idx(l), w) }",
        lambda r, s: [
            U(r, s["V"], s["W"]),
            r.integers(0, s["V"], s["L"]).astype(np.int32),
        ],
        lambda In, Idx: In[Idx],
        [{"V": 5, "W": 3, "L": 2}, {"V": 9, "W": 4, "L": 11}, {"V": 3, "W": 2, "L": 0}],
    ),
    Kernel(
        "lut",
        """
        def lut(float(E, D) LUT, int32(B, L) I) -> (O) {
            O(b, d) +=! LUT(I(b, r_l), d)
        }
        """,
        lambda r, s: [
            U(r, s["E"], s["D"]),
            r.integers(0, s["E"], (s["B"], s["L"])).astype(np.int32),
        ],
        lambda LUT, I: LUT[I].sum(axis=1),
        [{"E": 13, "D": 5, "B": 3, "L": 7}, {"E": 82, "D": 22, "B": 17, "L": 4}],
        red=lambda s: s["L"],
    ),
    Kernel(
        "2lut",
        """
        def lut2(float(E1, D) LUT1, int32(B, L1) I1,
                 float(E2, D) LUT2, int32(B, L2) I2) -> (O1, O2) {
            O1(b, d) +=! LUT1(I1(b, r_l1), d)
            O2(b, d) +=! LUT2(I2(b, r_l2), d)
        }
        """,
        lambda r, s: [
            U(r, s["E1"], s["D"]),
            r.integers(0, s["E1"], (s["B"], s["L1"])).astype(np.int32),
            U(r, s["E2"], s["D"]),
            r.integers(0, s["E2"], (s["B"], s["L2"])).astype(np.int32),
        ],
        lambda L1, I1, L2, I2: (L1[I1].sum(axis=1), L2[I2].sum(axis=1)),
        [{"E1": 11, "E2": 6, "D": 3, "B": 5, "L1": 7, "L2": 2}],
        red=lambda s: max(s["L1"], s["L2"]),
    ),
    Kernel(
        "shifted_lut",
        """
        def shifted_lut(float(E, D) LUT, int32(B, L) I) -> (O) {
            O(b, d) +=! LUT(I(b, r_l) + 1, d)
        }
        """,
        lambda r, s: [
            U(r, s["E"], s["D"]),
            r.integers(0, s["E"] - 1, (s["B"], s["L"])).astype(np.int32),
        ],
        lambda LUT, I: LUT[I + 1].sum(axis=1),
        [{"E": 9, "D": 4, "B": 3, "L": 5}],
        red=lambda s: s["L"],
    ),
    Kernel(
        "mv",
        "def mv(float(R, C) A, float(C) x) -> (o) { o(r) +=! A(r, r_c) * x(r_c) }",
        lambda r, s: [U(r, s["R"], s["C"]), U(r, s["C"])],
        lambda A, x: A @ x,
        [{"R": 5, "C": 7}, {"R": 3, "C": 0}, {"R": 0, "C": 4}],
        red=lambda s: s["C"],
    ),
    Kernel(
        "matmul",
        """
        def matmul(float(M, K) A, float(K, N) B) -> (C) {
            C(m, n) +=! A(m, r_k) * B(r_k, n)
        }
        """,
        lambda r, s: [U(r, s["M"], s["K"]), U(r, s["K"], s["N"])],
        lambda A, B: A @ B,
        [
            {"M": 5, "K": 7, "N": 3},
            {"M": 33, "K": 65, "N": 17},
            {"M": 2, "K": 0, "N": 3},
        ],
        red=lambda s: s["K"],
    ),
    Kernel(
        "tmm",
        """
        def tmm(float(M, K) A, float(N, K) B) -> (C) {
            C(m, n) +=! A(m, r_k) * B(n, r_k)
        }
        """,
        lambda r, s: [U(r, s["M"], s["K"]), U(r, s["N"], s["K"])],
        lambda A, B: A @ B.T,
        [{"M": 4, "K": 9, "N": 5}, {"M": 1, "K": 32, "N": 7}],
        red=lambda s: s["K"],
    ),
    Kernel(
        "matmul_backward",
        """
        def matmul_bwd(float(M, K) A, float(K, N) B, float(M, N) dC) -> (dA, dB) {
            dA(m, k) +=! dC(m, r_n) * B(k, r_n)
            dB(k, n) +=! dC(r_m, n) * A(r_m, k)
        }
        """,
        lambda r, s: [
            U(r, s["M"], s["K"]),
            U(r, s["K"], s["N"]),
            U(r, s["M"], s["N"]),
        ],
        lambda A, B, dC: (dC @ B.T, A.T @ dC),
        [{"M": 5, "K": 3, "N": 7}, {"M": 0, "K": 2, "N": 3}],
        red=lambda s: max(s["M"], s["N"]),
    ),
    Kernel(
        "batch_matmul",
        """
        def batch_matmul(float(B, N, M) X, float(B, M, K) Y) -> (Z) {
            Z(b, n, k) +=! X(b, n, r_m) * Y(b, r_m, k)
        }
        """,
        lambda r, s: [U(r, s["B"], s["N"], s["M"]), U(r, s["B"], s["M"], s["K"])],
        lambda X, Y: X @ Y,
        [{"B": 3, "N": 5, "M": 7, "K": 4}, {"B": 2, "N": 26, "M": 72, "K": 26}],
        red=lambda s: s["M"],
    ),
    Kernel(
        "triple_hadamard",
        """
        def hadamard(float(B, D) U, float(B, D) V, float(B, D) W) -> (Z) {
            Z(b, d) = U(b, d) * V(b, d) * W(b, d)
        }
        """,
        lambda r, s: [U(r, s["B"], s["D"]) for _ in range(3)],
        lambda U_, V, W: U_ * V * W,
        [{"B": 3, "D": 11}, {"B": 1, "D": 0}],
    ),
    Kernel(
        "tensordot",
        """
        def tensordot(float(N, C1, C2, H, W) I0, float(N, C2, C3, H, W) I1) -> (O) {
            O(n, c1, c3, h, w) +=! I0(n, c1, r_c2, h, w) * I1(n, r_c2, c3, h, w)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["C1"], s["C2"], s["H"], s["W"]),
            U(r, s["N"], s["C2"], s["C3"], s["H"], s["W"]),
        ],
        lambda I0, I1: np.einsum("nabhw,nbchw->nachw", I0, I1),
        [{"N": 2, "C1": 3, "C2": 5, "C3": 2, "H": 3, "W": 4}],
        red=lambda s: s["C2"],
    ),
    Kernel(
        "sum1d",
        """
        def sum1d(float(M) A) -> (C, C2) {
            C +=! A(r_m)
            C2() +=! A(r_m)
        }
        """,
        lambda r, s: [U(r, s["M"])],
        lambda A: (np.array(A.sum()), np.array(A.sum())),
        [{"M": 165}, {"M": 7}, {"M": 0}],
        red=lambda s: s["M"],
    ),
    Kernel(
        "sum2d",
        "def sum2d(float(M, N) A) -> (C) { C(m) +=! A(m, r_n) }",
        lambda r, s: [U(r, s["M"], s["N"])],
        lambda A: A.sum(axis=1),
        [{"M": 4, "N": 7}, {"M": 11, "N": 5}, {"M": 7, "N": 128}, {"M": 3, "N": 0}],
        red=lambda s: s["N"],
    ),
    Kernel(
        "fcrelu",
        """
        def fcrelu(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {
            O1(b, n) +=! I(b, r_m) * W1(n, r_m)
            O1(b, n) = O1(b, n) + B1(n)
            O1(b, n) = fmax(O1(b, n), 0.0)
        }
        """,
        lambda r, s: [U(r, s["B"], s["M"]), U(r, s["N"], s["M"]), U(r, s["N"])],
        lambda I, W1, B1: relu(I @ W1.T + B1),
        [{"B": 4, "M": 9, "N": 5}, {"B": 1, "M": 0, "N": 3}],
        red=lambda s: s["M"],
    ),
    Kernel(
        "mlp2",
        """
        def mlp2(float(B, M) I, float(N, M) W1, float(N) B1,
                 float(P, N) W2, float(P) B2) -> (O2) {
            O1(b, n) +=! I(b, r_m) * W1(n, r_m)
            O1(b, n) = fmax(O1(b, n) + B1(n), 0.0)
            O2(b, p) +=! O1(b, r_n) * W2(p, r_n)
            O2(b, p) = fmax(O2(b, p) + B2(p), 0.0)
        }
        """,
        lambda r, s: [
            U(r, s["B"], s["M"]),
            U(r, s["N"], s["M"]),
            U(r, s["N"]),
            U(r, s["P"], s["N"]),
            U(r, s["P"]),
        ],
        lambda I, W1, B1, W2, B2: relu(relu(I @ W1.T + B1) @ W2.T + B2),
        [{"B": 3, "M": 7, "N": 5, "P": 4}, {"B": 2, "M": 16, "N": 9, "P": 1}],
        red=lambda s: s["M"] * s["N"],
    ),
    Kernel(
        "affine3",
        """
        def affine3(float(M, 3) A, float(3, N) B, float(N) bias) -> (C) {
            C(m, n) = bias(n) where m in 0:M
            C(m, n) += A(m, r_k) * B(r_k, n)
        }
        """,
        lambda r, s: [U(r, s["M"], 3), U(r, 3, s["N"]), U(r, s["N"])],
        lambda A, B, bias: A @ B + bias,
        [{"M": 4, "N": 5}, {"M": 0, "N": 2}],
        red=lambda s: 3,
    ),
    Kernel(
        "conv_valid",
        """
        def conv(float(N, C, H, W) I, float(M, C, KH, KW) W1, float(M) B) -> (O) {
            O(n, m, h, w) +=! I(n, r_c, h + r_kh, w + r_kw) * W1(m, r_c, r_kh, r_kw)
            O(n, m, h, w) = O(n, m, h, w) + B(m)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["C"], s["H"], s["W"]),
            U(r, s["M"], s["C"], s["KH"], s["KW"]),
            U(r, s["M"]),
        ],
        lambda I, W, B: conv2d(I, W) + B[None, :, None, None],
        [
            {"N": 2, "C": 3, "H": 7, "W": 6, "M": 4, "KH": 3, "KW": 2},
            {"N": 1, "C": 2, "H": 5, "W": 5, "M": 3, "KH": 1, "KW": 1},
            {"N": 1, "C": 1, "H": 3, "W": 4, "M": 2, "KH": 3, "KW": 4},
        ],
        red=lambda s: s["C"] * s["KH"] * s["KW"],
    ),
    Kernel(
        "conv_strided",
        """
        def conv_s2(float(N, C, H, W) I, float(M, C, KH, KW) W1) -> (O) {
            O(n, m, h, w) +=! I(n, r_c, 2 * h + r_kh, 2 * w + r_kw) * W1(m, r_c, r_kh, r_kw)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["C"], s["H"], s["W"]),
            U(r, s["M"], s["C"], s["KH"], s["KW"]),
        ],
        lambda I, W: conv2d(I, W, stride=2),
        [
            {"N": 2, "C": 3, "H": 7, "W": 8, "M": 2, "KH": 3, "KW": 2},
            {"N": 1, "C": 2, "H": 6, "W": 5, "M": 3, "KH": 1, "KW": 1},
        ],
        red=lambda s: s["C"] * s["KH"] * s["KW"],
    ),
    Kernel(
        "conv_backward_1x1",
        """
        def conv_bwd(float(N, C, H, W) I, float(M, C, 1, 1) W1, float(N, M, H, W) dO)
            -> (dI, dW) {
            dI(n, c, h, w) +=! dO(n, r_m, h - r_kh, w - r_kw) * W1(r_m, c, r_kh, r_kw)
            dW(m, c, kh, kw) +=! dO(r_n, m, r_h - kh, r_w - kw) * I(r_n, c, r_h, r_w)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["C"], s["H"], s["W"]),
            U(r, s["M"], s["C"], 1, 1),
            U(r, s["N"], s["M"], s["H"], s["W"]),
        ],
        lambda I, W, dO: (
            np.einsum("nmhw,mc->nchw", dO, W[:, :, 0, 0]),
            np.einsum("nmhw,nchw->mc", dO, I)[:, :, None, None],
        ),
        [{"N": 2, "C": 3, "H": 4, "W": 5, "M": 2}],
        red=lambda s: s["N"] * s["H"] * s["W"],
    ),
    Kernel(
        "group_conv",
        """
        def group_conv(float(N, G, C, H, W) I, float(G, F, C, KH, KW) W1, float(G, F) B)
            -> (O) {
            O(n, g, f, h, w) +=! I(n, g, r_c, h + r_kh, w + r_kw) * W1(g, f, r_c, r_kh, r_kw)
            O(n, g, f, h, w) = O(n, g, f, h, w) + B(g, f)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["G"], s["C"], s["H"], s["W"]),
            U(r, s["G"], s["F"], s["C"], s["KH"], s["KW"]),
            U(r, s["G"], s["F"]),
        ],
        group_conv,
        [
            {"N": 2, "G": 3, "C": 2, "F": 2, "H": 6, "W": 5, "KH": 3, "KW": 3},
            {"N": 1, "G": 2, "C": 1, "F": 3, "H": 3, "W": 3, "KH": 1, "KW": 2},
        ],
        red=lambda s: s["C"] * s["KH"] * s["KW"],
    ),
    Kernel(
        "masked_conv",
        """
        def masked_conv(float(B, C, H, W) I, float(F, C, KH, KW) W1, uint8(F, C) Mask)
            -> (O) {
            O(b, f, h, w) +=! Mask(f, r_c) == 1
                ? fmax(I(b, r_c, h + r_k1, w + r_k2), 0.0) * W1(f, r_c, r_k1, r_k2)
                : 0.0
        }
        """,
        lambda r, s: [
            U(r, s["B"], s["C"], s["H"], s["W"]),
            U(r, s["F"], s["C"], s["KH"], s["KW"]),
            r.integers(0, 2, (s["F"], s["C"])).astype(np.uint8),
        ],
        lambda I, W, Mask: conv2d(relu(I), W * (Mask == 1)[:, :, None, None]),
        [{"B": 2, "C": 3, "H": 5, "W": 6, "F": 4, "KH": 2, "KW": 3}],
        red=lambda s: s["C"] * s["KH"] * s["KW"],
    ),
    Kernel(
        "avgpool",
        """
        def avgpool(float(B, C, H, W) I) -> (O) {
            O(b, c, h, w) +=! I(b, c, h + r_kh, w + r_kw) / 4.0 where r_kh in 0:2, r_kw in 0:2
        }
        """,
        lambda r, s: [U(r, s["B"], s["C"], s["H"], s["W"])],
        avgpool2,
        [{"B": 1, "C": 1, "H": 4, "W": 4}, {"B": 2, "C": 3, "H": 5, "W": 7}],
        red=lambda s: 4,
    ),
    Kernel(
        "maxpool",
        """
        def maxpool(float(B, C, H, W) I) -> (O) {
            O(b, c, h, w) max=! I(b, c, 2 * h + r_i, 2 * w + r_j) where r_i in 0:2, r_j in 0:2
        }
        """,
        lambda r, s: [U(r, s["B"], s["C"], s["H"], s["W"])],
        maxpool2,
        [{"B": 2, "C": 3, "H": 4, "W": 6}, {"B": 1, "C": 2, "H": 7, "W": 5}],
    ),
    Kernel(
        "pool3",
        """
        def pool3(float(B, H, W) X) -> (Y) {
            Y(b, h, w) max=! X(b, 3 * h + r_i, 3 * w + r_j) where r_i in 0:3, r_j in 0:3
        }
        """,
        lambda r, s: [U(r, s["B"], s["H"], s["W"])],
        lambda X: (
            X[:, : X.shape[1] // 3 * 3, : X.shape[2] // 3 * 3]
            .reshape(X.shape[0], X.shape[1] // 3, 3, X.shape[2] // 3, 3)
            .max(axis=(2, 4))
        ),
        [{"B": 2, "H": 7, "W": 9}, {"B": 1, "H": 2, "W": 6}],
    ),
    Kernel(
        "softmax",
        """
        def softmax(float(N, D) I) -> (O) {
            mx(n) max=! I(n, r_d)
            e(n, d) = exp(I(n, d) - mx(n))
            s(n) +=! e(n, r_d)
            O(n, d) = e(n, d) / s(n)
        }
        """,
        lambda r, s: [4 * U(r, s["N"], s["D"])],
        softmax,
        [{"N": 3, "D": 7}, {"N": 5, "D": 32}, {"N": 0, "D": 3}],
        red=lambda s: s["D"],
    ),
    Kernel(
        "log_softmax",
        """
        def log_softmax(float(N, D) I) -> (O, mx, s) {
            mx(n) max=! I(n, r_d)
            s(n) +=! exp(I(n, r_d) - mx(n))
            O(n, d) = I(n, d) - mx(n) - log(s(n))
        }
        """,
        lambda r, s: [4 * U(r, s["N"], s["D"])],
        lambda I: (
            np.log(softmax(I)),
            I.max(axis=1),
            np.exp(I - I.max(axis=1, keepdims=True)).sum(axis=1),
        ),
        [{"N": 3, "D": 7}, {"N": 2, "D": 1}],
        red=lambda s: s["D"],
    ),
    Kernel(
        "layernorm",
        """
        def layernorm(float(T, B, C) I) -> (O) {
            mean(t, b) +=! I(t, b, r_c)
            mean(t, b) = mean(t, b) / float(C)
            cen(t, b, c) = I(t, b, c) - mean(t, b)
            var(t, b) +=! cen(t, b, r_c) * cen(t, b, r_c)
            var(t, b) = (var(t, b) + 1e-5) / float(C)
            O(t, b, c) = cen(t, b, c) * rsqrt(var(t, b))
        }
        """,
        lambda r, s: [U(r, s["T"], s["B"], s["C"])],
        lambda I: (
            (I - I.mean(axis=2, keepdims=True))
            / np.sqrt(
                (
                    ((I - I.mean(axis=2, keepdims=True)) ** 2).sum(
                        axis=2, keepdims=True
                    )
                    + 1e-5
                )
                / I.shape[2]
            )
        ),
        [{"T": 2, "B": 3, "C": 7}, {"T": 1, "B": 4, "C": 16}],
        red=lambda s: s["C"],
    ),
    Kernel(
        "batchnorm",
        """
        def batchnorm(float(N, C, H, W) I, float(C) rMeanIn, float(C) rVarIn,
                      float momentum, float eps)
            -> (O, rMeanOut, rVarOut, mean, var) {
            mean(c) +=! I(r_n, c, r_h, r_w)
            mean(c) = mean(c) / float(N * H * W)
            var(c) +=! (I(r_n, c, r_h, r_w) - mean(c)) * (I(r_n, c, r_h, r_w) - mean(c))
            var(c) = var(c) / float(N * H * W)
            rMeanOut(c) = (1.0 - momentum) * rMeanIn(c) + momentum * mean(c)
            rVarOut(c) = (1.0 - momentum) * rVarIn(c) + momentum * var(c)
            O(n, c, h, w) = (I(n, c, h, w) - mean(c)) * rsqrt(var(c) + eps)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["C"], s["H"], s["W"]),
            U(r, s["C"]),
            P(r, s["C"]),
            0.1,
            1e-5,
        ],
        lambda I, rm, rv, mom, eps: (
            (I - I.mean(axis=(0, 2, 3))[None, :, None, None])
            / np.sqrt(I.var(axis=(0, 2, 3)) + eps)[None, :, None, None],
            (1 - mom) * rm + mom * I.mean(axis=(0, 2, 3)),
            (1 - mom) * rv + mom * I.var(axis=(0, 2, 3)),
            I.mean(axis=(0, 2, 3)),
            I.var(axis=(0, 2, 3)),
        ),
        [{"N": 2, "C": 3, "H": 4, "W": 5}, {"N": 3, "C": 1, "H": 3, "W": 1}],
        red=lambda s: s["N"] * s["H"] * s["W"],
    ),
    Kernel(
        "moments",
        """
        def moments(float(N, K) I) -> (sum, mean, sumsq, var) {
            sum(n) +=! I(n, r_k)
            sumsq(n) +=! I(n, r_k) * I(n, r_k)
            mean(n) = sum(n) / float(K)
            var(n) = sumsq(n) / float(K) - mean(n) * mean(n)
        }
        def var_given_mean(float(N, K) I, float(N) mean) -> (var) {
            var(n) +=! d * d where d = I(n, r_k) - mean(n)
            var(n) = var(n) / float(K)
        }
        """,
        lambda r, s: [U(r, s["N"], s["K"])],
        lambda I: (
            I.sum(axis=1),
            I.mean(axis=1),
            (I * I).sum(axis=1),
            moments(I, (1,))[1],
        ),
        [{"N": 3, "K": 23}, {"N": 8, "K": 64}],
        red=lambda s: s["K"],
        entry="moments",
    ),
    Kernel(
        "var_given_mean",
        """
        def moments(float(N, K) I) -> (sum) {
            sum(n) +=! I(n, r_k)
        }
        def var_given_mean(float(N, K) I, float(N) mean) -> (var) {
            var(n) +=! d * d where d = I(n, r_k) - mean(n)
            var(n) = var(n) / float(K)
        }
        """,
        lambda r, s: [U(r, s["N"], s["K"]), U(r, s["N"])],
        lambda I, mean: ((I - mean[:, None]) ** 2).mean(axis=1),
        [{"N": 3, "K": 23}, {"N": 1, "K": 5}],
        red=lambda s: s["K"],
        entry="var_given_mean",
    ),
    Kernel(
        "group_norm_moments",
        """
        def group_norm_moments(float(N, G, D, H, W) I) -> (mean, var) {
            mean(n, g) +=! I(n, g, r_d, r_h, r_w)
            var(n, g) +=! I(n, g, r_d, r_h, r_w) * I(n, g, r_d, r_h, r_w)
            mean(n, g) = mean(n, g) / float(D * H * W)
            var(n, g) = var(n, g) / float(D * H * W) - mean(n, g) * mean(n, g)
        }
        def group_norm_apply(float(N, G, D, H, W) I, float(G, D) gamma, float(G, D) beta,
                             float(N, G) mean, float(N, G) var) -> (O) {
            O(n, g, d, h, w) = gamma(g, d) * (I(n, g, d, h, w) - mean(n, g))
                * rsqrt(var(n, g) + 1e-5) + beta(g, d)
        }
        """,
        lambda r, s: [U(r, s["N"], s["G"], s["D"], s["H"], s["W"])],
        lambda I: moments(I, (2, 3, 4)),
        [{"N": 2, "G": 3, "D": 2, "H": 5, "W": 3}],
        red=lambda s: s["D"] * s["H"] * s["W"],
        entry="group_norm_moments",
    ),
    Kernel(
        "group_norm_apply",
        """
        def group_norm_apply(float(N, G, D, H, W) I, float(G, D) gamma, float(G, D) beta,
                             float(N, G) mean, float(N, G) var) -> (O) {
            O(n, g, d, h, w) = gamma(g, d) * (I(n, g, d, h, w) - mean(n, g))
                * rsqrt(var(n, g) + 1e-5) + beta(g, d)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["G"], s["D"], s["H"], s["W"]),
            U(r, s["G"], s["D"]),
            U(r, s["G"], s["D"]),
            U(r, s["N"], s["G"]),
            P(r, s["N"], s["G"]),
        ],
        lambda I, gamma, beta, mean, var: (
            gamma[None, :, :, None, None]
            * (I - mean[:, :, None, None, None])
            / np.sqrt(var[:, :, None, None, None] + 1e-5)
            + beta[None, :, :, None, None]
        ),
        [
            {"N": 2, "G": 3, "D": 2, "H": 5, "W": 3},
            {"N": 1, "G": 1, "D": 1, "H": 1, "W": 0},
        ],
    ),
    Kernel(
        "group_norm_fused",
        """
        def group_norm(float(N, G, D, H, W) I, float(G, D) gamma, float(G, D) beta)
            -> (O, mean, var) {
            mean(n, g) +=! I(n, g, r_d, r_h, r_w)
            var(n, g) +=! I(n, g, r_d, r_h, r_w) * I(n, g, r_d, r_h, r_w)
            mean(n, g) = mean(n, g) / float(D * H * W)
            var(n, g) = var(n, g) / float(D * H * W) - mean(n, g) * mean(n, g)
            O(n, g, d, h, w) = gamma(g, d) * (I(n, g, d, h, w) - mean(n, g))
                * rsqrt(var(n, g) + 1e-5) + beta(g, d)
        }
        """,
        lambda r, s: [
            U(r, s["N"], s["G"], s["D"], s["H"], s["W"]),
            U(r, s["G"], s["D"]),
            U(r, s["G"], s["D"]),
        ],
        lambda I, gamma, beta: (
            gamma[None, :, :, None, None]
            * (I - moments(I, (2, 3, 4))[0][:, :, None, None, None])
            / np.sqrt(moments(I, (2, 3, 4))[1][:, :, None, None, None] + 1e-5)
            + beta[None, :, :, None, None],
            *moments(I, (2, 3, 4)),
        ),
        [{"N": 2, "G": 2, "D": 3, "H": 4, "W": 5}],
        red=lambda s: s["D"] * s["H"] * s["W"],
    ),
    Kernel(
        "cosine_similarity",
        """
        def cosine_similarity(float(M, N) I1, float(M, N) I2) -> (O, sumI1, sumI2) {
            sumI1(m) +=! I1(m, r_n) * I1(m, r_n)
            sumI2(m) +=! I2(m, r_n) * I2(m, r_n)
            O(m) +=! I1(m, r_n) * I2(m, r_n)
            O(m) = O(m) / max(sqrt(sumI1(m)) * sqrt(sumI2(m)), 1e-8)
        }
        """,
        lambda r, s: [U(r, s["M"], s["N"]), U(r, s["M"], s["N"])],
        lambda I1, I2: (
            (I1 * I2).sum(1)
            / np.maximum(np.linalg.norm(I1, axis=1) * np.linalg.norm(I2, axis=1), 1e-8),
            (I1 * I1).sum(1),
            (I2 * I2).sum(1),
        ),
        [{"M": 4, "N": 9}, {"M": 2, "N": 0}],
        red=lambda s: s["N"],
    ),
    Kernel(
        "kronecker3",
        """
        def kronecker3(float(D2, N2) W2, float(D1, N1) W1, float(D0, N0) W0,
                       float(M, N0, N1, N2) X) -> (Y) {
            XW2(m, n0, n1, d2) +=! X(m, n0, n1, r_n2) * W2(d2, r_n2)
            XW1(m, n0, d1, d2) +=! XW2(m, n0, r_n1, d2) * W1(d1, r_n1)
            Y(m, d0, d1, d2) +=! XW1(m, r_n0, d1, d2) * W0(d0, r_n0)
        }
        """,
        lambda r, s: [
            U(r, s["D2"], s["N2"]),
            U(r, s["D1"], s["N1"]),
            U(r, s["D0"], s["N0"]),
            U(r, s["M"], s["N0"], s["N1"], s["N2"]),
        ],
        lambda W2, W1, W0, X: np.einsum("mabc,zc,yb,xa->mxyz", X, W2, W1, W0),
        [
            {"M": 3, "D0": 2, "D1": 3, "D2": 4, "N0": 5, "N1": 3, "N2": 4},
            # M >= 4 x threads: max fusion shares the loop over m (one
            # parallel loop around the three mode products).
            {"M": 11, "D0": 3, "D1": 5, "D2": 17, "N0": 4, "N1": 10, "N2": 6},
        ],
        red=lambda s: s["N0"] * s["N1"] * s["N2"],
    ),
    Kernel(
        "subsample",
        "def subsample(float(I) B) -> (A) { A(i) = B(2 * i) }",
        lambda r, s: [U(r, s["I"])],
        lambda B: B[::2],
        [{"I": 7}, {"I": 8}, {"I": 1}, {"I": 0}],
    ),
    Kernel(
        "pair_sum",
        "def pair_sum(float(I) B) -> (A) { A(i) = B(2 * i) + B(2 * i + 1) }",
        lambda r, s: [U(r, s["I"])],
        lambda B: B[0 : 2 * (len(B) // 2) : 2] + B[1 : 2 * (len(B) // 2) : 2],
        [{"I": 7}, {"I": 8}, {"I": 1}],
    ),
    Kernel(
        "constant_fill",
        "def ones_like(float(M, N) X) -> (O) { O(m, n) = 1.0 where exists X(m, n) }",
        lambda r, s: [U(r, s["M"], s["N"])],
        np.ones_like,
        [{"M": 3, "N": 5}, {"M": 0, "N": 2}],
    ),
    Kernel(
        "iota_fill",
        "def iota_fill(float v) -> (O) { O(i) = v + float(i) where i in 0:16 }",
        lambda r, s: [0.5],
        lambda v: v + np.arange(16),
        [{}],
    ),
    Kernel(
        "clamp_mask",
        """
        def clamp_mask(float(N) X, float lo, float hi) -> (Y) {
            Y(n) = (X(n) >= lo && X(n) <= hi) ? X(n) : 0.0
        }
        """,
        lambda r, s: [U(r, s["N"]), -0.25, 0.5],
        lambda X, lo, hi: np.where((X >= lo) & (X <= hi), X, 0.0),
        [{"N": 17}],
    ),
    Kernel(
        "take_rows_clamped",
        """
        def take_rows(float(V, D) E, int32(K) Idx) -> (O) {
            O(k, d) = E(max(min(Idx(k), V - 1), 0), d)
        }
        """,
        lambda r, s: [
            U(r, s["V"], s["D"]),
            r.integers(-3, s["V"] + 3, s["K"]).astype(np.int32),
        ],
        lambda E, Idx: E[np.clip(Idx, 0, E.shape[0] - 1)],
        [{"V": 5, "D": 3, "K": 9}],
    ),
    Kernel(
        "count_pos",
        "def count_pos(float(N) X) -> (int32 cnt) { cnt +=! int32(X(r_n) > 0.0) }",
        lambda r, s: [U(r, s["N"])],
        lambda X: np.array((X > 0).sum(), np.int32),
        [{"N": 19}, {"N": 0}],
        dtypes=("int32",),
    ),
    Kernel(
        "rownorm",
        """
        def rownorm(float(R, C) X) -> (Y, ss) {
            ss(r) +=! X(r, r_c) * X(r, r_c)
            Y(r, c) = X(r, c) * rsqrt(ss(r) + 1e-6)
        }
        """,
        lambda r, s: [U(r, s["R"], s["C"])],
        lambda X: (
            X / np.sqrt((X * X).sum(1, keepdims=True) + 1e-6),
            (X * X).sum(1),
        ),
        [{"R": 3, "C": 8}],
        red=lambda s: s["C"],
    ),
    Kernel(
        "integer_floor_div_mod",
        """
        def divmod(int32(N) A, int32(N) B) -> (Q, R) {
            Q(i) = A(i) / B(i)
            R(i) = A(i) % B(i)
        }
        """,
        lambda r, s: [
            r.integers(-20, 20, s["N"]).astype(np.int32),
            r.integers(-4, 5, s["N"]).astype(np.int32),
        ],
        lambda A, B: (
            np.where(B == 0, 0, A // np.where(B == 0, 1, B)).astype(np.int32),
            np.where(B == 0, 0, A % np.where(B == 0, 1, B)).astype(np.int32),
        ),
        [{"N": 31}],
        dtypes=("int32", "int32"),
    ),
    Kernel(
        "float16_elementwise",
        """
        def f16_elementwise(float16(N) X, float16(N) Y, float16 a) -> (Z, R, D) {
            Z(i) = a * X(i) + Y(i) * 0.5
            R(i) = max(X(i) - Y(i), 0.0) / 3.0
            D(i) = float(X(i)) * float(Y(i))
        }
        """,
        lambda r, s: [
            U(r, s["N"]).astype(np.float16),
            U(r, s["N"]).astype(np.float16),
            np.asarray(1.25, np.float16),
        ],
        lambda X, Y, a: (a * X + Y * 0.5, np.maximum(X - Y, 0.0) / 3.0, X * Y),
        [{"N": 1}, {"N": 37}, {"N": 0}],
        dtypes=("float16", "float16", "float32"),
        rtol=2e-3,
    ),
    Kernel(
        "float16_matmul",
        """
        def f16_matmul(float16(M, K) A, float16(K, N) B) -> (C) {
            C(m, n) +=! A(m, r_k) * B(r_k, n)
        }
        """,
        lambda r, s: [quarters(r, s["M"], s["K"]), quarters(r, s["K"], s["N"])],
        lambda A, B: A @ B,
        [{"M": 5, "K": 13, "N": 7}, {"M": 2, "K": 0, "N": 3}],
        dtypes=("float16",),
        rtol=1e-6,
    ),
    Kernel(
        "bf16_softmax",
        """
        def bf16_softmax(bfloat16(N, C) I) -> (O, mx, ssum) {
            mx(n) max=! I(n, r_c)
            e(n, c) = exp(I(n, c) - mx(n))
            ssum(n) +=! e(n, r_c)
            O(n, c) = e(n, c) / ssum(n)
        }
        """,
        bf16_softmax_inputs,
        lambda I: (
            softmax(from_bfloat16(I).astype(np.float64)),
            from_bfloat16(I).max(axis=1),
            np.exp(from_bfloat16(I) - from_bfloat16(I).max(axis=1, keepdims=True)).sum(
                1
            ),
        ),
        [{"N": 3, "C": 7}, {"N": 5, "C": 33}],
        dtypes=("bfloat16", "bfloat16", "bfloat16"),
        rtol=2e-2,
    ),
    Kernel(
        "bf16_matvec",
        """
        def bf16_matvec(bfloat16(M, K) A, float(K) x) -> (y) {
            y(m) +=! A(m, r_k) * x(r_k)
        }
        """,
        lambda r, s: [to_bfloat16(U(r, s["M"], s["K"])), U(r, s["K"])],
        lambda A, x: from_bfloat16(A).astype(np.float64) @ x,
        [{"M": 6, "K": 50}, {"M": 3, "K": 0}],
        red=lambda s: s["K"],
    ),
    # Products of sizes (docs/language-notes.md, "Size expressions beyond
    # affine"): extents M * P and N * Q, subscripts divided by a size.
    Kernel(
        "kron",
        """
        def kron(float(M, N) A, float(P, Q) B) -> (K) {
            K(i, j) = A(i / P, j / Q) * B(i % P, j % Q) where i in 0:M * P, j in 0:N * Q
        }
        """,
        lambda r, s: [U(r, s["M"], s["N"]), U(r, s["P"], s["Q"])],
        np.kron,
        [{"M": 3, "N": 4, "P": 2, "Q": 5}, {"M": 2, "N": 0, "P": 3, "Q": 1}],
    ),
    # A scalar that drives sizes ("Scalars that drive sizes"): the stride S,
    # output extent (N - K) floordiv S + 1 (0 when K > N).
    Kernel(
        "strided_conv",
        """
        def strided_conv(float(N) I, float(K) W, int32 S) -> (O) {
            O(i) +=! I(i * S + r_k) * W(r_k)
        }
        """,
        lambda r, s: [U(r, s["N"]), U(r, s["K"]), np.int32(s["S"])],
        lambda I, W, S: np.array(
            [I[i * S : i * S + len(W)] @ W for i in range((len(I) - len(W)) // S + 1)]
        ).reshape(-1),
        [{"N": 13, "K": 3, "S": 2}, {"N": 7, "K": 3, "S": 5}, {"N": 2, "K": 3, "S": 1}],
        red=lambda s: s["K"],
    ),
    # Recurrences (docs/language-notes.md, "Recurrences"): an Elman RNN and
    # an LSTM layer over T steps, h(0) = H0. (One size each: every catalog
    # test compiles them; test_recurrence.py runs an empty recurrence.)
    Kernel(
        "rnn",
        RNN_SOURCE,
        lambda r, s: [
            U(r, s["T"], s["B"], s["I"]),
            U(r, s["B"], s["N"]),
            U(r, s["N"], s["I"]),
            U(r, s["N"], s["N"]),
            U(r, s["N"]),
        ],
        lambda X, H0, Wx, Wh, bias: rnn_steps(X, H0, Wx, Wh, bias),
        [{"T": 4, "B": 2, "I": 3, "N": 5}],
        red=lambda s: s["T"] * (s["N"] + s["I"]),
        sweeps=False,
    ),
    Kernel(
        "lstm",
        LSTM_SOURCE,
        lambda r, s: [
            U(r, s["T"], s["B"], s["I"]),
            U(r, s["B"], s["N"]),
            U(r, s["B"], s["N"]),
            U(r, 4, s["N"], s["I"]),
            U(r, 4, s["N"], s["N"]),
            U(r, 4, s["N"]),
        ],
        lambda X, H0, C0, Wx, Wh, bias: lstm_steps(X, H0, C0, Wx, Wh, bias),
        [{"T": 3, "B": 2, "I": 3, "N": 4}],
        red=lambda s: s["T"] * (s["N"] + s["I"]),
        sweeps=False,
    ),
]


def _pq_argmin_source() -> str:
    return """
    def pq_argmin(float(M, K) L, uint8(N, M) Codes) -> (S, v, int32 idx) {
        S(n) +=! L(r_m, int32(Codes(n, r_m)))
        v min=! S(r_n)
        idx min=! S(r_n) == v ? r_n : N
    }
    """


@functools.cache
def _parse(source: str) -> ModuleOp:
    return parse_tc(source, "catalog.tc")


def _widen(x: Any) -> Any:
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return x.astype(np.float64)
    return x


def _params() -> list[Any]:
    out = []
    for k in KERNELS:
        for s in k.sizes:
            label = ",".join(f"{n}={v}" for n, v in s.items())
            out.append(pytest.param(k, s, id=f"{k.name}[{label}]"))
    return out


def test_catalog_is_large_enough() -> None:
    assert len({k.name for k in KERNELS}) == len(KERNELS)
    assert len(KERNELS) + 1 >= 30  # + pq_argmin below


@pytest.mark.parametrize(("kernel", "sizes"), _params())
def test_catalog(kernel: Kernel, sizes: Sizes) -> None:
    module = _parse(kernel.source)
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    before = [np.copy(x) for x in inputs]
    outputs = reference.run(module, kernel.entry, inputs)
    for x, b in zip(inputs, before, strict=True):
        np.testing.assert_array_equal(x, b)  # inputs are not modified
    expected = kernel.expected(*[_widen(x) for x in inputs])
    if not isinstance(expected, tuple):
        expected = (expected,)
    assert len(outputs) == len(expected)
    dtypes = kernel.dtypes or ("float32",) * len(expected)
    red = max(1, kernel.red(sizes))
    rtol = kernel.rtol or 1e-5 * math.sqrt(red) + 2e-6
    for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        want = np.asarray(want)
        assert isinstance(got, np.ndarray), f"output {i}"
        if dtypes[i] == "bfloat16":
            assert got.dtype == np.uint16, f"output {i}"
            got = from_bfloat16(got)
        else:
            assert got.dtype == np.dtype(dtypes[i]), f"output {i}"
        assert got.shape == want.shape, f"output {i}"
        if got.dtype.kind == "f":
            np.testing.assert_allclose(
                got, want, rtol=rtol, atol=rtol, err_msg=f"output {i}"
            )
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"output {i}")


@pytest.mark.parametrize(("n", "m", "k"), [(9, 4, 6), (1, 3, 2), (16, 1, 256)])
def test_product_quantization_argmin(n: int, m: int, k: int) -> None:
    module = _parse(_pq_argmin_source())
    rng = np.random.default_rng(n * 100 + m)
    L = U(rng, m, k)
    codes = rng.integers(0, k, (n, m)).astype(np.uint8)
    S, v, idx = reference.run(module, None, [L, codes])
    want = L.astype(np.float64)[np.arange(m)[None, :], codes.astype(np.int64)].sum(1)
    np.testing.assert_allclose(S, want, rtol=1e-5 * math.sqrt(m) + 2e-6, atol=1e-6)
    assert v.shape == () and v.dtype == np.float32
    assert idx.shape == () and idx.dtype == np.int32
    assert v == S.min()
    assert int(idx) == int(np.flatnonzero(S == v)[0])


def test_pq_argmin_with_out_of_range_code_is_a_runtime_error() -> None:
    module = _parse(_pq_argmin_source())
    L = np.zeros((2, 4), np.float32)
    codes = np.array([[0, 4]], np.uint8)
    with pytest.raises(
        TCError, match="read of tensor 'L' out of bounds: subscript 1 is 4"
    ):
        reference.run(module, None, [L, codes])


def test_reverse_with_a_non_zero_lower_bound_is_rejected() -> None:
    # B(10 - i) infers i in [11 - N, 10]: not zero-based, so it is an error.
    with pytest.raises(TCError):
        parse_tc("def reverse(float(N) B) -> (A) { A(i) = B(10 - i) }")
