"""The GPU benchmark's Markdown report, rendered from the state (`state.py`).

One table row per kernel: size, compulsory MB and GFLOP, the roofline bound
in µs with the side that binds (`mem`: bytes / copy bandwidth, `flop`:
flops / SGEMM rate; the better of the start and end measurements), the
median µs of ours, PyTorch eager and `torch.compile`, each over the bound
(×bound, 1.0 = at the bound), our speedup over the faster correct peer
(above 1 = we win), each column's normwise max relative error against the
float64 reference (ERR above `TOLERANCE`), and our first call in seconds
(define, cold compile, load, one run). `(L2)` after the MB marks a kernel
whose compulsory bytes fit in the 50 MB L2. Failures and skips are short
messages in the cells, explained in the notes under the table.

Pure: no torch, so the supervisor renders a report after its worker died.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from bench.harness import TOLERANCE

IMPLS = ("ours", "eager", "compile")

HEADER = (
    "| kernel | size | MB | GFLOP | bound µs | ours µs | eager µs | compile µs "
    "| ours ×bound | eager ×bound | compile ×bound | ours speedup vs best peer "
    "| ours err | eager err | compile err | ours 1st call s |"
)


def impl_ok(impl: dict[str, Any]) -> bool:
    """Ran, was timed, and matches the reference."""
    return (
        impl.get("error") is None
        and impl.get("median_s") is not None
        and impl.get("rel_err") is not None
        and impl["rel_err"] <= TOLERANCE
    )


def best_limits(state: dict[str, Any]) -> tuple[float, float]:
    """(copy GB/s, SGEMM TFLOP/s): the better of the start and end probes."""
    found = [lim for lim in (state.get("limits_start"), state.get("limits_end")) if lim]
    copy = max((lim["copy_gbs"] for lim in found), default=0.0)
    sgemm = max((lim["sgemm_tflops"] for lim in found), default=0.0)
    return copy, sgemm


def bound(
    row: dict[str, Any], copy_gbs: float, sgemm_tflops: float
) -> tuple[float, str]:
    """The roofline bound (seconds; 0 without limits) and the side that binds."""
    t_mem = row["nbytes"] / (copy_gbs * 1e9) if copy_gbs > 0 else 0.0
    t_flop = row["flops"] / (sgemm_tflops * 1e12) if sgemm_tflops > 0 else 0.0
    return (t_mem, "mem") if t_mem >= t_flop else (t_flop, "flop")


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.3g}" if us < 1000 else f"{us:.0f}"


def _cell_text(text: str) -> str:
    return text.replace("|", "/")


def time_cell(impl: dict[str, Any]) -> str:
    """Median µs, `ERR ...` when wrong or failed, the reason when skipped."""
    if impl.get("error") is not None:
        return _cell_text(f"ERR: {impl['error']}")
    if impl.get("skipped") is not None:
        return "off" if impl["skipped"].startswith("off") else "skipped"
    if impl.get("median_s") is None:
        return "-"
    if not impl_ok(impl):
        return f"ERR {_us(impl['median_s'])}"
    return _us(impl["median_s"])


def ratio_cell(impl: dict[str, Any], bound_s: float) -> str:
    """Time over the bound, for a correct implementation."""
    if not impl_ok(impl) or bound_s <= 0:
        return "-"
    return f"{impl['median_s'] / bound_s:.1f}"


def err_cell(impl: dict[str, Any]) -> str:
    """The relative error, `ERR` above the tolerance."""
    err = impl.get("rel_err")
    if err is None:
        return "-"
    return f"{err:.1e}" if err <= TOLERANCE else f"ERR {err:.1e}"


def speedup(row: dict[str, Any]) -> float | None:
    """Best correct peer's time over ours (above 1: ours is faster)."""
    ours = row["impls"]["ours"]
    peers = [row["impls"][n] for n in ("eager", "compile")]
    best = min((p["median_s"] for p in peers if impl_ok(p)), default=None)
    if not impl_ok(ours) or best is None:
        return None
    return best / ours["median_s"]


