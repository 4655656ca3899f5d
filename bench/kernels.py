"""The benchmarked kernels: TC source, NumPy and PyTorch peers, work counts.

Each `Kernel` holds:

* the TC definition (TC's own form where TC had one: tmm, batch_matmul,
  group_conv, maxpool, softmax, layernorm, moments, fcrelu, kronecker3,
  tensordot, as in the repository's reference catalog);
* `shapes`: the input shapes, in the definition's parameter order, as a
  function of the size parameters (inputs are uniform float32 in [-1, 1));
* `reference`: the float64 NumPy oracle every implementation is checked
  against;
* `numpy_peer` / `torch_peer`: factories that take the float32 inputs,
  preallocate outputs (and scratch), and return a `Peer` whose `run()` performs
  one call (`out=` wherever the API allows; `allocates` marks peers whose API
  forces a fresh output);
* `flops`: the floating-point operations of one call (a multiply-add is 2).

Compulsory bytes (inputs read once, outputs written once) follow from the
shapes, so they are not spelled out per kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Sizes = dict[str, int]
Shape = tuple[int, ...]
Arrays = list[np.ndarray]


@dataclass(frozen=True)
class Peer:
    """One ready-to-time call of a peer; `run()` returns its output(s)."""

    run: Callable[[], Any]
    #: True when the API cannot write into a preallocated output.
    allocates: bool = False


PeerFactory = Callable[[Arrays], Peer]


@dataclass(frozen=True)
class Kernel:
    """One row of the benchmark (see the module docstring)."""

    name: str
    source: str
    sizes: Sizes
    quick: Sizes
    shapes: Callable[[Sizes], list[Shape]]
    reference: Callable[..., tuple[np.ndarray, ...]]
    numpy_peer: PeerFactory
    torch_peer: PeerFactory
    flops: Callable[[Sizes], float]
    entry: str | None = None
    note: str = ""

    def make_inputs(self, sizes: Sizes, rng: np.random.Generator) -> Arrays:
        """Uniform float32 inputs in [-1, 1) for `sizes`."""
        return [
            (rng.random(shape, dtype=np.float32) * 2 - 1).astype(np.float32, copy=False)
            for shape in self.shapes(sizes)
        ]

    def reference_outputs(self, inputs: Arrays) -> tuple[np.ndarray, ...]:
        """The float64 reference outputs for float32 `inputs`."""
        return self.reference(*[x.astype(np.float64) for x in inputs])


def compulsory_bytes(inputs: Arrays, outputs: tuple[np.ndarray, ...]) -> int:
    """Bytes of the inputs read once plus the float32 outputs written once."""
    return sum(x.nbytes for x in inputs) + sum(4 * o.size for o in outputs)


def _torch() -> Any:
    import torch

    return torch


def _t(inputs: Arrays) -> list[Any]:
    """Torch tensors sharing memory with the NumPy inputs."""
    torch = _torch()
    return [torch.from_numpy(x) for x in inputs]


def _empty(*shape: int) -> np.ndarray:
    return np.empty(shape, dtype=np.float32)


# ----------------------------------------------------------------- matmul family

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""

MATMUL_ATB = """
def matmul_atb(float(K, M) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(r_k, m) * B(r_k, n)
}
"""

TMM = """
def tmm(float(M, K) A, float(N, K) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(n, r_k)
}
"""

BATCH_MATMUL = """
def batch_matmul(float(B, N, M) X, float(B, M, K) Y) -> (Z) {
    Z(b, n, k) +=! X(b, n, r_m) * Y(b, r_m, k)
}
"""


def _np_matmul(inputs: Arrays) -> Peer:
    A, B = inputs
    C = _empty(A.shape[0], B.shape[1])
    return Peer(lambda: np.matmul(A, B, out=C))


def _torch_matmul(inputs: Arrays) -> Peer:
    torch = _torch()
    A, B = _t(inputs)
    C = torch.empty(A.shape[0], B.shape[1])
    return Peer(lambda: torch.mm(A, B, out=C))


def _np_atb(inputs: Arrays) -> Peer:
    A, B = inputs
    C = _empty(A.shape[1], B.shape[1])
    return Peer(lambda: np.matmul(A.T, B, out=C))


def _torch_atb(inputs: Arrays) -> Peer:
    torch = _torch()
    A, B = _t(inputs)
    C = torch.empty(A.shape[1], B.shape[1])
    return Peer(lambda: torch.mm(A.t(), B, out=C))


def _np_tmm(inputs: Arrays) -> Peer:
    A, B = inputs
    C = _empty(A.shape[0], B.shape[0])
    return Peer(lambda: np.matmul(A, B.T, out=C))


def _torch_tmm(inputs: Arrays) -> Peer:
    torch = _torch()
    A, B = _t(inputs)
    C = torch.empty(A.shape[0], B.shape[0])
    return Peer(lambda: torch.mm(A, B.t(), out=C))


def _np_bmm(inputs: Arrays) -> Peer:
    X, Y = inputs
    Z = _empty(X.shape[0], X.shape[1], Y.shape[2])
    return Peer(lambda: np.matmul(X, Y, out=Z))


def _torch_bmm(inputs: Arrays) -> Peer:
    torch = _torch()
    X, Y = _t(inputs)
    Z = torch.empty(X.shape[0], X.shape[1], Y.shape[2])
    return Peer(lambda: torch.bmm(X, Y, out=Z))


def _matmul_kernel(name: str, n: int, quick: int) -> Kernel:
    return Kernel(
        name=name,
        source=MATMUL,
        sizes={"M": n, "K": n, "N": n},
        quick={"M": quick, "K": quick + 3, "N": quick + 5},
        shapes=lambda s: [(s["M"], s["K"]), (s["K"], s["N"])],
        reference=lambda A, B: (A @ B,),
        numpy_peer=_np_matmul,
        torch_peer=_torch_matmul,
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    )


def _batch_matmul_kernel(name: str, sizes: Sizes, quick: Sizes) -> Kernel:
    return Kernel(
        name=name,
        source=BATCH_MATMUL,
        sizes=sizes,
        quick=quick,
        shapes=lambda s: [(s["B"], s["N"], s["M"]), (s["B"], s["M"], s["K"])],
        reference=lambda X, Y: (X @ Y,),
        numpy_peer=_np_bmm,
        torch_peer=_torch_bmm,
        flops=lambda s: 2.0 * s["B"] * s["N"] * s["M"] * s["K"],
    )


# ------------------------------------------------------------------ convolutions

CONV2D = """
def conv2d(float(N, C, H, W) I, float(K, C, KH, KW) W1) -> (O) {
    O(n, k, h, w) +=! I(n, r_c, h + r_kh, w + r_kw) * W1(k, r_c, r_kh, r_kw)
}
"""

GROUP_CONV = """
def group_conv(float(N, G, C, H, W) I, float(G, F, C, KH, KW) W1, float(G, F) B)
    -> (O) {
    O(n, g, f, h, w) +=! I(n, g, r_c, h + r_kh, w + r_kw) * W1(g, f, r_c, r_kh, r_kw)
    O(n, g, f, h, w) = O(n, g, f, h, w) + B(g, f)
}
"""


def _out_hw(s: Sizes) -> tuple[int, int]:
    return s["H"] - s["KH"] + 1, s["W"] - s["KW"] + 1


def _conv2d_ref(I: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, ...]:
    win = sliding_window_view(I, W.shape[2:], axis=(2, 3))  # N,C,OH,OW,KH,KW
    out = np.tensordot(win, W, axes=([1, 4, 5], [1, 2, 3]))  # N,OH,OW,K
    return (np.ascontiguousarray(out.transpose(0, 3, 1, 2)),)


def _np_conv2d(inputs: Arrays) -> Peer:
    I, W = inputs
    win = sliding_window_view(I, W.shape[2:], axis=(2, 3))
    O = _empty(I.shape[0], W.shape[0], win.shape[2], win.shape[3])
    return Peer(lambda: np.einsum("nchwij,kcij->nkhw", win, W, out=O, optimize=True))


def _torch_conv2d(inputs: Arrays) -> Peer:
    torch = _torch()
    I, W = _t(inputs)
    return Peer(lambda: torch.nn.functional.conv2d(I, W), allocates=True)


def _gconv_ref(I: np.ndarray, W: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, ...]:
    win = sliding_window_view(I, W.shape[3:], axis=(3, 4))  # N,G,C,OH,OW,KH,KW
    out = np.einsum("ngchwij,gfcij->ngfhw", win, W, optimize=True)
    return (out + B[None, :, :, None, None],)


def _np_gconv(inputs: Arrays) -> Peer:
    """im2col into a preallocated buffer, then one batched GEMM per (n, g).

    (np.einsum over the sliding windows is ~6x slower here.)
    """
    I, W, B = inputs
    n, g, c, _, _ = I.shape
    f, kh, kw = W.shape[1], W.shape[3], W.shape[4]
    win = sliding_window_view(I, (kh, kw), axis=(3, 4))  # N,G,C,OH,OW,KH,KW
    oh, ow = win.shape[3], win.shape[4]
    cols = _empty(n, g, c, kh, kw, oh, ow)
    cols_v = cols.reshape(n, g, c * kh * kw, oh * ow)
    w2 = W.reshape(g, f, c * kh * kw)
    O = _empty(n, g, f, oh, ow)
    o_v = O.reshape(n, g, f, oh * ow)
    bias = B[None, :, :, None]

    def run() -> np.ndarray:
        np.copyto(cols, win.transpose(0, 1, 2, 5, 6, 3, 4))
        np.matmul(w2, cols_v, out=o_v)
        np.add(o_v, bias, out=o_v)
        return O

    return Peer(run)


def _torch_gconv(inputs: Arrays) -> Peer:
    torch = _torch()
    I, W, B = _t(inputs)
    n, g, c, h, w = I.shape
    f = W.shape[1]
    I2 = I.view(n, g * c, h, w)
    W2 = W.reshape(g * f, c, W.shape[3], W.shape[4])
    B2 = B.reshape(g * f)

    def run() -> Any:
        out = torch.nn.functional.conv2d(I2, W2, B2, groups=g)
        return out.view(n, g, f, out.shape[2], out.shape[3])

    return Peer(run, allocates=True)


# ---------------------------------------------------------------------- pooling

MAXPOOL = """
def maxpool(float(B, C, H, W) I) -> (O) {
    O(b, c, h, w) max=! I(b, c, 2 * h + r_i, 2 * w + r_j) where r_i in 0:2, r_j in 0:2
}
"""


def _maxpool_ref(I: np.ndarray) -> tuple[np.ndarray, ...]:
    b, c, h, w = I.shape
    v = I[:, :, : h // 2 * 2, : w // 2 * 2].reshape(b, c, h // 2, 2, w // 2, 2)
    return (v.max(axis=(3, 5)),)


def _np_maxpool(inputs: Arrays) -> Peer:
    """Max of row pairs into a scratch, then of column pairs (strided views).

    (np.max over a 6-D reshape is ~25x slower here.)
    """
    (I,) = inputs
    b, c, h, w = I.shape
    h2, w2 = h // 2, w // 2
    rows = _empty(b, c, h2, w)
    O = _empty(b, c, h2, w2)

    def run() -> np.ndarray:
        np.maximum(I[:, :, 0 : 2 * h2 : 2, :], I[:, :, 1 : 2 * h2 : 2, :], out=rows)
        return np.maximum(rows[..., 0 : 2 * w2 : 2], rows[..., 1 : 2 * w2 : 2], out=O)

    return Peer(run)


def _torch_maxpool(inputs: Arrays) -> Peer:
    torch = _torch()
    (I,) = _t(inputs)
    return Peer(lambda: torch.nn.functional.max_pool2d(I, 2), allocates=True)


# ------------------------------------------------------- normalizations, reductions

SOFTMAX = """
def softmax(float(N, D) I) -> (O) {
    mx(n) max=! I(n, r_d)
    e(n, d) = exp(I(n, d) - mx(n))
    s(n) +=! e(n, r_d)
    O(n, d) = e(n, d) / s(n)
}
"""

LAYERNORM = """
def layernorm(float(T, B, C) I) -> (O) {
    mean(t, b) +=! I(t, b, r_c)
    mean(t, b) = mean(t, b) / float(C)
    cen(t, b, c) = I(t, b, c) - mean(t, b)
    var(t, b) +=! cen(t, b, r_c) * cen(t, b, r_c)
    var(t, b) = (var(t, b) + 1e-5) / float(C)
    O(t, b, c) = cen(t, b, c) * rsqrt(var(t, b))
}
"""

ROWSUM = """
def sum2d(float(M, N) A) -> (C) {
    C(m) +=! A(m, r_n)
}
"""

MOMENTS2 = """
def moments2(float(N, K) I) -> (mean, var) {
    mean(n) +=! I(n, r_k)
    var(n) +=! I(n, r_k) * I(n, r_k)
    mean(n) = mean(n) / float(K)
    var(n) = var(n) / float(K) - mean(n) * mean(n)
}
"""


def _softmax_ref(I: np.ndarray) -> tuple[np.ndarray, ...]:
    e = np.exp(I - I.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True),)


def _np_softmax(inputs: Arrays) -> Peer:
    (I,) = inputs
    O = np.empty_like(I)
    mx = _empty(I.shape[0], 1)
    s = _empty(I.shape[0], 1)

    def run() -> np.ndarray:
        np.max(I, axis=1, keepdims=True, out=mx)
        np.subtract(I, mx, out=O)
        np.exp(O, out=O)
        np.sum(O, axis=1, keepdims=True, out=s)
        return np.divide(O, s, out=O)

    return Peer(run)


def _torch_softmax(inputs: Arrays) -> Peer:
    torch = _torch()
    (I,) = _t(inputs)
    O = torch.empty_like(I)
    return Peer(lambda: torch.softmax(I, 1, out=O))


def _layernorm_ref(I: np.ndarray) -> tuple[np.ndarray, ...]:
    c = I.shape[2]
    cen = I - I.mean(axis=2, keepdims=True)
    var = ((cen * cen).sum(axis=2, keepdims=True) + 1e-5) / c
    return (cen / np.sqrt(var),)


def _np_layernorm(inputs: Arrays) -> Peer:
    (I,) = inputs
    t, b, c = I.shape
    O = np.empty_like(I)
    mean = _empty(t, b, 1)
    var = _empty(t, b)

    def run() -> np.ndarray:
        np.sum(I, axis=2, keepdims=True, out=mean)
        np.divide(mean, c, out=mean)
        np.subtract(I, mean, out=O)
        np.einsum("tbc,tbc->tb", O, O, out=var)
        np.add(var, 1e-5, out=var)
        np.divide(var, c, out=var)
        np.sqrt(var, out=var)
        np.divide(1.0, var, out=var)
        return np.multiply(O, var[:, :, None], out=O)

    return Peer(run)


def _torch_layernorm(inputs: Arrays) -> Peer:
    torch = _torch()
    (I,) = _t(inputs)
    c = I.shape[2]
    # TC adds 1e-5 to the sum of squares, i.e. eps = 1e-5 / C on the variance.
    return Peer(
        lambda: torch.nn.functional.layer_norm(I, (c,), eps=1e-5 / c), allocates=True
    )


def _np_rowsum(inputs: Arrays) -> Peer:
    (A,) = inputs
    C = _empty(A.shape[0])
    return Peer(lambda: np.sum(A, axis=1, out=C))


def _torch_rowsum(inputs: Arrays) -> Peer:
    torch = _torch()
    (A,) = _t(inputs)
    C = torch.empty(A.shape[0])
    return Peer(lambda: torch.sum(A, 1, out=C))


def _moments_ref(I: np.ndarray) -> tuple[np.ndarray, ...]:
    return (I.mean(axis=1), I.var(axis=1))


def _np_moments(inputs: Arrays) -> Peer:
    (I,) = inputs
    k = I.shape[1]
    mean = _empty(I.shape[0])
    var = _empty(I.shape[0])
    sq = _empty(I.shape[0])

    def run() -> tuple[np.ndarray, np.ndarray]:
        np.sum(I, axis=1, out=mean)
        np.divide(mean, k, out=mean)
        np.einsum("nk,nk->n", I, I, out=var)
        np.divide(var, k, out=var)
        np.multiply(mean, mean, out=sq)
        np.subtract(var, sq, out=var)
        return mean, var

    return Peer(run)


def _torch_moments(inputs: Arrays) -> Peer:
    torch = _torch()
    (I,) = _t(inputs)

    def run() -> tuple[Any, Any]:
        var, mean = torch.var_mean(I, 1, correction=0)
        return mean, var

    return Peer(run, allocates=True)


# ------------------------------------------------------------------ fused layers

FCRELU = """
def fcrelu(float(B, M) I, float(N, M) W1, float(N) B1) -> (O1) {
    O1(b, n) +=! I(b, r_m) * W1(n, r_m)
    O1(b, n) = O1(b, n) + B1(n)
    O1(b, n) = fmax(O1(b, n), 0.0)
}
"""

EW_CHAIN = """
def ew_chain(float(N) A, float(N) B, float(N) C, float(N) D) -> (O) {
    O(i) = fmax(A(i) * B(i) + C(i), 0.0) * D(i)
}
"""


def _np_mlp(inputs: Arrays) -> Peer:
    X, W, b = inputs
    O = _empty(X.shape[0], W.shape[0])

    def run() -> np.ndarray:
        np.matmul(X, W.T, out=O)
        np.add(O, b, out=O)
        return np.maximum(O, 0.0, out=O)

    return Peer(run)


def _torch_mlp(inputs: Arrays) -> Peer:
    torch = _torch()
    X, W, b = _t(inputs)
    O = torch.empty(X.shape[0], W.shape[0])

    def run() -> Any:
        torch.addmm(b, X, W.t(), out=O)
        return O.clamp_min_(0.0)

    return Peer(run)


def _np_chain(inputs: Arrays) -> Peer:
    a, b, c, d = inputs
    o = np.empty_like(a)

    def run() -> np.ndarray:
        np.multiply(a, b, out=o)
        np.add(o, c, out=o)
        np.maximum(o, 0.0, out=o)
        return np.multiply(o, d, out=o)

    return Peer(run)


def _torch_chain(inputs: Arrays) -> Peer:
    torch = _torch()
    a, b, c, d = _t(inputs)
    o = torch.empty_like(a)

    def run() -> Any:
        torch.addcmul(c, a, b, out=o)
        o.clamp_min_(0.0)
        return o.mul_(d)

    return Peer(run)


# ----------------------------------------------------------------- contractions

KRONECKER3 = """
def kronecker3(float(D2, N2) W2, float(D1, N1) W1, float(D0, N0) W0,
               float(M, N0, N1, N2) X) -> (Y) {
    XW2(m, n0, n1, d2) +=! X(m, n0, n1, r_n2) * W2(d2, r_n2)
    XW1(m, n0, d1, d2) +=! XW2(m, n0, r_n1, d2) * W1(d1, r_n1)
    Y(m, d0, d1, d2) +=! XW1(m, r_n0, d1, d2) * W0(d0, r_n0)
}
"""

EINSUM = """
def einsum_abc_cd(float(A, B, C) X, float(C, D) Y) -> (O) {
    O(a, b, d) +=! X(a, b, r_c) * Y(r_c, d)
}
"""

TENSORDOT = """
def tensordot(float(N, C1, C2, H, W) I0, float(N, C2, C3, H, W) I1) -> (O) {
    O(n, c1, c3, h, w) +=! I0(n, c1, r_c2, h, w) * I1(n, r_c2, c3, h, w)
}
"""


def _kron_ref(
    W2: np.ndarray, W1: np.ndarray, W0: np.ndarray, X: np.ndarray
) -> tuple[np.ndarray, ...]:
    xw2 = np.tensordot(X, W2, axes=([3], [1]))  # m,n0,n1,d2
    xw1 = np.einsum("mabz,yb->mayz", xw2, W1)  # m,n0,d1,d2
    return (np.einsum("mayz,xa->mxyz", xw1, W0),)


def _kron_stages(
    inputs: Arrays, empty: Callable[..., Any], matmul: Callable[..., Any]
) -> Callable[[], Any]:
    """The three mode products as three GEMM calls with preallocated stages."""
    W2, W1, W0, X = inputs
    m, n0, n1, n2 = X.shape
    d2, d1, d0 = W2.shape[0], W1.shape[0], W0.shape[0]
    x2 = X.reshape(m * n0 * n1, n2)
    w2t = W2.T
    xw2 = empty(m * n0 * n1, d2)
    xw2v = xw2.reshape(m * n0, n1, d2)
    xw1 = empty(m * n0, d1, d2)
    xw1v = xw1.reshape(m, n0, d1 * d2)
    y = empty(m, d0, d1 * d2)

    def run() -> Any:
        matmul(x2, w2t, out=xw2)
        matmul(W1, xw2v, out=xw1)
        matmul(W0, xw1v, out=y)
        return y.reshape(m, d0, d1, d2)

    return run


def _np_kron(inputs: Arrays) -> Peer:
    return Peer(_kron_stages(inputs, _empty, np.matmul))


def _torch_kron(inputs: Arrays) -> Peer:
    torch = _torch()
    return Peer(_kron_stages(_t(inputs), torch.empty, torch.matmul))


def _np_einsum(inputs: Arrays) -> Peer:
    X, Y = inputs
    a, b, c = X.shape
    O = _empty(a, b, Y.shape[1])
    x2 = X.reshape(a * b, c)
    o2 = O.reshape(a * b, Y.shape[1])

    def run() -> np.ndarray:
        np.matmul(x2, Y, out=o2)
        return O

    return Peer(run)


def _torch_einsum(inputs: Arrays) -> Peer:
    torch = _torch()
    X, Y = _t(inputs)
    a, b, c = X.shape
    O = torch.empty(a, b, Y.shape[1])
    x2 = X.view(a * b, c)
    o2 = O.view(a * b, Y.shape[1])

    def run() -> Any:
        torch.mm(x2, Y, out=o2)
        return O

    return Peer(run)


def _np_tensordot(inputs: Arrays) -> Peer:
    I0, I1 = inputs
    n, c1, _, h, w = I0.shape
    O = _empty(n, c1, I1.shape[2], h, w)
    return Peer(lambda: np.einsum("nabhw,nbchw->nachw", I0, I1, out=O))


def _torch_tensordot(inputs: Arrays) -> Peer:
    torch = _torch()
    I0, I1 = _t(inputs)
    return Peer(lambda: torch.einsum("nabhw,nbchw->nachw", I0, I1), allocates=True)


# --------------------------------------------------------------------- the table


def _prod(*xs: int) -> float:
    return float(math.prod(xs))


KERNELS: list[Kernel] = [
    _matmul_kernel("matmul_512", 512, 48),
    _matmul_kernel("matmul_1024", 1024, 64),
    Kernel(
        name="matmul_AtB_1024",
        source=MATMUL_ATB,
        sizes={"K": 1024, "M": 1024, "N": 1024},
        quick={"K": 67, "M": 48, "N": 53},
        shapes=lambda s: [(s["K"], s["M"]), (s["K"], s["N"])],
        reference=lambda A, B: (A.T @ B,),
        numpy_peer=_np_atb,
        torch_peer=_torch_atb,
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    ),
    Kernel(
        name="tmm_128x1024x1024",
        source=TMM,
        sizes={"M": 128, "K": 1024, "N": 1024},
        quick={"M": 16, "K": 64, "N": 72},
        shapes=lambda s: [(s["M"], s["K"]), (s["N"], s["K"])],
        reference=lambda A, B: (A @ B.T,),
        numpy_peer=_np_tmm,
        torch_peer=_torch_tmm,
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
        note="TC's tmm (B stored N x K)",
    ),
    _batch_matmul_kernel(
        "bmm_32x128x128x128",
        {"B": 32, "N": 128, "M": 128, "K": 128},
        {"B": 4, "N": 16, "M": 24, "K": 20},
    ),
    _batch_matmul_kernel(
        "tbmm_500x26x72x26",
        {"B": 500, "N": 26, "M": 72, "K": 26},
        {"B": 10, "N": 26, "M": 72, "K": 26},
    ),
    Kernel(
        name="conv2d_n8c32k64_56_3x3",
        source=CONV2D,
        sizes={"N": 8, "C": 32, "K": 64, "H": 56, "W": 56, "KH": 3, "KW": 3},
        quick={"N": 1, "C": 4, "K": 8, "H": 12, "W": 11, "KH": 3, "KW": 3},
        shapes=lambda s: [
            (s["N"], s["C"], s["H"], s["W"]),
            (s["K"], s["C"], s["KH"], s["KW"]),
        ],
        reference=_conv2d_ref,
        numpy_peer=_np_conv2d,
        torch_peer=_torch_conv2d,
        flops=lambda s: (
            2.0 * _prod(s["N"], s["K"], *_out_hw(s), s["C"], s["KH"], s["KW"])
        ),
        note="NCHW, valid: output 54 x 54",
    ),
    Kernel(
        name="gconv_n8g32c4f4_56_3x3",
        source=GROUP_CONV,
        sizes={"N": 8, "G": 32, "C": 4, "F": 4, "H": 56, "W": 56, "KH": 3, "KW": 3},
        quick={"N": 1, "G": 4, "C": 4, "F": 4, "H": 10, "W": 9, "KH": 3, "KW": 3},
        shapes=lambda s: [
            (s["N"], s["G"], s["C"], s["H"], s["W"]),
            (s["G"], s["F"], s["C"], s["KH"], s["KW"]),
            (s["G"], s["F"]),
        ],
        reference=_gconv_ref,
        numpy_peer=_np_gconv,
        torch_peer=_torch_gconv,
        flops=lambda s: (
            _prod(s["N"], s["G"], s["F"], *_out_hw(s))
            * (2.0 * s["C"] * s["KH"] * s["KW"] + 1)
        ),
        note="TC's group_conv with bias; valid: output 54 x 54",
    ),
    Kernel(
        name="maxpool2x2_n16c64_112",
        source=MAXPOOL,
        sizes={"B": 16, "C": 64, "H": 112, "W": 112},
        quick={"B": 2, "C": 4, "H": 16, "W": 13},
        shapes=lambda s: [(s["B"], s["C"], s["H"], s["W"])],
        reference=_maxpool_ref,
        numpy_peer=_np_maxpool,
        torch_peer=_torch_maxpool,
        flops=lambda s: 3.0 * _prod(s["B"], s["C"], s["H"] // 2, s["W"] // 2),
    ),
    Kernel(
        name="softmax_4096x1024",
        source=SOFTMAX,
        sizes={"N": 4096, "D": 1024},
        quick={"N": 64, "D": 128},
        shapes=lambda s: [(s["N"], s["D"])],
        reference=_softmax_ref,
        numpy_peer=_np_softmax,
        torch_peer=_torch_softmax,
        flops=lambda s: 5.0 * s["N"] * s["D"],
        note="TC form: max, exp, sum, divide (mx, e, s temporaries)",
    ),
    Kernel(
        name="layernorm_4096x1024",
        source=LAYERNORM,
        sizes={"T": 32, "B": 128, "C": 1024},
        quick={"T": 2, "B": 16, "C": 128},
        shapes=lambda s: [(s["T"], s["B"], s["C"])],
        reference=_layernorm_ref,
        numpy_peer=_np_layernorm,
        torch_peer=_torch_layernorm,
        flops=lambda s: 5.0 * s["T"] * s["B"] * s["C"],
        note="TC's layernorm over (T, B, C) = (32, 128, 1024): 4096 rows",
    ),
    Kernel(
        name="rowsum_8192x2048",
        source=ROWSUM,
        sizes={"M": 8192, "N": 2048},
        quick={"M": 128, "N": 256},
        shapes=lambda s: [(s["M"], s["N"])],
        reference=lambda A: (A.sum(axis=1),),
        numpy_peer=_np_rowsum,
        torch_peer=_torch_rowsum,
        flops=lambda s: 1.0 * s["M"] * s["N"],
    ),
    Kernel(
        name="moments2_128x36864",
        source=MOMENTS2,
        sizes={"N": 128, "K": 36864},
        quick={"N": 8, "K": 1024},
        shapes=lambda s: [(s["N"], s["K"])],
        reference=_moments_ref,
        numpy_peer=_np_moments,
        torch_peer=_torch_moments,
        flops=lambda s: 3.0 * s["N"] * s["K"],
        note="TC's Moments2_2D_1D: mean and E[x^2] - mean^2",
    ),
    Kernel(
        name="mlp_relu_1024",
        source=FCRELU,
        sizes={"B": 1024, "M": 1024, "N": 1024},
        quick={"B": 48, "M": 64, "N": 40},
        shapes=lambda s: [(s["B"], s["M"]), (s["N"], s["M"]), (s["N"],)],
        reference=lambda X, W, b: (np.maximum(X @ W.T + b, 0.0),),
        numpy_peer=_np_mlp,
        torch_peer=_torch_mlp,
        flops=lambda s: 2.0 * s["B"] * s["N"] * s["M"] + 2.0 * s["B"] * s["N"],
        note="TC's fcrelu: relu(X W^T + b)",
    ),
    Kernel(
        name="ew_chain_16M",
        source=EW_CHAIN,
        sizes={"N": 16 * 1024 * 1024},
        quick={"N": 4099},
        shapes=lambda s: [(s["N"],)] * 4,
        reference=lambda a, b, c, d: (np.maximum(a * b + c, 0.0) * d,),
        numpy_peer=_np_chain,
        torch_peer=_torch_chain,
        flops=lambda s: 4.0 * s["N"],
        note="relu(a*b + c) * d",
    ),
    Kernel(
        name="kronecker3_256_16x32",
        source=KRONECKER3,
        sizes={"M": 256, "D0": 16, "D1": 16, "D2": 16, "N0": 32, "N1": 32, "N2": 32},
        quick={"M": 4, "D0": 3, "D1": 4, "D2": 5, "N0": 6, "N1": 7, "N2": 8},
        shapes=lambda s: [
            (s["D2"], s["N2"]),
            (s["D1"], s["N1"]),
            (s["D0"], s["N0"]),
            (s["M"], s["N0"], s["N1"], s["N2"]),
        ],
        reference=_kron_ref,
        numpy_peer=_np_kron,
        torch_peer=_torch_kron,
        flops=lambda s: (
            2.0
            * s["M"]
            * (
                s["N0"] * s["N1"] * s["D2"] * s["N2"]
                + s["N0"] * s["D1"] * s["D2"] * s["N1"]
                + s["D0"] * s["D1"] * s["D2"] * s["N0"]
            )
        ),
        note="TC's Kronecker3: three mode products (XW2, XW1 temporaries)",
    ),
    Kernel(
        name="einsum_abc_cd_32x128x256x512",
        source=EINSUM,
        sizes={"A": 32, "B": 128, "C": 256, "D": 512},
        quick={"A": 3, "B": 8, "C": 16, "D": 24},
        shapes=lambda s: [(s["A"], s["B"], s["C"]), (s["C"], s["D"])],
        reference=lambda X, Y: (np.einsum("abc,cd->abd", X, Y),),
        numpy_peer=_np_einsum,
        torch_peer=_torch_einsum,
        flops=lambda s: 2.0 * s["A"] * s["B"] * s["C"] * s["D"],
    ),
    Kernel(
        name="tensordot_n4",
        source=TENSORDOT,
        sizes={"N": 4, "C1": 512, "C2": 8, "C3": 2, "H": 28, "W": 28},
        quick={"N": 1, "C1": 16, "C2": 8, "C3": 2, "H": 7, "W": 5},
        shapes=lambda s: [
            (s["N"], s["C1"], s["C2"], s["H"], s["W"]),
            (s["N"], s["C2"], s["C3"], s["H"], s["W"]),
        ],
        reference=lambda I0, I1: (np.einsum("nabhw,nbchw->nachw", I0, I1),),
        numpy_peer=_np_tensordot,
        torch_peer=_torch_tensordot,
        flops=lambda s: 2.0 * _prod(s["N"], s["C1"], s["C3"], s["C2"], s["H"], s["W"]),
        note="TC's tensordot, README sizes with N = 4",
    ),
]

#: The elementwise chain: also timed at 1 and T threads for the scaling line.
CHAIN = "ew_chain_16M"


def by_name(names: list[str] | None, table: Sequence[Any] | None = None) -> list[Any]:
    """The kernels of `table` (default: `KERNELS`) named in `names` (all
    when None), in table order.

    Raises ValueError naming any unknown kernel.
    """
    kernels = list(KERNELS if table is None else table)
    if not names:
        return kernels
    known = {k.name for k in kernels}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return [k for k in kernels if k.name in names]
