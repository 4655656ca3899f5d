"""Recurrences: an Elman RNN and an LSTM layer over T steps, one TC definition each.

Each definition runs the whole sequence (docs/language-notes.md,
"Recurrences"): the input projection of every step is one parallel
statement, then a `for t in 1:T + 1 { ... }` block computes step t from step
t - 1. Both are compiled for this CPU with `tcdialect.define` and checked
against the same networks written step by step in NumPy (PyTorch's `nn.RNN`
and `nn.LSTM` conventions: tanh RNN; LSTM gates i, f, g, o; `h[0]` is the
initial state, `h[1:]` PyTorch's output). `bench/recurrent.py` times them
against `nn.RNN` / `nn.LSTM`.

    .venv/bin/python examples/rnn.py
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tcdialect

Arr = np.ndarray[Any, Any]

#: Elman RNN: h(t) = tanh(Wh h(t - 1) + Wx x(t - 1) + bias), h(0) = H0.
RNN = """
def rnn(float(T, B, I) X, float(B, N) H0, float(N, I) Wx, float(N, N) Wh,
        float(N) bias) -> (h) {
    xw(t, b, n) +=! Wx(n, r_i) * X(t, b, r_i)
    h(t, b, n) = H0(b, n) where t in 0:T + 1
    for t in 1:T + 1 {
        p(t, b, n) +=! Wh(n, r_k) * h(t - 1, b, r_k)
        h(t, b, n) = tanh(p(t, b, n) + xw(t - 1, b, n) + bias(n))
    }
}
"""

#: LSTM layer: gates z(t, g) = Wx(g) x(t - 1) + Wh(g) h(t - 1) + bias(g) for
#: g = i, f, g, o; c(t) = f c(t - 1) + i tanh(g); h(t) = o tanh(c(t)).
LSTM = """
def lstm(float(T, B, I) X, float(B, N) H0, float(B, N) C0, float(4, N, I) Wx,
         float(4, N, N) Wh, float(4, N) bias) -> (h, c) {
    xw(t, g, b, n) +=! Wx(g, n, r_i) * X(t, b, r_i)
    h(t, b, n) = H0(b, n) where t in 0:T + 1
    c(t, b, n) = C0(b, n) where t in 0:T + 1
    for t in 1:T + 1 {
        z(t, g, b, n) +=! Wh(g, n, r_k) * h(t - 1, b, r_k)
        z(t, g, b, n) = z(t, g, b, n) + xw(t - 1, g, b, n) + bias(g, n)
        c(t, b, n) = f * c(t - 1, b, n) + i * tanh(z(t, 2, b, n))
            where i = 1.0 / (1.0 + exp(-z(t, 0, b, n))),
                  f = 1.0 / (1.0 + exp(-z(t, 1, b, n)))
        h(t, b, n) = tanh(c(t, b, n)) / (1.0 + exp(-z(t, 3, b, n)))
    }
}
"""


def rnn_numpy(X: Arr, H0: Arr, Wx: Arr, Wh: Arr, bias: Arr) -> Arr:
    """The RNN step by step: (T + 1, B, N), h[0] = H0."""
    xw = X @ Wx.T + bias
    h = [H0]
    for t in range(len(X)):
        h.append(np.tanh(h[-1] @ Wh.T + xw[t]))
    return np.stack(h)


def lstm_numpy(
    X: Arr, H0: Arr, C0: Arr, Wx: Arr, Wh: Arr, bias: Arr
) -> tuple[Arr, Arr]:
    """The LSTM step by step: h and c, (T + 1, B, N) each."""

    def sigmoid(v: Arr) -> Arr:
        return 1 / (1 + np.exp(-v))

    xw = np.einsum("gni,tbi->tgbn", Wx, X) + bias[:, None, :]
    h, c = [H0], [C0]
    for t in range(len(X)):
        z = xw[t] + np.einsum("gnk,bk->gbn", Wh, h[-1])
        c.append(sigmoid(z[1]) * c[-1] + sigmoid(z[0]) * np.tanh(z[2]))
        h.append(sigmoid(z[3]) * np.tanh(c[-1]))
    return np.stack(h), np.stack(c)


def rnn_inputs(rng: np.random.Generator, T: int, B: int, I: int, N: int) -> list[Arr]:
    s = 1 / np.sqrt(N)  # PyTorch's initialisation range
    return [
        rng.standard_normal((T, B, I)).astype(np.float32),
        rng.standard_normal((B, N)).astype(np.float32) * 0.1,
        rng.uniform(-s, s, (N, I)).astype(np.float32),
        rng.uniform(-s, s, (N, N)).astype(np.float32),
        rng.uniform(-s, s, N).astype(np.float32),
    ]


def lstm_inputs(rng: np.random.Generator, T: int, B: int, I: int, N: int) -> list[Arr]:
    s = 1 / np.sqrt(N)
    return [
        rng.standard_normal((T, B, I)).astype(np.float32),
        rng.standard_normal((B, N)).astype(np.float32) * 0.1,
        rng.standard_normal((B, N)).astype(np.float32) * 0.1,
        rng.uniform(-s, s, (4, N, I)).astype(np.float32),
        rng.uniform(-s, s, (4, N, N)).astype(np.float32),
        rng.uniform(-s, s, (4, N)).astype(np.float32),
    ]


def main() -> None:
    rng = np.random.default_rng(0)
    T, B, I, N = 16, 4, 32, 64
    rnn = tcdialect.define(RNN)
    args = rnn_inputs(rng, T, B, I, N)
    h = rnn(*args)
    assert isinstance(h, np.ndarray)
    err = float(np.abs(h - rnn_numpy(*args)).max())
    print(f"rnn  T={T} B={B} I={I} N={N}: h {h.shape}, max |TC - NumPy| = {err:.1e}")
    assert err < 1e-4
    lstm = tcdialect.define(LSTM)
    args = lstm_inputs(rng, T, B, I, N)
    h, c = lstm(*args)
    want_h, want_c = lstm_numpy(*args)
    err = float(max(np.abs(h - want_h).max(), np.abs(c - want_c).max()))
    print(f"lstm T={T} B={B} I={I} N={N}: h, c {h.shape}, max |TC - NumPy| = {err:.1e}")
    assert err < 1e-4


if __name__ == "__main__":
    main()
