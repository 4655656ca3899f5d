"""bfloat16 tensors as `ml_dtypes.bfloat16` arrays and PyTorch bf16 tensors.

Wherever a `bfloat16` tensor is expected (inputs, `out=`, the reference
interpreter), an `ml_dtypes.bfloat16` array is taken as its uint16 view (no
copy); a call whose inputs include one returns its new bfloat16 outputs as
such arrays (uint16 in, uint16 out as before). Results are compared bit for
bit with the reference interpreter on the uint16 bit patterns. PyTorch
`torch.bfloat16` CPU tensors go through `tcdialect.torch_ops` and come back
as such tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.arguments import prepare_inputs
from tcdialect.bfloat16 import to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc

ml_dtypes = pytest.importorskip(
    "ml_dtypes", reason="ml_dtypes (an optional dependency) is not installed"
)

Arr = np.ndarray[Any, Any]

SOURCE = """
def mixed(bfloat16(M, K) A, bfloat16(K, N) B, float(N) F) -> (C, S) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
    S(n) = F(n) * 2.0
}
"""

RNG = np.random.default_rng(7)
# quarters: their products are exact in bfloat16, so the cpu target's exact
# products (CpuOptions.fma16) and the reference's rounded ones agree bit for
# bit, and the comparison below tests the conversions
A_BITS = to_bfloat16(RNG.integers(-4, 5, (3, 5)) / 4)
B_BITS = to_bfloat16(RNG.integers(-4, 5, (5, 4)) / 4)
F = RNG.uniform(-1, 1, 4).astype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)


def expected() -> tuple[Arr, Arr]:
    c, s = reference.run(parse_tc(SOURCE), "mixed", [A_BITS, B_BITS, F])
    return c, s


@pytest.fixture(scope="module", params=["cpu", "cuda-sim"])
def kernel(request: pytest.FixtureRequest) -> tcdialect.Kernel:
    return tcdialect.define(SOURCE, target=request.param)


def test_ml_dtypes_in_and_out(kernel: tcdialect.Kernel) -> None:
    c_ref, s_ref = expected()
    for _ in range(3):  # the first call, then the fast paths
        c, s = kernel(A_BITS.view(BF16), B_BITS.view(BF16), F)
        assert c.dtype == BF16 and s.dtype == np.float32
        np.testing.assert_array_equal(c.view(np.uint16), c_ref)
        np.testing.assert_array_equal(s, s_ref)
    # one ml_dtypes input is enough; uint16 inputs give uint16 as before
    c, _ = kernel(A_BITS, B_BITS.view(BF16), F)
    assert c.dtype == BF16
    c, _ = kernel(A_BITS, B_BITS, F)
    assert c.dtype == np.uint16
    np.testing.assert_array_equal(c, c_ref)


def test_ml_dtypes_out(kernel: tcdialect.Kernel) -> None:
    c_ref, s_ref = expected()
    for a in (A_BITS, A_BITS.view(BF16)):  # uint16 or ml_dtypes inputs
        for _ in range(2):
            out = (np.empty((3, 4), BF16), np.empty(4, np.float32))
            assert kernel(a, B_BITS, F, out=out) is out
            np.testing.assert_array_equal(out[0].view(np.uint16), c_ref)
            np.testing.assert_array_equal(out[1], s_ref)
    # ml_dtypes inputs into uint16 out= arrays
    out = [np.empty((3, 4), np.uint16), np.empty(4, np.float32)]
    assert kernel(A_BITS.view(BF16), B_BITS.view(BF16), F, out=out) is out
    np.testing.assert_array_equal(out[0], c_ref)


def test_wrong_dtypes_name_both_forms(kernel: tcdialect.Kernel) -> None:
    with pytest.raises(TCError, match=r"input 'A'.*ml_dtypes\.bfloat16 array.*uint16"):
        kernel(A_BITS.astype(np.float32), B_BITS, F)
    with pytest.raises(TCError, match=r"input 'F'.*expected float32 but got bfloat16"):
        kernel(A_BITS, B_BITS, F.astype(BF16))
    bad = (np.empty((3, 4), BF16), np.empty(4, BF16))
    with pytest.raises(TCError, match=r"output 'S'.*expected float32 but got bfloat16"):
        kernel(A_BITS.view(BF16), B_BITS, F, out=bad)


def test_views_not_copies_and_reference() -> None:
    defop = parse_tc(SOURCE)
    a = A_BITS.view(BF16)
    arrays, _ = prepare_inputs(reference.find_def(defop, "mixed"), [a, B_BITS, F])
    assert arrays[0].dtype == np.uint16 and np.shares_memory(arrays[0], a)
    c, s = reference.run(defop, "mixed", [a, B_BITS, F])
    c_ref, _ = expected()
    assert c.dtype == BF16 and s.dtype == np.float32
    np.testing.assert_array_equal(c.view(np.uint16), c_ref)


def test_torch_bfloat16_tensors() -> None:
    torch: Any = pytest.importorskip("torch", reason="PyTorch is not installed")
    k = tcdialect.define(SOURCE)
    a = torch.from_numpy(A_BITS.view(np.int16)).view(torch.bfloat16)
    b = torch.from_numpy(B_BITS.view(np.int16)).view(torch.bfloat16)
    c_ref, _ = expected()
    result: Any = k(a, b, torch.from_numpy(F))
    c, s = result
    assert c.dtype == torch.bfloat16 and s.dtype == torch.float32
    np.testing.assert_array_equal(c.view(torch.int16).numpy().view(np.uint16), c_ref)
    out = (torch.empty(3, 4, dtype=torch.bfloat16), torch.empty(4))
    assert k(a, b, torch.from_numpy(F), out=out) is out
    np.testing.assert_array_equal(
        out[0].view(torch.int16).numpy().view(np.uint16), c_ref
    )
