"""PyTorch's autograd and torch.compile on the `cuda` target: CUDA tensors
through the definition's custom op (forward and derived backward on the
GPU), and the plain calls' fast path leaving to the op what autograd or
torch.compile must record.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from tcdialect import define

MATMUL = """
def matmul(double(M, K) A, double(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""
LINEAR_RELU = """
def linear_relu(float(B, I) X, float(O, I) W, float(O) b) -> (Y) {
    Y(n, o) +=! X(n, r_i) * W(o, r_i)
    Y(n, o) = max(Y(n, o) + b(o), 0.0)
}
"""


def rand(*shape: int, seed: int = 0, dtype: Any = None) -> Any:
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.uniform(-1, 1, shape)).to(dtype or torch.float64)


def test_cuda_tensors_with_autograd_and_compile() -> None:
    """CUDA tensors through the op (forward and derived backward on the GPU),
    float64 gradcheck, and a compiled graph."""
    mm = define(MATMUL, target="cuda")
    inputs = [rand(5, 3).cuda().requires_grad_(), rand(3, 4, seed=1).cuda()]
    assert torch.autograd.gradcheck(mm, inputs)
    plain = mm(*(t.detach() for t in inputs))
    assert plain.is_cuda and plain.grad_fn is None
    layer = define(LINEAR_RELU, target="cuda")

    @torch.compile(backend="aot_eager", fullgraph=True)
    def forward(x: Any, w: Any, b: Any) -> Any:
        return layer(x, w, b)

    x = rand(8, 5, dtype=torch.float32).cuda()
    w = rand(3, 5, seed=1, dtype=torch.float32).cuda().requires_grad_()
    b = rand(3, seed=2, dtype=torch.float32).cuda().requires_grad_()
    value = forward(x, w, b)
    assert value.is_cuda
    value.square().sum().backward()
    w_ref, b_ref = (t.detach().clone().requires_grad_() for t in (w, b))
    expected = torch.relu(x @ w_ref.t() + b_ref)
    expected.square().sum().backward()
    torch.testing.assert_close(value, expected)
    torch.testing.assert_close(w.grad, w_ref.grad)
    torch.testing.assert_close(b.grad, b_ref.grad)


def test_plain_calls_first_then_autograd_and_compile() -> None:
    """After plain calls, which the last plan launches the short way, a call
    that autograd or torch.compile must record still goes through the op."""
    layer = define(LINEAR_RELU, target="cuda")
    x = rand(8, 5, dtype=torch.float32).cuda()
    w = rand(3, 5, seed=1, dtype=torch.float32).cuda()
    b = rand(3, seed=2, dtype=torch.float32).cuda()
    expected = torch.relu(x @ w.t() + b)
    for _ in range(3):
        torch.testing.assert_close(layer(x, w, b), expected)
    w.requires_grad_()
    value = layer(x, w, b)
    assert value.grad_fn is not None
    value.sum().backward()
    w_ref = w.detach().clone().requires_grad_()
    torch.relu(x @ w_ref.t() + b).sum().backward()
    torch.testing.assert_close(w.grad, w_ref.grad)
    with torch.no_grad():
        assert layer(x, w, b).grad_fn is None
    # a Parameter first: the plan's path for other array objects declines too
    x_param = torch.nn.Parameter(x.clone())
    layer(x_param, w.detach(), b).sum().backward()
    x_ref = x.clone().requires_grad_()
    torch.relu(x_ref @ w_ref.detach().t() + b).sum().backward()
    torch.testing.assert_close(x_param.grad, x_ref.grad)

    @torch.compile(backend="aot_eager", fullgraph=True)
    def forward(x: Any, w: Any, b: Any) -> Any:
        return layer(x, w, b) * 2

    w.grad = None
    value = forward(x, w, b)
    torch.testing.assert_close(value, 2 * expected)
    value.sum().backward()
    torch.testing.assert_close(w.grad, 2 * w_ref.grad)


THREADS_SCRIPT = """
import threading
import numpy as np
import torch
from tcdialect import define

layer = define('''{source}''', target="cuda")
x = torch.rand(8, 5, device="cuda")
w = torch.rand(3, 5, device="cuda")
b = torch.rand(3, device="cuda")
want = torch.relu(x @ w.t() + b)
got = []

def worker():
    got.append(layer(x, w, b))  # the general path, then the fast path
    got.append(layer(x, w, b))
    host = [t.cpu().numpy() for t in (x, w, b)]
    got.append(torch.from_numpy(layer(*host)).cuda())  # pycuda's copies

thread = threading.Thread(target=worker)
thread.start()
thread.join()
for value in got:
    torch.testing.assert_close(value, want)
w.requires_grad_()
layer(x, w, b).sum().backward()  # the backward runs on autograd's thread
assert w.grad is not None
print("done")
"""


def test_threads_and_autograd_then_a_clean_exit() -> None:
    """pycuda aborts the process when a thread ends with a context on its
    stack: calls from a worker thread that ends, and a backward on
    PyTorch's autograd thread, still let the process exit with status 0."""
    import subprocess
    import sys

    script = THREADS_SCRIPT.replace("{source}", LINEAR_RELU)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "done" in done.stdout and "PyCUDA ERROR" not in done.stderr
