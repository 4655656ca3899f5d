"""Calls on the GPU with arrays in device memory: PyTorch, CuPy and pycuda
arrays in place, outputs of the same kind, `out=`, streams, 16-bit floats,
generic sizes, the gathers' bounds check, and errors that leave the next
call working.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import tcdialect
from tcdialect import reference
from tcdialect.bfloat16 import from_bfloat16, to_bfloat16
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""
SOFTMAX = """
def softmax(float(N, D) I) -> (O, expsum) {
    maxVal(n) max=! I(n, d)
    shifted(n, d) = exp(I(n, d) - maxVal(n))
    expsum(n) +=! shifted(n, r_d)
    O(n, d) = shifted(n, d) / expsum(n)
}
"""
GATHER = "def gather(float(V, W) In, int32(L) Idx) -> (O) { O(l, w) = In(Idx(l), w) }"


def _inputs(m: int = 67, k: int = 45, n: int = 130) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        rng.uniform(-1, 1, (m, k)).astype(np.float32),
        rng.uniform(-1, 1, (k, n)).astype(np.float32),
    ]


def _want(src: str, inputs: list[Any]) -> tuple[np.ndarray, ...]:
    return reference.run(parse_tc(src), None, inputs)


def test_numpy_in_numpy_out() -> None:
    a, b = _inputs()
    c = tcdialect.define(MATMUL, target="cuda")(a, b)
    assert isinstance(c, np.ndarray)
    np.testing.assert_allclose(c, _want(MATMUL, [a, b])[0], rtol=1e-5, atol=1e-5)


def test_torch_tensors_in_place() -> None:
    torch = pytest.importorskip("torch")
    a, b = _inputs()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    k = tcdialect.define(MATMUL, target="cuda")
    for _ in range(3):  # the first call compiles; later ones take the fast path
        tc = k(ta, tb)
        assert isinstance(tc, torch.Tensor) and tc.is_cuda
        np.testing.assert_allclose(
            tc.cpu().numpy(), _want(MATMUL, [a, b])[0], rtol=1e-5, atol=1e-5
        )
    out = torch.full((a.shape[0], b.shape[1]), 7.0, device="cuda")
    assert k(ta, tb, out=out) is out
    np.testing.assert_allclose(out.cpu().numpy(), tc.cpu().numpy())
    outs = k(ta, tb, out=(out,))
    assert isinstance(outs, tuple) and outs[0] is out


def test_several_outputs_come_back_as_tensors() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).uniform(-3, 3, (300, 77)).astype(np.float32)
    o, s = tcdialect.define(SOFTMAX, target="cuda")(torch.from_numpy(x).cuda())
    want = _want(SOFTMAX, [x])
    np.testing.assert_allclose(o.cpu().numpy(), want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s.cpu().numpy(), want[1], rtol=1e-5, atol=1e-5)


def test_torch_errors_name_the_argument() -> None:
    torch = pytest.importorskip("torch")
    a, b = _inputs()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    k = tcdialect.define(MATMUL, target="cuda")
    with pytest.raises(TCError, match=r"input 'A' \(argument 0\).*not a contiguous"):
        k(ta.t().contiguous().t(), tb)
    with pytest.raises(TCError, match=r"input 'B' \(argument 1\).*expected float32"):
        k(ta, tb.double())
    with pytest.raises(TCError, match=r"output 'C' \(out\[0\]\).*shape"):
        k(ta, tb, out=torch.empty(3, 3, device="cuda"))
    sq_a, sq_b = (torch.from_numpy(x).cuda() for x in _inputs(45, 45, 130))
    with pytest.raises(TCError, match=r"output 'C' \(out\[0\]\).*overlaps"):
        k(sq_a, sq_b, out=sq_b)  # C has B's shape: out=B would overwrite B
    with pytest.raises(TCError, match=r"in CUDA memory.*target='cuda'"):
        tcdialect.define(MATMUL)(ta, tb)  # the CPU target takes host arrays
    np.testing.assert_allclose(  # and the kernel still works
        k(ta, tb).cpu().numpy(), _want(MATMUL, [a, b])[0], rtol=1e-5, atol=1e-5
    )


def test_torch_current_stream_and_stream_argument() -> None:
    torch = pytest.importorskip("torch")
    a, b = _inputs(512, 256, 384)
    want = _want(MATMUL, [a, b])[0]
    k = tcdialect.define(MATMUL, target="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        tc = k(ta, tb)  # on s, after the copies made on s
        got = tc.cpu()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    s2 = torch.cuda.Stream()
    out = torch.empty_like(tc)
    s2.wait_stream(torch.cuda.current_stream())
    k(ta, tb, out=out, stream=s2)
    s2.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-4, atol=1e-4)
    out.zero_()
    torch.cuda.synchronize()
    k(ta, tb, out=out, stream=s2.cuda_stream)  # a raw CUstream handle
    s2.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-4, atol=1e-4)


def test_a_refused_launch_is_an_error_and_the_next_call_works() -> None:
    torch = pytest.importorskip("torch")
    from tcdialect.runtime.cuda.launcher import CudaPlan, _Launch

    a, b = _inputs()
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    k = tcdialect.define(MATMUL, target="cuda")
    with pytest.raises(TCError, match="stream= must be"):
        k(ta, tb, stream="default")
    want = _want(MATMUL, [a, b])[0]
    np.testing.assert_allclose(k(ta, tb).cpu().numpy(), want, rtol=1e-5, atol=1e-5)
    # More threads than the kernel's .maxntid: the driver refuses the launch
    # (CUDA_ERROR_INVALID_VALUE), which leaves the context usable.
    plans = {id(p): p for p in k._plans.values() if isinstance(p, CudaPlan)}
    (plan,) = plans.values()
    i, launch = next((i, s) for i, s in enumerate(plan.steps) if isinstance(s, _Launch))
    block = launch.block
    assert block[0] * block[1] * block[2] < 1024
    plan.steps[i] = dataclasses.replace(launch, block=(1024, 1, 1))
    try:
        with pytest.raises(TCError, match=r"CUDA error \w+ launching kernel @\w+"):
            k(ta, tb)
    finally:
        plan.steps[i] = launch
    np.testing.assert_allclose(k(ta, tb).cpu().numpy(), want, rtol=1e-5, atol=1e-5)


def test_cupy_arrays() -> None:
    cupy = pytest.importorskip("cupy")
    a, b = _inputs()
    ca, cb = cupy.asarray(a), cupy.asarray(b)
    k = tcdialect.define(MATMUL, target="cuda")
    for _ in range(2):
        cc = k(ca, cb)
        assert isinstance(cc, cupy.ndarray)
        np.testing.assert_allclose(
            cupy.asnumpy(cc), _want(MATMUL, [a, b])[0], rtol=1e-5, atol=1e-5
        )
    s = cupy.cuda.Stream(non_blocking=True)
    out = cupy.zeros_like(cc)
    cupy.cuda.Device().synchronize()
    k(ca, cb, out=out, stream=s)
    s.synchronize()
    np.testing.assert_allclose(cupy.asnumpy(out), cupy.asnumpy(cc))


def test_pycuda_gpuarrays() -> None:
    gpuarray = pytest.importorskip("pycuda.gpuarray")
    a, b = _inputs()
    ga, gb = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    gc = tcdialect.define(MATMUL, target="cuda")(ga, gb)
    assert isinstance(gc, gpuarray.GPUArray)
    np.testing.assert_allclose(gc.get(), _want(MATMUL, [a, b])[0], rtol=1e-5, atol=1e-5)


def test_float16_and_bfloat16_tensors() -> None:
    torch = pytest.importorskip("torch")
    src = """
    def f(float16(M, K) H, bfloat16(M, K) B) -> (S, T) {
        S(m) +=! H(m, r_k) * float16(2.0)
        T(m, k) = B(m, k) * B(m, k) + bfloat16(1.0)
    }
    """
    rng = np.random.default_rng(3)
    h = rng.uniform(-1, 1, (40, 300)).astype(np.float16)
    b = to_bfloat16(rng.uniform(-2, 2, (40, 300)))
    want = _want(src, [h, b])
    th = torch.from_numpy(h).cuda()
    tb = torch.from_numpy(b.view(np.int16)).cuda().view(torch.bfloat16)
    s, t = tcdialect.define(src, target="cuda")(th, tb)
    assert s.dtype == torch.float16 and t.dtype == torch.bfloat16
    np.testing.assert_allclose(
        s.cpu().numpy().astype(np.float32),
        want[0].astype(np.float32),
        rtol=2e-3,
        atol=2e-2,
    )
    t_bits = t.view(torch.int16).cpu().numpy().view(np.uint16)
    np.testing.assert_array_equal(from_bfloat16(t_bits), from_bfloat16(want[1]))
    _, t2 = tcdialect.define(src, target="cuda")(h, b)  # NumPy in, NumPy out
    np.testing.assert_array_equal(t2, want[1])


def test_generic_sizes() -> None:
    k = tcdialect.define(
        MATMUL, target="cuda", options=tcdialect.CudaOptions(specialize=False)
    )
    for m, kk, n in ((5, 7, 9), (67, 45, 130), (1, 300, 2)):
        a, b = _inputs(m, kk, n)
        np.testing.assert_allclose(
            k(a, b), _want(MATMUL, [a, b])[0], rtol=1e-5, atol=1e-5
        )


def test_gather_bounds_check_on_the_device() -> None:
    rng = np.random.default_rng(5)
    table = rng.uniform(-1, 1, (50, 33)).astype(np.float32)
    good = rng.integers(0, 50, 70).astype(np.int32)
    k = tcdialect.define(GATHER, target="cuda")
    np.testing.assert_array_equal(k(table, good), table[good])
    bad = good.copy()
    bad[17] = 50
    # the device flags the read; the call names the index element (NumPy inputs)
    with pytest.raises(TCError, match=r"'In' out of bounds: .* \(Idx\[17\] = 50;"):
        k(table, bad)
    np.testing.assert_array_equal(k(table, good), table[good])  # still works
