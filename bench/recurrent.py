"""One compiled kernel over the whole sequence: TC's RNN and LSTM against
PyTorch's `nn.RNN` / `nn.LSTM` and NumPy, on the CPU.

::

    .venv/bin/python -m bench.recurrent [--threads N] [--tune-budget-s S]
        [--out bench/RESULTS-recurrent.md]

The TC definitions are `examples/rnn.py`'s (docs/language-notes.md,
"Recurrences"): each is one `tcdialect.define` kernel that runs all T steps
(the input projection of every step, then the recurrence). PyTorch gets the
same weights (`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`; `bias_hh_l0` = 0)
and runs under `torch.no_grad()`; NumPy is the step loop of `examples/rnn.py`
(one BLAS matmul per step). Every output is checked against NumPy before
timing. Times are medians of repeated calls (the kernels compiled and warm,
outputs preallocated for TC), all on the same number of threads (NumPy's
BLAS limited with threadpoolctl). Needs torch and threadpoolctl.

With `--tune-budget-s S` each kernel is also autotuned for S seconds at each
size (in a temporary cache) and timed with the options found, their
`threads` set to the run's: the "TC tuned" column.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tcdialect
from bench.tuning import cache_env
from examples.rnn import (  # the repository root is on the path with -m
    LSTM,
    RNN,
    lstm_inputs,
    lstm_numpy,
    rnn_inputs,
    rnn_numpy,
)
from tcdialect.backend.cpu.options import CpuOptions

#: (T, B, I, N) per row: the issue's size and a smaller one.
SIZES = [(64, 16, 256, 256), (16, 4, 64, 64)]


def median_ms(fn: Callable[[], Any], budget_s: float = 2.0) -> float:
    fn()  # warm up
    times: list[float] = []
    spent = 0.0
    while len(times) < 5 or (spent < budget_s and len(times) < 50):
        start = time.perf_counter()
        fn()
        dt = time.perf_counter() - start
        times.append(dt)
        spent += dt
    return 1e3 * float(np.median(times))


def torch_rnn(args: list[Any], lstm: bool) -> tuple[Callable[[], Any], Any]:
    """A call of `nn.RNN`/`nn.LSTM` with the weights of `args`, and a
    function of its result giving h (T + 1, B, N) (and c for the LSTM)."""
    import torch

    X = torch.from_numpy(args[0])
    I = args[0].shape[2]
    if lstm:
        _, H0, C0, Wx, Wh, bias = args
        N = H0.shape[1]
        net = torch.nn.LSTM(I, N)
        state: Any = (torch.from_numpy(H0)[None], torch.from_numpy(C0)[None])
    else:
        _, H0, Wx, Wh, bias = args
        N = H0.shape[1]
        net = torch.nn.RNN(I, N)
        state = torch.from_numpy(H0)[None]
    params = dict(net.named_parameters())
    with torch.no_grad():
        params["weight_ih_l0"].copy_(torch.from_numpy(Wx.reshape(-1, I)))
        params["weight_hh_l0"].copy_(torch.from_numpy(Wh.reshape(-1, N)))
        params["bias_ih_l0"].copy_(torch.from_numpy(bias.reshape(-1)))
        params["bias_hh_l0"].zero_()

    def call() -> Any:
        with torch.no_grad():
            return net(X, state)

    def h_of(result: Any) -> Arr:
        out, _ = result
        return np.concatenate([args[1][None], out.numpy()])

    return call, h_of


Arr = np.ndarray[Any, Any]


def tuned_ms(
    src: str, args: list[Arr], threads: int, budget_s: float
) -> tuple[float, str]:
    """The time of `src` with the options that `budget_s` seconds of
    autotuning find for `args` (threads set to `threads`), and what they
    change."""
    from tcdialect.tune.space import changed_fields

    base = CpuOptions(threads=threads)
    with tempfile.TemporaryDirectory() as tmp, cache_env(Path(tmp)):
        best = tcdialect.define(src, options=base).autotune(
            *args, budget_s=budget_s, verbose=False
        )
    options = dataclasses.replace(best, threads=threads)
    kernel = tcdialect.define(src, options=options)
    out: Any = kernel(*args)
    return median_ms(lambda: kernel(*args, out=out)), changed_fields(options, base)


def run(threads: int, budget_s: float = 0.0) -> list[dict[str, Any]]:
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(threads)  # NumPy's BLAS
    options = CpuOptions(threads=threads)
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    for name, src, make, ref in (
        ("RNN", RNN, rnn_inputs, rnn_numpy),
        ("LSTM", LSTM, lstm_inputs, lstm_numpy),
    ):
        kernel = tcdialect.define(src, options=options)
        for T, B, I, N in SIZES:
            args = make(rng, T, B, I, N)
            want = ref(*args)
            want_h = want[0] if isinstance(want, tuple) else want
            got = kernel(*args)
            outs: tuple[Arr, ...] = got if isinstance(got, tuple) else (got,)
            call, h_of = torch_rnn(args, lstm=name == "LSTM")
            err_tc = float(np.abs(outs[0] - want_h).max())
            err_torch = float(np.abs(h_of(call()) - want_h).max())
            assert err_tc < 1e-4 and err_torch < 1e-4, (name, err_tc, err_torch)
            out: Any = got  # the outputs, written again in place
            ms_tc = median_ms(lambda: kernel(*args, out=out))
            ms_torch = median_ms(call)
            ms_numpy = median_ms(lambda: ref(*args))
            ms_tuned, changed = (
                tuned_ms(src, args, threads, budget_s) if budget_s > 0 else (None, "")
            )
            rows.append(
                {
                    "net": name,
                    "T": T,
                    "B": B,
                    "I": I,
                    "N": N,
                    "tc": ms_tc,
                    "torch": ms_torch,
                    "numpy": ms_numpy,
                    "tuned": ms_tuned,
                    "changed": changed,
                    "err_tc": err_tc,
                    "err_torch": err_torch,
                }
            )
            print(
                f"{name:4} T={T} B={B} I={I} N={N}: TC {ms_tc:.2f} ms, "
                f"torch {ms_torch:.2f} ms, NumPy {ms_numpy:.2f} ms"
                + (f", TC tuned {ms_tuned:.2f} ms ({changed})" if ms_tuned else ""),
                flush=True,
            )
    return rows


def table(rows: list[dict[str, Any]], threads: int) -> str:
    import torch

    lines = [
        "# Recurrent networks on the CPU: one TC kernel over the whole sequence",
        "",
        f"Machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; {threads} thread(s) for TC and PyTorch "
        f"{torch.__version__} (NumPy {np.__version__}). Medians of repeated warm "
        "calls, float32; `python -m bench.recurrent`.",
        "",
        "| net | T | B | I | N | TC (ms) | TC tuned (ms) | torch nn (ms) "
        "| NumPy loop (ms) | torch / TC | torch / TC tuned "
        "| max abs err TC, torch vs NumPy |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        tuned = r.get("tuned")
        tuned_cells = (
            (f"{tuned:.2f}", f"{r['torch'] / tuned:.2f}") if tuned else ("-", "-")
        )
        lines.append(
            f"| {r['net']} | {r['T']} | {r['B']} | {r['I']} | {r['N']} "
            f"| {r['tc']:.2f} | {tuned_cells[0]} | {r['torch']:.2f} "
            f"| {r['numpy']:.2f} | {r['torch'] / r['tc']:.2f} | {tuned_cells[1]} "
            f"| {r['err_tc']:.1e}, {r['err_torch']:.1e} |"
        )
    changed = [r for r in rows if r.get("changed") not in (None, "", "(default)")]
    if changed:
        lines += ["", "Tuned options (what they change):", ""]
        lines += [
            f"- {r['net']} {r['T']}x{r['B']}x{r['I']}x{r['N']}: {r['changed']}"
            for r in changed
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tune-budget-s", type=float, default=0.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = run(args.threads, args.tune_budget_s)
    text = table(rows, args.threads)
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
