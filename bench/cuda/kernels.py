"""The GPU benchmark's kernels: TC source, float64 reference, PyTorch peer, work.

Each `Kernel` holds:

* the TC definition (TC's own benchmark form where TC had one: tmm,
  batch_matmul, group_convolution, Kronecker3, mlp1, mlp3, Moments2_2D_1D,
  the single-kernel group normalization, the embedding bag `1LUT`; the
  others are `bench.kernels`' sources);
* `sizes` (TC's benchmark sizes, or sizes well above the H100's 50 MB L2 for
  the kernels TC did not benchmark) and `quick` (tiny: `--quick` and
  `--validate`);
* `args`: the inputs as `Arg`s (float32 uniform in [-1, 1), or int32 indices
  in [0, high)) and `outputs`: the float32 output shapes, both functions of
  the sizes;
* `reference(xp, *inputs)`: the float64 oracle, written once for NumPy and
  torch (`xp` is the module; inputs are float64, indices stay int32);
* `peer(torch)`: a function of the input tensors giving the PyTorch eager
  form (the same function is handed to `torch.compile`); it returns the
  first `peer_outputs` outputs (all when None);
* `fuses`: whether `torch.compile` writes its own code here (see the field);
* `flops`: floating-point operations of one call (a multiply-add is 2);
  `nbytes`: compulsory bytes (inputs read once, outputs written once, 4
  bytes an element) unless the kernel says otherwise (the embedding bag
  reads only the rows it gathers).

Nothing here imports torch: `--list` and `--validate` run without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from bench.kernels import (
    BATCH_MATMUL,
    CONV2D,
    EW_CHAIN,
    FCRELU,
    GROUP_CONV,
    KRONECKER3,
    LAYERNORM,
    MATMUL,
    MAXPOOL,
    MOMENTS2,
    ROWSUM,
    SOFTMAX,
    TMM,
)
from bench.kernels import (
    by_name as _by_name,
)

Sizes = dict[str, int]
Shape = tuple[int, ...]

#: The H100's L2 (bytes): a kernel whose compulsory bytes fit is marked.
L2_BYTES = 50 * 1000 * 1000


@dataclass(frozen=True)
class Arg:
    """One input: its shape, dtype and (int32) value range [0, high)."""

    shape: Shape
    dtype: str = "float32"
    high: int = 0


@dataclass(frozen=True)
class Kernel:
    """One row of the GPU benchmark (see the module docstring)."""

    name: str
    source: str
    sizes: Sizes
    quick: Sizes
    args: Callable[[Sizes], list[Arg]]
    outputs: Callable[[Sizes], list[Shape]]
    reference: Callable[..., tuple[Any, ...]]
    peer: Callable[[Any], Callable[..., Any]]
    flops: Callable[[Sizes], float]
    entry: str | None = None
    peer_outputs: int | None = None
    gathered_bytes: Callable[[Sizes], float] | None = None
    #: "TC" for TC's benchmark set, "extra" for the others.
    origin: str = "extra"
    #: torch.compile generates or fuses code here (a reduction, a chain, an
    #: epilogue), rather than calling the library eager calls: its column is
    #: kept before the others' when the budget is short.
    fuses: bool = False
    note: str = ""

    def nbytes(self, sizes: Sizes) -> float:
        """Compulsory bytes: inputs read once, outputs written once."""
        outs = sum(4 * math.prod(s) for s in self.outputs(sizes))
        if self.gathered_bytes is not None:
            return self.gathered_bytes(sizes) + outs
        return sum(4 * math.prod(a.shape) for a in self.args(sizes)) + outs

    def fits_l2(self, sizes: Sizes) -> bool:
        """True when the compulsory bytes fit in the H100's L2."""
        return self.nbytes(sizes) <= L2_BYTES


def _is_torch(xp: Any) -> bool:
    return getattr(xp, "__name__", "") == "torch"


def _f(*shape: int) -> Arg:
    return Arg(tuple(shape))


def _prod(*xs: int) -> float:
    return float(math.prod(xs))


# ----------------------------------------------------------------- TC sources
# Those TC benchmarked that `bench.kernels` does not have, as TC wrote them
# (tc/benchmarks/MLP_model.cc, group_normalization.cc; `0` spelled `0.0`).

