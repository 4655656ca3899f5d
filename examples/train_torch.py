"""Train a small MLP with torch.optim: TC forward, derived TC backward.

The whole two-layer perceptron is one TC definition; PyTorch sees it as one
op (`tcdialect.torch_ops`) whose backward is the kernel that
`tcdialect.autodiff.grad` derives for the weights (the inputs that require
grad; the data `X` does not, so no gradient is computed for it). The loss,
the optimizer and the data are plain PyTorch. Before training, the TC
gradients are checked against PyTorch's autograd of the same model.

    .venv/bin/python examples/train_torch.py             # eager
    .venv/bin/python examples/train_torch.py --compile   # in torch.compile(fullgraph=True)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import torch

import tcdialect

MLP = """
def mlp(float(B, I) X, float(H, I) W1, float(H) b1, float(C, H) W2, float(C) b2)
    -> (Y) {
    h(n, j) +=! X(n, r_i) * W1(j, r_i)
    h(n, j) = max(h(n, j) + b1(j), 0.0)
    Y(n, c) +=! h(n, r_j) * W2(c, r_j)
    Y(n, c) = Y(n, c) + b2(c)
}
"""


def torch_mlp(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    return torch.relu(x @ w1.t() + b1) @ w2.t() + b2


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Train a small MLP: TC forward and backward."
    )
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--compile", action="store_true", help="torch.compile the step")
    args = parser.parse_args()

    torch.manual_seed(0)
    batch, features, hidden, classes = 64, 16, 32, 4
    x = torch.randn(batch, features)
    labels = (x @ torch.randn(features, classes)).argmax(1)
    params = [
        (torch.randn(hidden, features) / features**0.5).requires_grad_(),
        torch.zeros(hidden, requires_grad=True),
        (torch.randn(classes, hidden) / hidden**0.5).requires_grad_(),
        torch.zeros(classes, requires_grad=True),
    ]
    mlp: Any = tcdialect.define(MLP)  # called on tensors, returns tensors

    def loss_of(model: Any) -> Any:
        return torch.nn.functional.cross_entropy(model(x, *params), labels)

    # The derived gradients against PyTorch's autograd of the same model.
    tc_grads = torch.autograd.grad(loss_of(mlp), params)
    torch_grads = torch.autograd.grad(loss_of(torch_mlp), params)
    error = max((a - b).abs().max().item() for a, b in zip(tc_grads, torch_grads))
    print(f"max |TC gradient - PyTorch gradient| = {error:.2e}")

    optimizer = torch.optim.Adam(params, lr=0.02)
    compute_loss = lambda: loss_of(mlp)  # noqa: E731
    if args.compile:
        compute_loss = torch.compile(compute_loss, fullgraph=True)
    losses: list[float] = []
    for i in range(args.steps):
        optimizer.zero_grad()
        loss = compute_loss()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if i % 5 == 0 or i == args.steps - 1:
            print(f"step {i:3d}  loss {losses[-1]:.4f}")
    went_down = losses[-1] < 0.5 * losses[0]
    print("the loss went down" if went_down else "the loss did NOT go down")
    return 0 if went_down and error < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
