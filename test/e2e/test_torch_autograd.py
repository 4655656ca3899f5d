"""Kernels in PyTorch programs with derived gradients (`tcdialect.torch_ops`
and `tcdialect.autodiff.grad`): `torch.autograd.gradcheck` in float64 (with
the default saving policy), only the gradients asked for, the saving policy,
double backward, and the custom ops inside ``torch.compile(fullgraph=True)``
graphs, forward and backward."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import tcdialect

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

from tcdialect import torch_ops  # noqa: E402 - needs torch

MATMUL = """
def matmul(double(M, K) A, double(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""

CHAIN = """
def chain(double(N) A, double(N) B, double(N) C, double(N) D) -> (O) {
    O(i) = max(A(i) * B(i) + C(i), 0.0) * D(i)
}
"""

SOFTMAX = """
def softmax(double(N, D) I) -> (O) {
    maxVal(n) max=! I(n, d)
    shifted(n, d) = exp(I(n, d) - maxVal(n))
    expsum(n) +=! shifted(n, r_d)
    O(n, d) = shifted(n, d) / expsum(n)
}
"""

LAYERNORM = """
def layernorm(double(N, C) I, double(C) G, double(C) Bt) -> (O) {
    mean(n) +=! I(n, r_c)
    cen(n, c) = I(n, c) - mean(n) / double(C)
    var(n) +=! cen(n, r_c) * cen(n, r_c)
    rstd(n) = rsqrt(var(n) / double(C) + 1e-5)
    O(n, c) = cen(n, c) * rstd(n) * G(c) + Bt(c)
}
"""

LINEAR_RELU = """
def linear_relu(float(B, I) X, float(O, I) W, float(O) b) -> (Y) {
    Y(n, o) +=! X(n, r_i) * W(o, r_i)
    Y(n, o) = max(Y(n, o) + b(o), 0.0)
}
"""

CONV = """
def conv1(float(N) I, float(KW) W) -> (O) {
    O(i) +=! I(i + r_k) * W(r_k)
}
"""


def define(source: str, **settings: Any) -> Any:
    """`tcdialect.define`, the kernel typed to take and return tensors
    (`Kernel.__call__` is annotated for NumPy arrays)."""
    return tcdialect.define(source, **settings)


def rand(*shape: int, seed: int = 0, dtype: Any = None) -> Any:
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.uniform(-1, 1, shape)).to(dtype or torch.float64)


@pytest.mark.parametrize(
    ("source", "shapes"),
    [
        (MATMUL, [(4, 3), (3, 5)]),
        (CHAIN, [(7,)] * 4),
        (SOFTMAX, [(3, 6)]),
        (LAYERNORM, [(3, 5), (5,), (5,)]),
    ],
    ids=["matmul", "chain", "softmax", "layernorm"],
)
def test_gradcheck_derived_backward(source: str, shapes: list[tuple[int, ...]]) -> None:
    kernel = define(source)
    inputs = [rand(*s, seed=i).requires_grad_() for i, s in enumerate(shapes)]
    assert torch.autograd.gradcheck(kernel, inputs)


def test_only_the_gradients_asked_for() -> None:
    ln = define(LAYERNORM)
    I, G, Bt = rand(4, 6), rand(6, seed=1).requires_grad_(), rand(6, seed=2)
    ln(I, G, Bt).square().sum().backward()
    record = torch_ops.torch_op(ln)
    saving = record.saving_ops[("G",)]  # the forward saves mean and var
    assert saving is not None
    assert saving.saving_backwards[("G",)].out_names == ["d_G"]
    G_ref = G.detach().clone().requires_grad_()
    ref = torch.nn.functional.layer_norm(I, (6,), G_ref, Bt, eps=1e-5)
    ref.square().sum().backward()
    torch.testing.assert_close(G.grad, G_ref.grad)


def test_one_saving_forward_for_several_gradient_sets() -> None:
    """Gradients of W, then of X, then of W again: the two sets share one
    saving forward (both save the pre-activation), and each backward is the
    one derived for the set autograd asks for, whichever was derived last."""
    layer = define(LINEAR_RELU)
    x, w, b = rand(6, 4), rand(3, 4, seed=1), rand(3, seed=2)
    record = torch_ops.torch_op(layer)
    for name in ("W", "X", "W"):
        xg = x.float().requires_grad_(name == "X")
        wg = w.float().requires_grad_(name == "W")
        layer(xg, wg, b.float()).sum().backward()
        xr = x.float().requires_grad_(name == "X")
        wr = w.float().requires_grad_(name == "W")
        torch.relu(xr @ wr.t() + b.float()).sum().backward()
        got, want = (xg.grad, xr.grad) if name == "X" else (wg.grad, wr.grad)
        torch.testing.assert_close(got, want)
    saving = record.saving_ops[("W",)]
    assert saving is not None and saving is record.saving_ops[("X",)]
    assert set(saving.saving_backwards) == {("W",), ("X",)}


def test_saving_policy() -> None:
    """By default the forward op also returns the reductions and the
    exponentials the backward reads (`forward_backward` with
    ``save="auto"``) and the backward op takes them; ``save="none"``
    recomputes them; a double backward reaches the inputs through the saved
    tensors too."""
    sm = define(SOFTMAX)
    x = rand(3, 6).requires_grad_()
    g = rand(3, 6, seed=1)
    want = torch.autograd.grad(torch.softmax(x, 1), x, g)[0]
    record = torch_ops.torch_op(sm)
    torch.testing.assert_close(torch.autograd.grad(sm(x), x, g)[0], want)
    saving = record.saving_ops[("I",)]
    assert saving is not None
    assert saving.kernel.out_names == [
        "O", "maxVal", "shifted", "expsum", "maxVal_first"
    ]  # fmt: skip
    names = ("I", "maxVal", "shifted", "expsum", "maxVal_first", "d_O")
    assert saving.saving_backwards[("I",)].defop.input_names == names
    assert not record.backward_ops
    torch_ops.save_policy(sm, "none")
    torch.testing.assert_close(torch.autograd.grad(sm(x), x, g)[0], want)
    assert set(record.backward_ops) == {("I",)} and not record.saving_ops
    torch_ops.save_policy(sm, "auto")
    v = rand(3, 6, seed=2)
    got = torch.autograd.grad(sm(x), x, g, create_graph=True)[0]
    ref = torch.autograd.grad(torch.softmax(x, 1), x, g, create_graph=True)[0]
    torch.testing.assert_close(
        torch.autograd.grad((got * v).sum(), x)[0],
        torch.autograd.grad((ref * v).sum(), x)[0],
    )
    mm = define(MATMUL)  # saves nothing: the plain op
    mm(rand(2, 3).requires_grad_(), rand(3, 2, seed=1))
    assert torch_ops.torch_op(mm).saving_ops[("A",)] is None
    with pytest.raises(tcdialect.TCError, match="save='some' is not one of"):
        torch_ops.save_policy(sm, "some")


def test_double_backward() -> None:
    """The backward op's own backward: `grad` of the derived `@matmul_grad`."""
    mm = define(MATMUL)
    inputs = [rand(3, 2).requires_grad_(), rand(2, 4, seed=1).requires_grad_()]
    assert torch.autograd.gradgradcheck(mm, inputs)


FRESH_PROCESS = f"""
import sys
import numpy as np
import tcdialect

SOURCE = '''{LINEAR_RELU}'''
layer = tcdialect.define(SOURCE)
ones = [np.ones((8, 5), np.float32), np.ones((3, 5), np.float32), np.ones(3, np.float32)]
layer(*ones)
assert "torch" not in sys.modules, "a NumPy call imported torch"

import torch

layer = tcdialect.define(SOURCE)


@torch.compile(fullgraph=True)
def forward(x, w, b):
    return layer(x, w, b)


torch.manual_seed(0)
x = torch.randn(8, 5)
w = torch.randn(3, 5, requires_grad=True)
b = torch.randn(3, requires_grad=True)
value = forward(x, w, b)
value.square().sum().backward()
w_ref, b_ref = (t.detach().clone().requires_grad_() for t in (w, b))
expected = torch.relu(x @ w_ref.t() + b_ref)
expected.square().sum().backward()
torch.testing.assert_close(value, expected)
torch.testing.assert_close(w.grad, w_ref.grad)
torch.testing.assert_close(b.grad, b_ref.grad)
print("ok")
"""


def test_fresh_process_numpy_then_compiled_fullgraph() -> None:
    """In a fresh process: a NumPy call does not import torch; then a
    kernel first called inside ``torch.compile(fullgraph=True)`` (its op
    registered while Dynamo traces), forward and backward with Inductor,
    against PyTorch's own layers."""
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"


def test_compiled_graphs_hold_the_ops_with_symbolic_shapes() -> None:
    """One graph for every input length: the fake implementation evaluates
    the output extent ``N - KW + 1`` on SymInts; the forward graph calls the
    op, the backward graph the derived backward's op."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    conv = define(CONV)
    graphs: dict[str, list[Any]] = {"forward": [], "backward": []}

    def keep(kind: str) -> Any:
        def compiler(gm: Any, _: Any) -> Any:
            graphs[kind].append(gm)
            return make_boxed_func(gm.forward)

        return compiler

    backend = aot_autograd(fw_compiler=keep("forward"), bw_compiler=keep("backward"))

    @torch.compile(backend=backend, fullgraph=True, dynamic=True)
    def f(x: Any, w: Any) -> Any:
        return conv(x, w).sum()

    w = rand(3, dtype=torch.float32).requires_grad_()
    for n in (10, 13):
        x = rand(n, seed=n, dtype=torch.float32).requires_grad_()
        f(x, w).backward()
        expected = torch.nn.functional.conv1d(x[None, None], w[None, None]).sum()
        torch.testing.assert_close(f(x, w), expected)
        ones = torch.ones(n - 2)
        assert x.grad is not None
        torch.testing.assert_close(
            x.grad,
            torch.nn.functional.conv_transpose1d(
                ones[None, None], w[None, None].detach()
            )[0, 0],
        )
    assert len(graphs["forward"]) == len(graphs["backward"]) == 1
    name = torch_ops.op_name(conv)
    forward = str(graphs["forward"][0].graph)
    assert f"tcdialect.{name}" in forward
    backward = str(graphs["backward"][0].graph)
    assert "tcdialect.conv1_grad_" in backward