def _size(sizes: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def table(state: dict[str, Any]) -> str:
    """The main table, one row per kernel of the run in table order."""
    copy, sgemm = best_limits(state)
    lines = [HEADER, "|" + "---|" * 16]
    for name in state["kernels"]:
        row = state["rows"].get(name)
        if row is None:
            continue
        impls = row["impls"]
        b, side = bound(row, copy, sgemm)
        sp = speedup(row)
        first = impls["ours"].get("first_call_s")
        status = "" if row["status"] == "done" else f" ({row['status']})"
        cells = [
            f"{name}{status}",
            _size(row["sizes"]),
            f"{row['nbytes'] / 1e6:.1f}" + (" (L2)" if row["fits_l2"] else ""),
            f"{row['flops'] / 1e9:.3g}",
            f"{_us(b)} {side}" if b > 0 else "-",
            *(time_cell(impls[n]) for n in IMPLS),
            *(ratio_cell(impls[n], b) for n in IMPLS),
            f"{sp:.2f}" if sp is not None else "-",
            *(err_cell(impls[n]) for n in IMPLS),
            f"{first:.2f}" if first is not None else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def notes(state: dict[str, Any]) -> list[str]:
    """One line per row that has something to explain."""
    out = []
    for name in state["kernels"]:
        row = state["rows"].get(name)
        if row is None:
            continue
        parts = [row["note"]] if row.get("note") else []
        for n in IMPLS:
            impl = row["impls"][n]
            if impl.get("skipped") and not impl["skipped"].startswith("off"):
                parts.append(f"compile {impl['skipped']}")
            if impl.get("error"):
                parts.append(f"{n}: {impl.get('detail') or impl['error']}")
        parts += row.get("notes", [])
        counts = [len(row["impls"][n].get("samples") or []) for n in IMPLS]
        if any(counts):
            parts.append("samples " + "/".join(str(c) for c in counts))
        c = row["impls"]["compile"].get("first_call_s")
        if c is not None:
            parts.append(f"torch.compile first call {c:.1f} s")
        out.append(f"- **{name}**: " + "; ".join(parts))
    return out


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x > 0]
    return math.exp(statistics.mean(math.log(x) for x in xs)) if xs else None


def summary(state: dict[str, Any]) -> str:
    """Geometric means of ×bound and of our speedup; correctness; compile times."""
    copy, sgemm = best_limits(state)
    rows = [r for r in state["rows"].values() if r["status"] == "done"]
    parts = []
    for n in IMPLS:
        ratios = []
        for r in rows:
            b, _ = bound(r, copy, sgemm)
            if impl_ok(r["impls"][n]) and b > 0:
                ratios.append(r["impls"][n]["median_s"] / b)
        g = _geomean(ratios)
        if g is not None:
            parts.append(f"{n} ×{g:.1f} over {len(ratios)} kernels")
    text = "Geometric mean of time / bound: " + ("; ".join(parts) or "-") + "."
    sp = [s for r in rows if (s := speedup(r)) is not None]
    if (g := _geomean(sp)) is not None:
        wins = sum(1 for s in sp if s > 1)
        text += (
            f" Ours vs the best peer: geometric mean speedup {g:.2f} over "
            f"{len(sp)} kernels (faster on {wins})."
        )
    ok = sum(1 for r in rows if impl_ok(r["impls"]["ours"]))
    text += f" Ours correct and timed on {ok} of {len(state['kernels'])} kernels."
    firsts = [
        r["impls"]["ours"]["first_call_s"]
        for r in rows
        if r["impls"]["ours"].get("first_call_s") is not None
    ]
    if firsts:
        text += (
            f" Ours' first calls (define, cold compile, load, one run): median "
            f"{statistics.median(firsts):.2f} s, max {max(firsts):.2f} s."
        )
    return text


def _limits_line(state: dict[str, Any]) -> str:
    def one(label: str, lim: dict[str, Any] | None) -> str:
        if not lim:
            return f"{label} -"
        return f"{label} {lim['copy_gbs']:.0f} GB/s, {lim['sgemm_tflops']:.1f} TFLOP/s"

    start, end = state.get("limits_start"), state.get("limits_end")
    n = int((start or end or {}).get("sgemm_n", 8192))
    gib = (start or end or {}).get("copy_bytes", 2**30) / 2**30
    return (
        f"Copy bandwidth ({gib:g} GiB device-to-device copy, read + write counted) "
        f"and SGEMM (torch.mm {n}², TF32 off): "
        + one("start", start)
        + "; "
        + one("end", end)
        + ". The bound is max(bytes / copy bandwidth, flops / SGEMM) with the "
        "better of the two."
    )


def markdown(state: dict[str, Any]) -> str:
    """The whole report."""
    m = state.get("machine") or {}
    cfg = state["config"]
    device = m.get("device", "?")
    head = [
        f"# GPU benchmark: tcdialect vs PyTorch eager and torch.compile on {device}",
        "",
        "Written by `python -m bench.cuda` (bench/README.md); numbers are ratios "
        "within this run.",
        "",
        "Machine: " + "; ".join(f"{k} {v}" for k, v in m.items() if k != "device"),
        "",
        _limits_line(state),
        "",
        "Method: inputs uniform in [-1, 1) generated on the device; each "
        "implementation called once (checked against a float64 reference computed "
        "with torch on the device: normwise max relative error, ERR above "
        f"{TOLERANCE:g}), once more to size its sample, then up to "
        f"{cfg['calls']} timed calls interleaved with the order rotated each round, "
        f"each after a {_flush_mib(cfg):g} MiB `zero_()` that evicts the L2 and "
        "timed by CUDA events around the call alone, the device synchronised "
        "after each (a launch that outlasts the flush has the excess in its "
        "time); medians. TF32 off. Ours: "
        f"`tcdialect.define(src, target={_target(cfg)!r}, options="
        + ("None" if cfg["options"] == "default" else f"preset {cfg['options']!r}")
        + ")` called on torch tensors into preallocated `out=` tensors; eager and "
        "`torch.compile(fn, dynamic=False)` return new tensors (the caching "
        "allocator's work is in their time). `(L2)`: the compulsory bytes fit in "
        "the 50 MB L2 (TC's size kept; the flush still sends the first reads to "
        "HBM).",
        "",
        f"Budget {cfg['budget_s']:.0f} s, elapsed {state.get('elapsed_s', 0):.0f} s"
        + (", compile column off" if not cfg["compile"] else "")
        + (", quick sizes" if cfg["quick"] else "")
        + ".",
    ]
    done = sum(1 for r in state["rows"].values() if r["status"] == "done")
    if not state.get("finished"):
        head += [
            "",
            f"**Partial run**: {done} of {len(state['kernels'])} kernels measured; "
            "the run stopped before its end (see the notes and events).",
        ]
    body = ["", table(state), "", summary(state), "", "Notes:", "", *notes(state)]
    if state.get("events"):
        body += ["", "Events:", "", *(f"- {e}" for e in state["events"])]
    return "\n".join(head + body) + "\n"


def stdout_text(state: dict[str, Any]) -> str:
    """The report without the method and the notes (for a log's tail)."""
    m = state.get("machine") or {}
    lines = [
        f"{m.get('device', '?')} (compute capability {m.get('capability', '?')}), "
        f"torch {m.get('torch', '?')}, tcdialect {m.get('tcdialect commit', '?')}",
        _limits_line(state),
        table(state),
        summary(state),
    ]
    if not state.get("finished"):
        lines.append("PARTIAL RUN: see the notes and events in the report.")
    lines += [f"event: {e}" for e in state.get("events", [])]
    return "\n".join(lines)


def _target(cfg: dict[str, Any]) -> str:
    return "cuda" if cfg["device"] == "cuda" else "cpu"


def _flush_mib(cfg: dict[str, Any]) -> float:
    return 256.0 if cfg["device"] == "cuda" else 32.0


def write(path: Path, state: dict[str, Any]) -> None:
    """Write the report to `path` (through a temporary file, atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(markdown(state))
    tmp.replace(path)
