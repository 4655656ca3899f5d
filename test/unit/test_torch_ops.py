"""PyTorch tensors as Kernel arguments (`tcdialect.torch_ops`): zero copies,
result types, errors, the custom op's name and fake shapes, and autograd
through hand-written backward kernels (`use_backward`), checked with
`torch.autograd.gradcheck` in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import TCError, reference

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

from tcdialect import torch_ops  # noqa: E402 - needs torch

MATMUL = """
def matmul(double(M, K) A, double(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""

MATMUL_GRAD = """
def matmul_grad(double(M, K) A, double(K, N) B, double(M, N) d_C) -> (d_A, d_B) {
    d_A(m, k) +=! d_C(m, r_n) * B(k, r_n)
    d_B(k, n) +=! A(r_m, k) * d_C(r_m, n)
}
"""

CONV = """
def conv1(float(N) I, float(KW) W) -> (O) {
    O(i) +=! I(i + r_k) * W(r_k)
}
"""

TWO_OUTPUTS = """
def two(float(N) A, float s) -> (B, S) {
    B(i) = s * A(i)
    S +=! A(i)
}
"""


def define(source: str, **settings: Any) -> Any:
    """`tcdialect.define`, the kernel typed to take and return tensors
    (`Kernel.__call__` is annotated for NumPy arrays)."""
    return tcdialect.define(source, **settings)


def rand(*shape: int, seed: int = 0, dtype: Any = None) -> Any:
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.uniform(-1, 1, shape)).to(dtype or torch.float64)


def with_backward(source: str, backward: str) -> Any:
    """The kernel of `source` renamed `hand_<name>` (a backward is set for
    every Kernel of a definition: this one is the hand-written tests' own)."""
    kernel = define(source.replace("def ", "def hand_", 1))
    torch_ops.use_backward(kernel, define(backward))
    return kernel


# ------------------------------------------------------------------ calls


def test_cpu_tensors_in_tensors_out() -> None:
    mm = define(MATMUL)
    A, B = rand(5, 3), rand(3, 4, seed=1)
    C = mm(A, B)
    assert type(C) is torch.Tensor and C.dtype == torch.float64
    assert C.shape == (5, 4) and C.grad_fn is None
    (expected,) = reference.run(mm.defop, None, [A.numpy(), B.numpy()])
    np.testing.assert_allclose(C.numpy(), expected, rtol=1e-12)
    # several outputs: a tuple of tensors; a Python scalar input is taken
    two = define(TWO_OUTPUTS)
    X = rand(6, dtype=torch.float32)
    Y, S = two(X, 2.0)
    assert type(Y) is torch.Tensor and type(S) is torch.Tensor
    assert Y.dtype == S.dtype == torch.float32 and S.shape == ()
    torch.testing.assert_close(Y, 2 * X)
    torch.testing.assert_close(S, X.sum())


def test_inputs_and_outputs_are_not_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    mm = define(MATMUL)
    A, B = rand(4, 3), rand(3, 2, seed=1)
    seen: list[tuple[int, int]] = []
    to_array = torch_ops._array  # pyright: ignore[reportPrivateUsage]

    def spy(kernel: Any, t: Any, i: int, *, output: bool = False) -> Any:
        a = to_array(kernel, t, i, output=output)
        seen.append((a.ctypes.data, t.data_ptr()))
        return a

    monkeypatch.setattr(torch_ops, "_array", spy)
    C = torch.empty(4, 2, dtype=torch.float64)
    ptr = C.data_ptr()
    assert mm(A, B, out=C) is C
    assert C.data_ptr() == ptr
    torch.testing.assert_close(C, A @ B)
    assert len(seen) == 3 and all(a == t for a, t in seen)
    # a new output is a tensor over the kernel's own NumPy output
    wrapped: list[tuple[int, int]] = []
    from_array = torch_ops._from_array  # pyright: ignore[reportPrivateUsage]

    def spy_output(kernel: Any, a: Any, i: int) -> Any:
        t = from_array(kernel, a, i)
        wrapped.append((a.ctypes.data, t.data_ptr()))
        return t

    monkeypatch.setattr(torch_ops, "_from_array", spy_output)
    result = mm(A, B)
    assert isinstance(result, torch.Tensor)
    assert len(wrapped) == 1 and wrapped[0][0] == wrapped[0][1] == result.data_ptr()
    torch.testing.assert_close(result, A @ B)


def test_argument_errors_name_the_argument() -> None:
    mm = define(MATMUL)
    A, B = rand(4, 3), rand(3, 2)
    with pytest.raises(
        TCError, match=r"input 'A' \(argument 0\).*contiguous.*A\.contiguous"
    ):
        mm(rand(3, 4).t(), B)
    with pytest.raises(TCError, match=r"input 'B' \(argument 1\).*expected float64"):
        mm(A, B.float())
    with pytest.raises(TCError, match=r"input 'A' .*meta"):
        mm(torch.empty(4, 3, dtype=torch.float64, device="meta"), B)
    with pytest.raises(TCError, match=r"output 'C' \(out\[0\]\).*contiguous"):
        mm(A, B, out=torch.empty(2, 4, dtype=torch.float64).t())
    with pytest.raises(TCError, match="stream= is for GPU targets"):
        mm(A, B, stream=1)
    with pytest.raises(TCError, match="out= cannot be used where autograd"):
        mm(A.requires_grad_(), B, out=torch.empty(4, 2, dtype=torch.float64))
    with pytest.raises(TCError, match=r"input 'A' \(argument 0\).*contiguous"):
        mm(rand(3, 4).t().requires_grad_(), B)


# --------------------------------------------------------------- the op


def test_op_name_is_per_definition_and_registered_once() -> None:
    first = define(MATMUL)
    same = define(MATMUL.replace("+=!", "  +=!  "))
    other = define(MATMUL.replace("double", "float"))
    tiled = define(MATMUL, options=tcdialect.CpuOptions(tile=(8, 8)))
    name = torch_ops.op_name(first)
    assert name.startswith("matmul_")
    assert torch_ops.op_name(same) == name
    assert len({name, torch_ops.op_name(other), torch_ops.op_name(tiled)}) == 3
    op = torch_ops.torch_op(first)
    assert torch_ops.torch_op(same) is op
    assert op.qualname == f"tcdialect::{name}"
    assert getattr(torch.ops.tcdialect, name).default is not None


def test_fake_shapes_from_output_extents() -> None:
    conv = define(CONV)
    assert torch_ops.output_shapes(conv, [(10,), (3,)]) == [[8]]
    assert torch_ops.output_shapes(conv, [(2,), (3,)]) == [[0]]
    op = torch_ops.torch_op(conv).op
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        out = op(torch.empty(12), torch.empty(5))
    assert out.shape == (8,) and out.dtype == torch.float32
    torch.library.opcheck(
        op,
        (torch.rand(9), torch.rand(4)),
        test_utils=("test_schema", "test_faketensor", "test_autograd_registration"),
    )


def test_scalar_sizes_are_ints_of_the_op() -> None:
    """A 0-d integer input that is also a size (the stride ``S``) is a
    ``SymInt`` of the op: the fake shapes follow its value."""
    sconv = define(
        """
        def sconv(double(N) I, double(K) W, int32 S) -> (O) {
            O(i) +=! I(i * S + r_k) * W(r_k)
        }
        """
    )
    record = torch_ops.torch_op(sconv)
    assert "SymInt S" in str(record.op._opoverload._schema)
    I, W = rand(11).requires_grad_(), rand(3, seed=1)
    O = sconv(I, W, 2)
    assert O.grad_fn is not None
    expected = torch.nn.functional.conv1d(I[None, None], W[None, None], stride=2)
    torch.testing.assert_close(O, expected[0, 0])
    assert torch_ops.output_shapes(sconv, [(11,), (3,), ()], {"S": 3}) == [[3]]
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        out = record.op(
            torch.empty(14, dtype=torch.float64), torch.empty(3, dtype=torch.float64), 4
        )
    assert out.shape == (3,)


# ------------------------------------------------------------- autograd


def test_no_graph_without_requires_grad() -> None:
    mm = with_backward(MATMUL, MATMUL_GRAD)
    A, B = rand(3, 2).requires_grad_(), rand(2, 4)
    with torch.no_grad():
        assert mm(A, B).grad_fn is None
    C = mm(A, B)
    assert C.grad_fn is not None and C.requires_grad
    C.sum().backward()
    assert A.grad is not None and B.grad is None
    torch.testing.assert_close(A.grad, torch.ones(3, 4, dtype=A.dtype) @ B.t())


def test_gradcheck_hand_written_backward() -> None:
    """`use_backward`'s kernel is the one autograd calls (the derived ones
    are checked in test/e2e/test_torch_autograd.py)."""
    mm = with_backward(MATMUL, MATMUL_GRAD)
    inputs = [rand(4, 3).requires_grad_(), rand(3, 5, seed=1).requires_grad_()]
    assert torch.autograd.gradcheck(mm, inputs)
    backward = torch_ops.torch_op(mm).backward_ops[("A", "B")]
    assert backward.kernel.entry == "matmul_grad"


def test_backward_kernel_is_checked() -> None:
    # (a definition of its own: a backward is set for every Kernel of it)
    mm = define(MATMUL.replace("matmul", "matmul_checked"))
    wrong = define(MATMUL_GRAD.replace("d_C", "g"))
    with pytest.raises(TCError, match=r"must take \(A, B, d_C\) but takes \(A, B, g\)"):
        torch_ops.use_backward(mm, wrong)
    only_a = define(
        """
        def matmul_grad_a(double(M, K) A, double(K, N) B, double(M, N) d_C) -> (d_A) {
            d_A(m, k) +=! d_C(m, r_n) * B(k, r_n)
        }
        """
    )
    torch_ops.use_backward(mm, only_a)
    A, B = rand(2, 3).requires_grad_(), rand(3, 2).requires_grad_()
    with pytest.raises(TCError, match="has no output d_B"):
        mm(A, B).sum().backward()