MLP1 = """
def mlp1(float(B, M) I, float(M, N) W1, float(N) B1) -> (O1) {
    O1(b, n) +=! I(b, r_m) * W1(r_m, n)
    O1(b, n) = O1(b, n) + B1(n)
    O1(b, n) = fmax(O1(b, n), 0.0)
}
"""

MLP3 = """
def mlp3(float(B, N) I, float(O, N) W2, float(O) B2, float(P, O) W3, float(P) B3,
         float(Q, P) W4, float(Q) B4) -> (O2, O3, O4) {
    O2(b, o) +=! I(b, r_n) * W2(o, r_n)
    O2(b, o) = O2(b, o) + B2(o)
    O2(b, o) = fmax(O2(b, o), 0.0)
    O3(b, p) +=! O2(b, r_o) * W3(p, r_o)
    O3(b, p) = O3(b, p) + B3(p)
    O3(b, p) = fmax(O3(b, p), 0.0)
    O4(b, q) +=! O3(b, r_p) * W4(q, r_p)
    O4(b, q) = O4(b, q) + B4(q)
    O4(b, q) = fmax(O4(b, q), 0.0)
}
"""

GROUP_NORM = """
def group_norm(float(N, G, D, H, W) I, float(G, D) gamma, float(G, D) beta)
    -> (O, mean, var) {
    mean(n, g) +=! I(n, g, r_d, r_h, r_w)
    var(n, g) +=! I(n, g, r_d, r_h, r_w) * I(n, g, r_d, r_h, r_w)
    mean(n, g) = mean(n, g) / float(D * H * W)
    var(n, g) = var(n, g) / float(D * H * W) - mean(n, g) * mean(n, g)
    O(n, g, d, h, w) = gamma(g, d) * (I(n, g, d, h, w) - mean(n, g))
        * rsqrt(var(n, g) + 1e-5) + beta(g, d)
}
"""

LUT1 = """
def lut1(float(E, D) LUT, int32(B, L) I) -> (O) {
    O(b, d) +=! LUT(I(b, r_l), d)
}
"""


# ------------------------------------------------------------- references


def _ref_conv2d(xp: Any, I: Any, W: Any) -> Any:
    """Valid NCHW convolution (cross-correlation, as TC and cuDNN)."""
    if _is_torch(xp):
        return xp.nn.functional.conv2d(I, W)
    win = sliding_window_view(I, W.shape[2:], axis=(2, 3))  # N,C,OH,OW,KH,KW
    return np.einsum("nchwij,kcij->nkhw", win, W, optimize=True)


def _ref_gconv(xp: Any, I: Any, W: Any, B: Any) -> tuple[Any, ...]:
    n, g, c, h, w = I.shape
    f, kh, kw = W.shape[1], W.shape[3], W.shape[4]
    if _is_torch(xp):
        out = xp.nn.functional.conv2d(
            I.reshape(n, g * c, h, w), W.reshape(g * f, c, kh, kw), groups=g
        )
        out = out.reshape(n, g, f, h - kh + 1, w - kw + 1)
    else:
        win = sliding_window_view(I, (kh, kw), axis=(3, 4))  # N,G,C,OH,OW,KH,KW
        out = np.einsum("ngchwij,gfcij->ngfhw", win, W, optimize=True)
    return (out + B[None, :, :, None, None],)


def _ref_kron(xp: Any, W2: Any, W1: Any, W0: Any, X: Any) -> tuple[Any, ...]:
    xw2 = xp.einsum("mabk,zk->mabz", X, W2)  # m,n0,n1,d2
    xw1 = xp.einsum("mabz,yb->mayz", xw2, W1)  # m,n0,d1,d2
    return (xp.einsum("mayz,xa->mxyz", xw1, W0),)


def _ref_mlp3(
    xp: Any, I: Any, W2: Any, B2: Any, W3: Any, B3: Any, W4: Any, B4: Any
) -> tuple[Any, ...]:
    o2 = (I @ W2.T + B2).clip(min=0)
    o3 = (o2 @ W3.T + B3).clip(min=0)
    return o2, o3, (o3 @ W4.T + B4).clip(min=0)


def _ref_moments(xp: Any, I: Any) -> tuple[Any, ...]:
    mean = I.mean(axis=1)
    return mean, ((I - mean[:, None]) ** 2).mean(axis=1)


