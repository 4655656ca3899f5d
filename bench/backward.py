"""Backward rows of the benchmark: the derived backward against PyTorch's autograd.

For each kernel of `BACKWARD` (softmax, layernorm, matmul, conv2d, group
conv, maxpool, a two-layer MLP: the forward TC sources of `bench.kernels`),
with the same float32 inputs and a random output gradient ``d_out``:

* **ours**: `tcdialect.autodiff.forward_backward` (``save="auto"``: the
  forward kernel also returns the reductions the backward reads), the
  forward called once, then the backward kernel ``@<name>_grad`` timed as
  ``bwd(*inputs, *saved, d_out, out=grads)``;
* **torch**: the PyTorch forward run once on inputs that require grad,
  then ``torch.autograd.grad(out, inputs, d_out, retain_graph=True)`` timed
  (only the backward: what autograd saved is read back);
* **numpy**: a hand-written backward where one is short (softmax,
  layernorm, matmul, maxpool, MLP), its forward intermediates computed
  before timing, as autograd's are.

Every gradient is checked against PyTorch's autograd in float64 first, and
timed like the forward rows (`harness.measure`: interleaved, flushed,
medians). The roofline bound uses the backward's flops and compulsory bytes
(forward inputs and ``d_out`` read once, gradients written once).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench import ours
from bench.harness import (
    CacheFlusher,
    TimingConfig,
    as_tuple,
    max_rel_error,
    measure,
)
from bench.kernels import (
    CONV2D,
    GROUP_CONV,
    LAYERNORM,
    MATMUL,
    MAXPOOL,
    SOFTMAX,
    Peer,
    Sizes,
)
from bench.runner import ImplResult, Row

Arrays = list[np.ndarray]

MLP2 = """
def mlp2(float(B, M) I, float(N, M) W1, float(N) B1, float(P, N) W2, float(P) B2)
    -> (O2) {
    O1(b, n) +=! I(b, r_m) * W1(n, r_m)
    O1(b, n) = fmax(O1(b, n) + B1(n), 0.0)
    O2(b, p) +=! O1(b, r_n) * W2(p, r_n)
    O2(b, p) = fmax(O2(b, p) + B2(p), 0.0)
}
"""


@dataclass(frozen=True)
class BackwardKernel:
    """One backward row (see the module docstring)."""

    name: str
    source: str
    sizes: Sizes
    quick: Sizes
    shapes: Callable[[Sizes], list[tuple[int, ...]]]
    #: The forward in PyTorch, on tensors of the inputs (float32 or float64).
    torch_forward: Callable[..., Any]
    #: A hand-written backward: (inputs, d_out) -> a `Peer` returning the
    #: gradients of every input; None where it would not be short.
    numpy_peer: Callable[[Arrays, np.ndarray], Peer] | None
    #: Floating-point operations of the backward.
    flops: Callable[[Sizes], float]
    note: str = ""


def _torch() -> Any:
    import torch

    return torch


def _F() -> Any:
    return _torch().nn.functional


# ------------------------------------------------------------- NumPy backward


def _np_softmax(inputs: Arrays, g: np.ndarray) -> Peer:
    (x,) = inputs
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)  # saved by the forward
    dx = np.empty_like(x)
    dot = np.empty((x.shape[0], 1), np.float32)

    def run() -> np.ndarray:
        np.multiply(g, y, out=dx)
        np.sum(dx, axis=1, keepdims=True, out=dot)
        np.subtract(g, dot, out=dx)
        return np.multiply(dx, y, out=dx)

    return Peer(run)


def _np_layernorm(inputs: Arrays, g: np.ndarray) -> Peer:
    (x,) = inputs
    c = x.shape[2]
    cen = x - x.mean(axis=2, keepdims=True)
    rstd = 1 / np.sqrt(((cen * cen).sum(axis=2, keepdims=True) + 1e-5) / c)
    xhat = (cen * rstd).astype(np.float32)  # saved by the forward
    rstd = rstd.astype(np.float32)
    dx = np.empty_like(x)
    m1 = np.empty(x.shape[:2] + (1,), np.float32)
    m2 = np.empty_like(m1)

    def run() -> np.ndarray:
        np.mean(g, axis=2, keepdims=True, out=m1)
        np.multiply(g, xhat, out=dx)
        np.mean(dx, axis=2, keepdims=True, out=m2)
        np.multiply(xhat, m2, out=dx)
        np.subtract(g, dx, out=dx)
        np.subtract(dx, m1, out=dx)
        return np.multiply(dx, rstd, out=dx)

    return Peer(run)


def _np_matmul(inputs: Arrays, g: np.ndarray) -> Peer:
    A, B = inputs
    dA, dB = np.empty_like(A), np.empty_like(B)
    return Peer(lambda: (np.matmul(g, B.T, out=dA), np.matmul(A.T, g, out=dB)))


def _np_maxpool(inputs: Arrays, g: np.ndarray) -> Peer:
    """The gradient to the maximum of each 2 x 2 window (even H and W; the
    inputs are random: no ties)."""
    (x,) = inputs
    b, c, h, w = x.shape
    win = x.reshape(b, c, h // 2, 2, w // 2, 2)
    at_max = win == win.max(axis=(3, 5), keepdims=True)  # saved by the forward
    dx = np.empty_like(x)
    view = dx.reshape(win.shape)

    def run() -> np.ndarray:
        np.multiply(at_max, g[:, :, :, None, :, None], out=view)
        return dx

    return Peer(run)


def _np_mlp(inputs: Arrays, g: np.ndarray) -> Peer:
    x, w1, b1, w2, b2 = inputs
    h1 = np.maximum(x @ w1.T + b1, 0)  # saved by the forward
    on2 = (h1 @ w2.T + b2) > 0

    def run() -> tuple[np.ndarray, ...]:
        g2 = g * on2
        g1 = (g2 @ w2) * (h1 > 0)
        return g1 @ w1, g1.T @ x, g1.sum(0), g2.T @ h1, g2.sum(0)

    return Peer(run)


# ---------------------------------------------------------------- PyTorch


def _torch_gconv(I: Any, W: Any, B: Any) -> Any:
    n, g, c, h, w = I.shape
    f = W.shape[1]
    out = _F().conv2d(
        I.reshape(n, g * c, h, w),
        W.reshape(g * f, c, W.shape[3], W.shape[4]),
        B.reshape(g * f),
        groups=g,
    )
    return out.reshape(n, g, f, out.shape[2], out.shape[3])


def _torch_layernorm(x: Any) -> Any:
    c = x.shape[2]
    return _F().layer_norm(x, (c,), eps=1e-5 / c)  # TC's eps is on the sum


def _torch_mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    torch = _torch()
    return torch.relu(torch.relu(x @ w1.T + b1) @ w2.T + b2)


def _conv_flops(s: Sizes, channels: int) -> float:
    oh, ow = s["H"] - s["KH"] + 1, s["W"] - s["KW"] + 1
    return 4.0 * s["N"] * channels * oh * ow * s["C"] * s["KH"] * s["KW"]


BACKWARD: list[BackwardKernel] = [
    BackwardKernel(
        name="softmax_bwd_4096x1024",
        source=SOFTMAX,
        sizes={"N": 4096, "D": 1024},
        quick={"N": 64, "D": 128},
        shapes=lambda s: [(s["N"], s["D"])],
        torch_forward=lambda x: _torch().softmax(x, 1),
        numpy_peer=_np_softmax,
        flops=lambda s: 4.0 * s["N"] * s["D"],
    ),
    BackwardKernel(
        name="layernorm_bwd_4096x1024",
        source=LAYERNORM,
        sizes={"T": 32, "B": 128, "C": 1024},
        quick={"T": 2, "B": 16, "C": 128},
        shapes=lambda s: [(s["T"], s["B"], s["C"])],
        torch_forward=_torch_layernorm,
        numpy_peer=_np_layernorm,
        flops=lambda s: 8.0 * s["T"] * s["B"] * s["C"],
    ),
    BackwardKernel(
        name="matmul_bwd_512",
        source=MATMUL,
        sizes={"M": 512, "K": 512, "N": 512},
        quick={"M": 48, "K": 40, "N": 56},
        shapes=lambda s: [(s["M"], s["K"]), (s["K"], s["N"])],
        torch_forward=lambda a, b: a @ b,
        numpy_peer=_np_matmul,
        flops=lambda s: 4.0 * s["M"] * s["N"] * s["K"],
    ),
    BackwardKernel(
        name="conv2d_bwd_n4c16k32_28_3x3",
        source=CONV2D,
        sizes={"N": 4, "C": 16, "K": 32, "H": 28, "W": 28, "KH": 3, "KW": 3},
        quick={"N": 1, "C": 4, "K": 8, "H": 12, "W": 11, "KH": 3, "KW": 3},
        shapes=lambda s: [
            (s["N"], s["C"], s["H"], s["W"]),
            (s["K"], s["C"], s["KH"], s["KW"]),
        ],
        torch_forward=lambda i, w: _F().conv2d(i, w),
        numpy_peer=None,
        flops=lambda s: _conv_flops(s, s["K"]),
    ),
    BackwardKernel(
        name="gconv_bwd_n4g16c4f4_28_3x3",
        source=GROUP_CONV,
        sizes={"N": 4, "G": 16, "C": 4, "F": 4, "H": 28, "W": 28, "KH": 3, "KW": 3},
        quick={"N": 1, "G": 4, "C": 4, "F": 4, "H": 10, "W": 9, "KH": 3, "KW": 3},
        shapes=lambda s: [
            (s["N"], s["G"], s["C"], s["H"], s["W"]),
            (s["G"], s["F"], s["C"], s["KH"], s["KW"]),
            (s["G"], s["F"]),
        ],
        torch_forward=_torch_gconv,
        numpy_peer=None,
        flops=lambda s: _conv_flops(s, s["G"] * s["F"]),
    ),
    BackwardKernel(
        name="maxpool2x2_bwd_n16c64_112",
        source=MAXPOOL,
        sizes={"B": 16, "C": 64, "H": 112, "W": 112},
        quick={"B": 2, "C": 4, "H": 16, "W": 14},
        shapes=lambda s: [(s["B"], s["C"], s["H"], s["W"])],
        torch_forward=lambda x: _F().max_pool2d(x, 2),
        numpy_peer=_np_maxpool,
        flops=lambda s: 1.0 * s["B"] * s["C"] * s["H"] * s["W"],
    ),
    BackwardKernel(
        name="mlp2_bwd_512",
        source=MLP2,
        sizes={"B": 512, "M": 512, "N": 512, "P": 512},
        quick={"B": 24, "M": 32, "N": 20, "P": 16},
        shapes=lambda s: [
            (s["B"], s["M"]),
            (s["N"], s["M"]),
            (s["N"],),
            (s["P"], s["N"]),
            (s["P"],),
        ],
        torch_forward=_torch_mlp,
        numpy_peer=_np_mlp,
        flops=lambda s: 4.0 * s["B"] * (s["N"] * s["M"] + s["P"] * s["N"]),
        note="relu(relu(X W1^T + b1) W2^T + b2)",
    ),
]


def _autograd(
    k: BackwardKernel, inputs: Sequence[Any], d_out: Any
) -> tuple[Any, Callable[[], Any]]:
    """PyTorch's forward output on `inputs` (tensors, made to require grad)
    and the call of its backward for `d_out`."""
    torch = _torch()
    xs = [x.detach().clone().requires_grad_() for x in inputs]
    out = k.torch_forward(*xs)
    return out, lambda: torch.autograd.grad(out, xs, d_out, retain_graph=True)


def _ours(
    k: BackwardKernel, inputs: Arrays, d_out: np.ndarray, threads: int
) -> tuple[Callable[[], Any], tuple[np.ndarray, ...], float, str]:
    """Our backward call into preallocated gradients, the gradients of its
    first call, the seconds spent deriving and compiling, and what the
    forward saved."""
    from tcdialect.autodiff import forward_backward

    t0 = time.perf_counter()
    fwd, bwd = forward_backward(ours.define(k.source, None, threads))
    returned = fwd(*inputs)  # (compiles the forward kernel)
    outs = returned if isinstance(returned, tuple) else (returned,)
    by_name = dict(zip(fwd.out_names, outs))
    saved_names: tuple[str, ...] = getattr(bwd, "saved")
    args = [*inputs, *(by_name[n] for n in saved_names), d_out]
    bwd.compile(*args)
    compile_s = time.perf_counter() - t0
    grads = [np.empty_like(x) for x in inputs]
    out: Any = tuple(grads) if len(grads) > 1 else grads[0]

    def run() -> Any:
        return bwd(*args, out=out)

    run()
    return run, tuple(grads), compile_s, ", ".join(saved_names) or "nothing"


def run_backward(
    k: BackwardKernel,
    sizes: Sizes,
    threads: int,
    config: TimingConfig,
    flush: CacheFlusher,
) -> Row:
    """Measure one backward row at `threads` threads (applied by the caller)."""
    torch = _torch()
    rng = np.random.default_rng(zlib.crc32(k.name.encode()))
    inputs = [
        (rng.random(shape, dtype=np.float32) * 2 - 1).astype(np.float32, copy=False)
        for shape in k.shapes(sizes)
    ]
    with torch.no_grad():
        shape = tuple(k.torch_forward(*(torch.from_numpy(x) for x in inputs)).shape)
    d_out = (rng.random(shape, dtype=np.float32) * 2 - 1).astype(np.float32)
    xs64 = [torch.from_numpy(x).double().requires_grad_() for x in inputs]
    want = tuple(
        g.numpy()
        for g in torch.autograd.grad(
            k.torch_forward(*xs64), xs64, torch.from_numpy(d_out).double()
        )
    )
    row = Row(
        name=k.name,
        threads=threads,
        sizes=dict(sizes),
        flops=k.flops(sizes),
        nbytes=2 * sum(x.nbytes for x in inputs) + d_out.nbytes,
        note=k.note,
    )
    calls: dict[str, Callable[[], Any]] = {}
    first_s: dict[str, float] = {}

    res = ImplResult()
    try:
        t0 = time.perf_counter()
        fn, grads, row.cold_s, saved = _ours(k, inputs, d_out, threads)
        first_s["ours"] = time.perf_counter() - t0 - row.cold_s
        res.rel_err = max_rel_error(grads, want)
        calls["ours"] = fn
        row.saved = saved
    except Exception as exc:
        res.error = ours.short_error(exc)
    row.impls["ours"] = res

    peers: dict[str, Callable[[], Peer]] = {}
    row.impls["numpy"] = ImplResult()  # (none: `-`)
    if k.numpy_peer is not None:
        numpy_peer = k.numpy_peer
        peers["numpy"] = lambda: numpy_peer(inputs, d_out)

    def torch_peer() -> Peer:
        _, call = _autograd(k, [torch.from_numpy(x) for x in inputs], d_out_t)
        return Peer(call, allocates=True)

    d_out_t = torch.from_numpy(d_out)
    peers["torch"] = torch_peer
    for label, make in peers.items():
        res = ImplResult()
        try:
            peer = make()
            res.allocates = peer.allocates
            t0 = time.perf_counter()
            got = peer.run()
            first_s[label] = time.perf_counter() - t0
            res.rel_err = max_rel_error(as_tuple(got), want)
            calls[label] = peer.run
        except Exception as exc:
            res.error = ours.short_error(exc)
        row.impls[label] = res

    for label, timing in measure(calls, first_s, config, flush).items():
        res = row.impls[label]
        res.median_s = timing.median_s
        res.samples = timing.count
        res.from_first_call = timing.from_first_call
    return row
