"""Train a small TC model with derived gradients, plain NumPy and SGD.

A two-layer perceptron with a tanh hidden layer and its mean squared error
are one TC definition; `tcdialect.grad` derives the backward definition
(docs/autodiff.md) and both are compiled for this CPU. A few steps of
stochastic gradient descent on a fixed regression task print the loss
going down; no PyTorch is needed.

    .venv/bin/python examples/train_numpy.py
"""

from __future__ import annotations

import time

import numpy as np

import tcdialect
from tcdialect.autodiff import grad

MLP_LOSS = """
def mlp_loss(float(B, M) X, float(N, M) W1, float(N) B1,
             float(P, N) W2, float(P) B2, float(B, P) T) -> (L) {
    H(b, n) +=! X(b, r_m) * W1(n, r_m)
    H(b, n) = tanh(H(b, n) + B1(n))
    Y(b, p) +=! H(b, r_n) * W2(p, r_n)
    Y(b, p) = Y(b, p) + B2(p)
    L +=! (Y(r_b, r_p) - T(r_b, r_p)) * (Y(r_b, r_p) - T(r_b, r_p)) / float(B)
}
"""


def main() -> None:
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    batch, m, n, p = 64, 8, 16, 2
    f32 = np.float32
    x = rng.uniform(-1.0, 1.0, (batch, m)).astype(f32)
    target = np.stack(
        [np.sin(2.0 * x[:, 0]) * x[:, 1], np.cos(x[:, 2] + x[:, 3])], axis=1
    ).astype(f32)
    params = {
        "W1": (rng.standard_normal((n, m)) / np.sqrt(m)).astype(f32),
        "B1": np.zeros(n, f32),
        "W2": (rng.standard_normal((p, n)) / np.sqrt(n)).astype(f32),
        "B2": np.zeros(p, f32),
    }
    names = list(params)

    loss = tcdialect.define(MLP_LOSS)
    loss_grad = grad(loss, wrt=names)  # mlp_loss_grad(X, W1, ..., T, d_L)
    one = np.ones((), f32)

    lr = 0.2
    value = np.zeros((), f32)  # outputs are written in place (`out=`)
    grads = [np.empty_like(v) for v in params.values()]
    losses: list[float] = []
    for step in range(60):
        args = [x, *params.values(), target]
        loss(*args, out=value)
        loss_grad(*args, one, out=grads)
        for name, g in zip(names, grads):
            params[name] -= lr * g
        losses.append(float(value))
        if step % 10 == 0:
            print(f"step {step:3d}  loss {float(value):.5f}")
    loss(x, *params.values(), target, out=value)
    final = float(value)
    print(f"final     loss {final:.5f}  ({time.perf_counter() - start:.1f} s)")
    assert final < 0.5 * losses[0], "the loss did not go down"


if __name__ == "__main__":
    main()