def _ref_group_norm(xp: Any, I: Any, gamma: Any, beta: Any) -> tuple[Any, ...]:
    n, g = I.shape[0], I.shape[1]
    v = I.reshape(n, g, -1)
    mean = v.mean(axis=2)
    var = ((v - mean[:, :, None]) ** 2).mean(axis=2)
    m5, v5 = mean[:, :, None, None, None], var[:, :, None, None, None]
    g5, b5 = gamma[None, :, :, None, None], beta[None, :, :, None, None]
    return g5 * (I - m5) / xp.sqrt(v5 + 1e-5) + b5, mean, var


def _ref_softmax(xp: Any, I: Any) -> tuple[Any, ...]:
    e = xp.exp(I - xp.amax(I, axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True),)


def _ref_layernorm(xp: Any, I: Any) -> tuple[Any, ...]:
    c = I.shape[2]
    cen = I - I.mean(axis=2, keepdims=True)
    var = ((cen * cen).sum(axis=2, keepdims=True) + 1e-5) / c
    return (cen / xp.sqrt(var),)


def _ref_maxpool(xp: Any, I: Any) -> tuple[Any, ...]:
    b, c, h, w = I.shape
    v = I[:, :, : h // 2 * 2, : w // 2 * 2].reshape(b, c, h // 2, 2, w // 2, 2)
    return (xp.amax(v, axis=(3, 5)),)


# ------------------------------------------------------------------ peers
# Each factory takes the torch module and returns the eager function, which
# is also what `torch.compile` compiles (shapes are read from the tensors).


def _peer_tmm(torch: Any) -> Callable[..., Any]:
    return lambda A, B: torch.mm(A, B.t())


def _peer_bmm(torch: Any) -> Callable[..., Any]:
    return lambda X, Y: torch.bmm(X, Y)


def _peer_gconv(torch: Any) -> Callable[..., Any]:
    conv2d = torch.nn.functional.conv2d

    def gconv(I: Any, W: Any, B: Any) -> Any:
        n, g, c, h, w = I.shape
        f, kh, kw = W.shape[1], W.shape[3], W.shape[4]
        out = conv2d(
            I.view(n, g * c, h, w),
            W.view(g * f, c, kh, kw),
            B.view(g * f),
            groups=g,
        )
        return out.view(n, g, f, h - kh + 1, w - kw + 1)

    return gconv


def _peer_kron(torch: Any) -> Callable[..., Any]:
    """The three mode products as three GEMMs (as `bench.kernels`)."""

    def kron(W2: Any, W1: Any, W0: Any, X: Any) -> Any:
        m, n0, n1, n2 = X.shape
        d2, d1, d0 = W2.shape[0], W1.shape[0], W0.shape[0]
        xw2 = torch.mm(X.reshape(m * n0 * n1, n2), W2.t()).view(m * n0, n1, d2)
        xw1 = torch.matmul(W1, xw2)  # m*n0, d1, d2
        y = torch.matmul(W0, xw1.view(m, n0, d1 * d2))  # m, d0, d1*d2
        return y.view(m, d0, d1, d2)

    return kron


def _peer_mlp1(torch: Any) -> Callable[..., Any]:
    return lambda I, W1, B1: torch.relu(torch.addmm(B1, I, W1))


def _peer_mlp3(torch: Any) -> Callable[..., Any]:
    linear = torch.nn.functional.linear

    def mlp3(
        I: Any, W2: Any, B2: Any, W3: Any, B3: Any, W4: Any, B4: Any
    ) -> tuple[Any, ...]:
        o2 = torch.relu(linear(I, W2, B2))
        o3 = torch.relu(linear(o2, W3, B3))
        return o2, o3, torch.relu(linear(o3, W4, B4))

    return mlp3


def _peer_sum(torch: Any) -> Callable[..., Any]:
    return torch.sum


def _peer_moments(torch: Any) -> Callable[..., Any]:
    def moments(I: Any) -> tuple[Any, Any]:
        var, mean = torch.var_mean(I, 1, correction=0)
        return mean, var

    return moments


def _peer_group_norm(torch: Any) -> Callable[..., Any]:
    group_norm = torch.nn.functional.group_norm

    def gn(I: Any, gamma: Any, beta: Any) -> Any:
        n, g, d, h, w = I.shape
        out = group_norm(
            I.view(n, g * d, h, w), g, gamma.view(g * d), beta.view(g * d), eps=1e-5
        )
        return out.view(n, g, d, h, w)

    return gn


def _peer_lut(torch: Any) -> Callable[..., Any]:
    embedding_bag = torch.nn.functional.embedding_bag
    return lambda LUT, I: embedding_bag(I, LUT, mode="sum")


def _peer_softmax(torch: Any) -> Callable[..., Any]:
    return lambda I: torch.softmax(I, 1)


def _peer_layernorm(torch: Any) -> Callable[..., Any]:
    layer_norm = torch.nn.functional.layer_norm
    # TC adds 1e-5 to the sum of squares, i.e. eps = 1e-5 / C on the variance.
    return lambda I: layer_norm(I, (I.shape[2],), eps=1e-5 / I.shape[2])


def _peer_rowsum(torch: Any) -> Callable[..., Any]:
    return lambda A: torch.sum(A, 1)


def _peer_maxpool(torch: Any) -> Callable[..., Any]:
    return lambda I: torch.nn.functional.max_pool2d(I, 2)


def _peer_chain(torch: Any) -> Callable[..., Any]:
    return lambda a, b, c, d: torch.addcmul(c, a, b).clamp_min_(0.0).mul_(d)


def _peer_matmul(torch: Any) -> Callable[..., Any]:
    return lambda A, B: torch.mm(A, B)


def _peer_fcrelu(torch: Any) -> Callable[..., Any]:
    linear = torch.nn.functional.linear
    return lambda X, W, b: torch.relu(linear(X, W, b))


def _peer_conv2d(torch: Any) -> Callable[..., Any]:
    return lambda I, W: torch.nn.functional.conv2d(I, W)


# ----------------------------------------------------------------- builders


def _tmm(name: str, sizes: Sizes, note: str) -> Kernel:
    return Kernel(
        name=name,
        source=TMM,
        sizes=sizes,
        quick={"M": 16, "K": 40, "N": 72},
        args=lambda s: [_f(s["M"], s["K"]), _f(s["N"], s["K"])],
        outputs=lambda s: [(s["M"], s["N"])],
        reference=lambda xp, A, B: (A @ B.T,),
        peer=_peer_tmm,
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
        origin="TC",
        note=note,
    )


def _tbmm(name: str, batch: int, note: str) -> Kernel:
    return Kernel(
        name=name,
        source=BATCH_MATMUL,
        sizes={"B": batch, "N": 26, "M": 72, "K": 26},
        quick={"B": 6, "N": 26, "M": 72, "K": 26},
        args=lambda s: [_f(s["B"], s["N"], s["M"]), _f(s["B"], s["M"], s["K"])],
        outputs=lambda s: [(s["B"], s["N"], s["K"])],
        reference=lambda xp, X, Y: (X @ Y,),
        peer=_peer_bmm,
        flops=lambda s: 2.0 * s["B"] * s["N"] * s["M"] * s["K"],
        origin="TC",
        note=note,
    )


def _gconv(c: int, hw: int) -> Kernel:
    return Kernel(
        name=f"gconv_c{c}_{hw}",
        source=GROUP_CONV,
        sizes={"N": 32, "G": 32, "C": c, "F": c, "H": hw, "W": hw, "KH": 3, "KW": 3},
        quick={"N": 2, "G": 3, "C": 4, "F": 4, "H": 9, "W": 8, "KH": 3, "KW": 3},
        args=lambda s: [
            _f(s["N"], s["G"], s["C"], s["H"], s["W"]),
            _f(s["G"], s["F"], s["C"], s["KH"], s["KW"]),
            _f(s["G"], s["F"]),
        ],
        outputs=lambda s: [
            (s["N"], s["G"], s["F"], s["H"] - s["KH"] + 1, s["W"] - s["KW"] + 1)
        ],
        reference=_ref_gconv,
        peer=_peer_gconv,
        flops=lambda s: (
            _prod(s["N"], s["G"], s["F"], s["H"] - s["KH"] + 1, s["W"] - s["KW"] + 1)
            * (2.0 * s["C"] * s["KH"] * s["KW"] + 1)
        ),
        origin="TC",
        note=f"TC's GroupConvolution N=32 G=32 C=F={c} H=W={hw} 3x3, bias, valid",
    )


def _kron_flops(s: Sizes) -> float:
    return (
        2.0
        * s["M"]
        * (
            s["N0"] * s["N1"] * s["D2"] * s["N2"]
            + s["N0"] * s["D1"] * s["D2"] * s["N1"]
            + s["D0"] * s["D1"] * s["D2"] * s["N0"]
        )
    )


def _out_hw(s: Sizes) -> tuple[int, int]:
    return s["H"] - s["KH"] + 1, s["W"] - s["KW"] + 1


KERNELS: list[Kernel] = [
    # ------------------------------------------------ TC's benchmark set
    _tmm(
        "tmm_128x4096x16384",
        {"M": 128, "K": 4096, "N": 16384},
        "TC's TransposedMatMul, its largest size (M, K, N)",
    ),
    _tbmm(
        "tbmm_500x26x72x26",
        500,
        "TC's TransposedBatchMatMul B=500 N=26 M=72 K=26 (fits in L2)",
    ),
    _tbmm(
        "tbmm_16000x26x72x26",
        16000,
        "the same with B scaled x32 above the L2",
    ),
    _gconv(4, 56),
    _gconv(8, 28),
    _gconv(16, 14),
    _gconv(32, 7),
    Kernel(
        name="kronecker3_256_16x64",
        source=KRONECKER3,
        sizes={"M": 256, "D0": 16, "D1": 16, "D2": 16, "N0": 64, "N1": 64, "N2": 64},
        quick={"M": 4, "D0": 3, "D1": 4, "D2": 5, "N0": 6, "N1": 7, "N2": 8},
        args=lambda s: [
            _f(s["D2"], s["N2"]),
            _f(s["D1"], s["N1"]),
            _f(s["D0"], s["N0"]),
            _f(s["M"], s["N0"], s["N1"], s["N2"]),
        ],
        outputs=lambda s: [(s["M"], s["D0"], s["D1"], s["D2"])],
        reference=_ref_kron,
        peer=_peer_kron,
        flops=_kron_flops,
        origin="TC",
        note="TC's Kronecker3 M=256 D=16 N=64 (three mode products, 2 temporaries)",
    ),
    Kernel(
        name="mlp1_128x2000x128",
        source=MLP1,
        sizes={"B": 128, "M": 2000, "N": 128},
        quick={"B": 8, "M": 40, "N": 16},
        args=lambda s: [_f(s["B"], s["M"]), _f(s["M"], s["N"]), _f(s["N"])],
        outputs=lambda s: [(s["B"], s["N"])],
        reference=lambda xp, I, W1, B1: ((I @ W1 + B1).clip(min=0),),
        peer=_peer_mlp1,
        fuses=True,
        flops=lambda s: 2.0 * s["B"] * s["M"] * s["N"] + 2.0 * s["B"] * s["N"],
        origin="TC",
        note="TC's MLP1 relu(I W1 + b1), W1 stored (M, N) (fits in L2)",
    ),
    Kernel(
        name="mlp3_128",
        source=MLP3,
        sizes={"B": 128, "N": 128, "O": 64, "P": 32, "Q": 2},
        quick={"B": 5, "N": 12, "O": 8, "P": 6, "Q": 2},
        args=lambda s: [
            _f(s["B"], s["N"]),
            _f(s["O"], s["N"]),
            _f(s["O"]),
            _f(s["P"], s["O"]),
            _f(s["P"]),
            _f(s["Q"], s["P"]),
            _f(s["Q"]),
        ],
        outputs=lambda s: [(s["B"], s["O"]), (s["B"], s["P"]), (s["B"], s["Q"])],
        reference=_ref_mlp3,
        peer=_peer_mlp3,
        fuses=True,
        flops=lambda s: (
            2.0 * s["B"] * (s["N"] * s["O"] + s["O"] * s["P"] + s["P"] * s["Q"])
            + 2.0 * s["B"] * (s["O"] + s["P"] + s["Q"])
        ),
        origin="TC",
        note="TC's MLP3: 3 FC+bias+relu layers B=128 N=128 O=64 P=32 Q=2 (fits in L2)",
    ),
    Kernel(
        name="sum_16M",
        source="def total(float(N) A) -> (s) {\n  s +=! A(i)\n}\n",
        sizes={"N": 1 << 24},
        quick={"N": 20000},
        args=lambda s: [_f(s["N"])],
        outputs=lambda s: [()],
        reference=lambda xp, A: (A.sum(),),
        peer=_peer_sum,
        fuses=True,
        flops=lambda s: float(s["N"]),
        note="a whole-tensor sum: blocks with atomic updates (grid=(1,): one block)",
    ),
    Kernel(
        name="moments2_1024x36864",
        source=MOMENTS2,
        sizes={"N": 1024, "K": 36864},
        quick={"N": 8, "K": 300},
        args=lambda s: [_f(s["N"], s["K"])],
        outputs=lambda s: [(s["N"],), (s["N"],)],
        reference=_ref_moments,
        peer=_peer_moments,
        fuses=True,
        flops=lambda s: 3.0 * s["N"] * s["K"],
        origin="TC",
        note="TC's Moments2_2D_1D (mean, E[x^2] - mean^2) at the group-norm shape",
    ),
    Kernel(
        name="group_norm_32x512x48x48",
        source=GROUP_NORM,
        sizes={"N": 32, "G": 32, "D": 16, "H": 48, "W": 48},
        quick={"N": 2, "G": 3, "D": 2, "H": 5, "W": 4},
        args=lambda s: [
            _f(s["N"], s["G"], s["D"], s["H"], s["W"]),
            _f(s["G"], s["D"]),
            _f(s["G"], s["D"]),
        ],
        outputs=lambda s: [
            (s["N"], s["G"], s["D"], s["H"], s["W"]),
            (s["N"], s["G"]),
            (s["N"], s["G"]),
        ],
        reference=_ref_group_norm,
        peer=_peer_group_norm,
        fuses=True,
        peer_outputs=1,
        flops=lambda s: 7.0 * _prod(s["N"], s["G"], s["D"], s["H"], s["W"]),
        origin="TC",
        note="TC's single-kernel GroupNormalization N=32 C=512 G=32 48x48 "
        "(O, mean, var; F.group_norm gives O only)",
    ),
    Kernel(
        name="lut1_128x50x64_E1e7",
        source=LUT1,
        sizes={"E": 10_000_000, "D": 64, "B": 128, "L": 50},
        quick={"E": 1000, "D": 16, "B": 8, "L": 5},
        args=lambda s: [
            _f(s["E"], s["D"]),
            Arg((s["B"], s["L"]), "int32", s["E"]),
        ],
        outputs=lambda s: [(s["B"], s["D"])],
        reference=lambda xp, LUT, I: (LUT[I].sum(axis=1),),
        peer=_peer_lut,
        flops=lambda s: 1.0 * s["B"] * s["L"] * s["D"],
        gathered_bytes=lambda s: 4.0 * s["B"] * s["L"] * (s["D"] + 1),
        origin="TC",
        note="TC's 1LUT embedding bag B=128 L=50 D=64 over E=1e7 rows "
        "(bytes: the gathered rows; fits in L2)",
    ),
    # ---------------------------------------- the others, well above the L2
    Kernel(
        name="softmax_16384x4096",
        source=SOFTMAX,
        sizes={"N": 16384, "D": 4096},
        quick={"N": 16, "D": 200},
        args=lambda s: [_f(s["N"], s["D"])],
        outputs=lambda s: [(s["N"], s["D"])],
        reference=_ref_softmax,
        peer=_peer_softmax,
        fuses=True,
        flops=lambda s: 5.0 * s["N"] * s["D"],
        note="TC form: max, exp, sum, divide (mx, e, s temporaries)",
    ),
    Kernel(
        name="layernorm_256x256x1024",
        source=LAYERNORM,
        sizes={"T": 256, "B": 256, "C": 1024},
        quick={"T": 2, "B": 6, "C": 100},
        args=lambda s: [_f(s["T"], s["B"], s["C"])],
        outputs=lambda s: [(s["T"], s["B"], s["C"])],
        reference=_ref_layernorm,
        peer=_peer_layernorm,
        fuses=True,
        flops=lambda s: 5.0 * s["T"] * s["B"] * s["C"],
        note="TC's layernorm over C=1024, 65536 rows",
    ),
    Kernel(
        name="rowsum_16384x4096",
        source=ROWSUM,
        sizes={"M": 16384, "N": 4096},
        quick={"M": 20, "N": 300},
        args=lambda s: [_f(s["M"], s["N"])],
        outputs=lambda s: [(s["M"],)],
        reference=lambda xp, A: (A.sum(axis=1),),
        peer=_peer_rowsum,
        fuses=True,
        flops=lambda s: 1.0 * s["M"] * s["N"],
    ),
    Kernel(
        name="maxpool2x2_16x64x224",
        source=MAXPOOL,
        sizes={"B": 16, "C": 64, "H": 224, "W": 224},
        quick={"B": 2, "C": 3, "H": 10, "W": 12},
        args=lambda s: [_f(s["B"], s["C"], s["H"], s["W"])],
        outputs=lambda s: [(s["B"], s["C"], s["H"] // 2, s["W"] // 2)],
        reference=_ref_maxpool,
        peer=_peer_maxpool,
        fuses=True,
        flops=lambda s: 3.0 * _prod(s["B"], s["C"], s["H"] // 2, s["W"] // 2),
        note="2x2 window, stride 2",
    ),
    Kernel(
        name="ew_chain_32M",
        source=EW_CHAIN,
        sizes={"N": 32 * 1024 * 1024},
        quick={"N": 4099},
        args=lambda s: [_f(s["N"])] * 4,
        outputs=lambda s: [(s["N"],)],
        reference=lambda xp, a, b, c, d: ((a * b + c).clip(min=0) * d,),
        peer=_peer_chain,
        fuses=True,
        flops=lambda s: 4.0 * s["N"],
        note="relu(a*b + c) * d (eager: 3 kernels)",
    ),
    Kernel(
        name="matmul_4096",
        source=MATMUL,
        sizes={"M": 4096, "K": 4096, "N": 4096},
        quick={"M": 24, "K": 40, "N": 36},
        args=lambda s: [_f(s["M"], s["K"]), _f(s["K"], s["N"])],
        outputs=lambda s: [(s["M"], s["N"])],
        reference=lambda xp, A, B: (A @ B,),
        peer=_peer_matmul,
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
    ),
    Kernel(
        name="mlp_8192x4096",
        source=FCRELU,
        sizes={"B": 8192, "M": 4096, "N": 4096},
        quick={"B": 12, "M": 40, "N": 24},
        args=lambda s: [_f(s["B"], s["M"]), _f(s["N"], s["M"]), _f(s["N"])],
        outputs=lambda s: [(s["B"], s["N"])],
        reference=lambda xp, X, W, b: ((X @ W.T + b).clip(min=0),),
        peer=_peer_fcrelu,
        fuses=True,
        flops=lambda s: 2.0 * s["B"] * s["N"] * s["M"] + 2.0 * s["B"] * s["N"],
        note="TC's fcrelu relu(X W^T + b), B=8192 M=N=4096",
    ),
    Kernel(
        name="conv2d_32x128x128_58",
        source=CONV2D,
        sizes={"N": 32, "C": 128, "K": 128, "H": 58, "W": 58, "KH": 3, "KW": 3},
        quick={"N": 2, "C": 3, "K": 4, "H": 9, "W": 10, "KH": 3, "KW": 3},
        args=lambda s: [
            _f(s["N"], s["C"], s["H"], s["W"]),
            _f(s["K"], s["C"], s["KH"], s["KW"]),
        ],
        outputs=lambda s: [(s["N"], s["K"], *_out_hw(s))],
        reference=lambda xp, I, W: (_ref_conv2d(xp, I, W),),
        peer=_peer_conv2d,
        flops=lambda s: (
            2.0 * _prod(s["N"], s["K"], *_out_hw(s), s["C"], s["KH"], s["KW"])
        ),
        note="NCHW 3x3 valid, output 56x56",
    ),
]


def by_name(names: list[str] | None) -> list[Kernel]:
    """The kernels named in `names` (all when None or empty), in table order.

    Raises ValueError naming any unknown kernel.
    """
    return _by_name(names, KERNELS)
