"""The GPU simulator (`tcdialect.runtime.cuda_sim`) on hand-written `gpu`-stage IR.

Most tests write a module of the `gpu` stage (docs/gpu.md) by hand: a host
function launching one kernel on a constant grid and block, the kernel's body
in the text (the `gpu` ops in generic form, through `$macros`). Correct
kernels are checked against NumPy; wrong ones (a missing barrier, a barrier
in divergent code, out-of-bounds accesses, two threads writing one element,
...) must raise a `TCError` naming the kernel and the memory. The last ones
run definitions end to end (`define(src, target="cuda-sim")`) against the
reference interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

import tcdialect
from tcdialect import reference
from tcdialect.arguments import signature_of
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import make_context
from tcdialect.runtime.cuda_sim import SimDevice, SimLauncher

Arr = np.ndarray[Any, Any]

MACROS = {
    **{
        f"{name}_{d}": f'"gpu.{op}"() <{{dimension = #gpu<dim {d}>}}> : () -> index'
        for name, op in (
            ("tid", "thread_id"),
            ("bid", "block_id"),
            ("bdim", "block_dim"),
            ("gdim", "grid_dim"),
        )
        for d in "xyz"
    },
    "lane_id": '"gpu.lane_id"() : () -> index',
    "barrier": '"gpu.barrier"() : () -> ()',
}


def shuffle(mode: str, value: str, offset: str, width: str, ty: str = "f32") -> str:
    """The right-hand side of `%r, %ok = gpu.shuffle mode value, offset, width`."""
    return (
        f'"gpu.shuffle"({value}, {offset}, {width}) <{{mode = #gpu<shuffle_mode '
        f"{mode}>}}> : ({ty}, i32, i32) -> ({ty}, i1)"
    )


def module(
    params: str,
    body: str,
    *,
    grid: Sequence[int] = (1, 1, 1),
    block: Sequence[int] = (32, 1, 1),
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    sizes: Sequence[str] = (),
    checked: Sequence[str] = (),
) -> ModuleOp:
    """A module whose host function @f launches kernel @k (body `body`, the
    `gpu` ops as `$macros`) once on `grid` x `block`, passing its parameters."""
    names, types = [], []
    for p in params.split(", %"):
        name, ty = p.lstrip("%").split(": ")
        names.append(f"%{name}")
        types.append(ty)
    listed = lambda xs: "[" + ", ".join(f'"{x}"' for x in xs) + "]"  # noqa: E731
    attrs = f"tc.inputs = {listed(inputs)}, tc.outputs = {listed(outputs)}, tc.sizes = {listed(sizes)}"
    if checked:
        attrs += f", tc.checked = {listed(checked)}"
    dims = [*grid, *(1,) * (3 - len(grid)), *block, *(1,) * (3 - len(block))]
    consts = "\n".join(
        f"    %d{i} = arith.constant {d} : index" for i, d in enumerate(dims)
    )
    operands = ", ".join([f"%d{i}" for i in range(6)] + names)
    signature = ", ".join(["index"] * 6 + types)
    known = ", ".join(str(d) for d in dims[3:])
    text = f"""
builtin.module attributes {{gpu.container_module}} {{
  func.func @f({params}) attributes {{{attrs}}} {{
{consts}
    "gpu.launch_func"({operands}) <{{kernel = @f_kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, {len(names)}, 0>}}> : ({signature}) -> ()
    func.return
  }}
  "gpu.module"() <{{sym_name = "f_kernels"}}> ({{
    "gpu.func"() <{{function_type = ({", ".join(types)}) -> (), known_block_size = array<i32: {known}>}}> ({{
    ^bb0({params}):
{Template(body).substitute(MACROS)}
      "gpu.return"() : () -> ()
    }}) {{sym_name = "k", gpu.kernel}} : () -> ()
  }}) : () -> ()
}}
"""
    m = Parser(make_context(), text).parse_module()
    m.verify()
    return m


def run(
    m: ModuleOp, inputs: Sequence[Arr], outputs: Sequence[Arr], **sizes: int
) -> None:
    host = next(op for op in m.ops if isinstance(op, FuncOp))
    launcher = SimLauncher(m, host.sym_name.data, signature_of(host), CudaOptions())
    launcher(inputs, outputs, sizes)


def f32(*shape: int, seed: int = 0) -> Arr:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


# ------------------------------------------------------------------ numerics

VADD = """
      %bx = $bid_x
      %tx = $tid_x
      %gx = $gdim_x
      %bdx = $bdim_x
      %0 = arith.muli %bx, %bdx : index
      %lb = arith.addi %0, %tx : index
      %st = arith.muli %gx, %bdx : index
      scf.for %i = %lb to %N step %st {
        %a = memref.load %A[%i] : memref<?xf32>
        %b = memref.load %B[%i] : memref<?xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %C[%i] : memref<?xf32>
      }
"""
VADD_PARAMS = "%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>, %N: index"


@pytest.mark.parametrize("n", [0, 1, 95, 200, 1000])
def test_vector_add_with_a_grid_smaller_than_the_work(n: int) -> None:
    m = module(
        VADD_PARAMS, VADD, grid=(3,), block=(32,), inputs="AB", outputs="C", sizes="N"
    )
    A, B = f32(n), f32(n, seed=1)
    C = np.full(n, np.nan, np.float32)
    run(m, [A, B], [C], N=n)
    np.testing.assert_array_equal(C, A + B)


def test_two_dimensional_cyclic_mapping() -> None:
    body = """
      %by = $bid_y
      %bx = $bid_x
      %ty = $tid_y
      %tx = $tid_x
      %gy = $gdim_y
      %gx = $gdim_x
      %dy = $bdim_y
      %dx = $bdim_x
      %0 = arith.muli %by, %dy : index
      %i0 = arith.addi %0, %ty : index
      %si = arith.muli %gy, %dy : index
      %1 = arith.muli %bx, %dx : index
      %j0 = arith.addi %1, %tx : index
      %sj = arith.muli %gx, %dx : index
      %two = arith.constant 2.0 : f32
      scf.for %i = %i0 to %M step %si {
        scf.for %j = %j0 to %N step %sj {
          %a = memref.load %A[%i, %j] : memref<?x?xf32>
          %b = memref.load %B[%j, %i] : memref<?x?xf32>
          %p = arith.mulf %a, %two : f32
          %s = arith.addf %p, %b : f32
          memref.store %s, %C[%i, %j] : memref<?x?xf32>
        }
      }
"""
    params = "%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %M: index, %N: index"
    m = module(
        params, body, grid=(2, 3), block=(8, 4), inputs="AB", outputs="C", sizes="MN"
    )
    A, B = f32(29, 21), f32(21, 29, seed=1)
    C = np.zeros((29, 21), np.float32)
    run(m, [A, B], [C], M=29, N=21)
    np.testing.assert_array_equal(C, A * 2 + B.T)


BLOCK_SUM_PARAMS = "%X: memref<?xf32>, %P: memref<?xf32>, %N: index"


def block_sum(first_barrier: str = "$barrier", tree_barrier: str = "$barrier") -> str:
    """Each block of 64 threads sums its grid-stride share of X into P[block]:
    per-thread partial sums, then a tree in shared memory."""
    return f"""
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0.0 : f32
      %smem = memref.alloca() : memref<64xf32, 3 : i32>
      %bx = $bid_x
      %tx = $tid_x
      %gx = $gdim_x
      %bdx = $bdim_x
      %0 = arith.muli %bx, %bdx : index
      %lb = arith.addi %0, %tx : index
      %st = arith.muli %gx, %bdx : index
      %acc = scf.for %i = %lb to %N step %st iter_args(%a = %zero) -> (f32) {{
        %x = memref.load %X[%i] : memref<?xf32>
        %s = arith.addf %a, %x : f32
        scf.yield %s : f32
      }}
      memref.store %acc, %smem[%tx] : memref<64xf32, 3 : i32>
      {first_barrier}
      scf.for %k = %c0 to %c6 step %c1 {{
        %s = arith.shrui %c32, %k : index
        %lt = arith.cmpi ult, %tx, %s : index
        scf.if %lt {{
          %j = arith.addi %tx, %s : index
          %u = memref.load %smem[%tx] : memref<64xf32, 3 : i32>
          %v = memref.load %smem[%j] : memref<64xf32, 3 : i32>
          %w = arith.addf %u, %v : f32
          memref.store %w, %smem[%tx] : memref<64xf32, 3 : i32>
        }}
        {tree_barrier}
      }}
      %is0 = arith.cmpi eq, %tx, %c0 : index
      scf.if %is0 {{
        %r = memref.load %smem[%c0] : memref<64xf32, 3 : i32>
        memref.store %r, %P[%bx] : memref<?xf32>
      }}
"""


@pytest.mark.parametrize("n", [0, 50, 256, 1001])
def test_block_reduction_in_shared_memory(n: int) -> None:
    m = module(
        BLOCK_SUM_PARAMS,
        block_sum(),
        grid=(4,),
        block=(64,),
        inputs="X",
        outputs="P",
        sizes="N",
    )
    X = f32(n)
    P = np.zeros(4, np.float32)
    run(m, [X], [P], N=n)
    owner = np.arange(n) % 256 // 64
    want = [X[owner == b].astype(np.float64).sum() for b in range(4)]
    np.testing.assert_allclose(P, want, rtol=1e-5, atol=1e-5)


def test_many_blocks_run_in_chunks() -> None:
    m = module(
        BLOCK_SUM_PARAMS,
        block_sum(),
        grid=(40,),
        block=(64,),
        inputs="X",
        outputs="P",
        sizes="N",
    )
    X = f32(40 * 64)
    host = next(op for op in m.ops if isinstance(op, FuncOp))
    for max_lanes in (64, 640, 1 << 14):  # 1, 10 and every block at a time
        P = np.zeros(40, np.float32)
        device = SimDevice(max_lanes=max_lanes)
        SimLauncher(m, "f", signature_of(host), CudaOptions(), device)(
            [X], [P], {"N": len(X)}
        )
        np.testing.assert_allclose(
            P, X.reshape(40, 64).sum(axis=1), rtol=1e-5, atol=1e-5
        )


WARP_SUM = f"""
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %c32 = arith.constant 32 : index
      %c16i = arith.constant 16 : i32
      %c32i = arith.constant 32 : i32
      %tx = $$tid_x
      %v0 = memref.load %X[%tx] : memref<?xf32>
      %sum = scf.for %k = %c0 to %c5 step %c1 iter_args(%v = %v0) -> (f32) {{
        %ki = arith.index_cast %k : index to i32
        %off = arith.shrui %c16i, %ki : i32
        %o, %ok = {shuffle("xor", "%v", "%off", "%c32i")}
        %n = arith.addf %v, %o : f32
        scf.yield %n : f32
      }}
      %lane = $$lane_id
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {{
        %w = arith.divui %tx, %c32 : index
        memref.store %sum, %W[%w] : memref<?xf32>
      }}
""".replace("$$", "$")


def test_warp_sum_with_shuffles() -> None:
    m = module(
        "%X: memref<?xf32>, %W: memref<?xf32>",
        WARP_SUM,
        block=(96,),
        inputs="X",
        outputs="W",
    )
    X = f32(96)
    W = np.zeros(3, np.float32)
    run(m, [X], [W])
    np.testing.assert_allclose(W, X.reshape(3, 32).sum(axis=1), rtol=1e-5, atol=1e-6)


def expected_shuffle(
    mode: str, offset: int, width: int, threads: int
) -> tuple[Arr, Arr]:
    """Source thread and validity per thread (MLIR's gpu.shuffle)."""
    t = np.arange(threads)
    k = t % 32
    j = {
        "xor": k ^ offset,
        "down": k + offset,
        "up": k - offset,
        "idx": np.full_like(k, offset),
    }[mode]
    valid = (k < width) & (j >= 0) & (j < width)
    return np.where(valid, t - k + j, t), valid


@pytest.mark.parametrize(
    ("mode", "offset", "width"),
    [
        ("xor", 1, 32),
        ("xor", 8, 16),
        ("down", 3, 32),
        ("down", 4, 16),
        ("up", 5, 32),
        ("up", 1, 8),
        ("idx", 7, 32),
        ("idx", 20, 16),
    ],
)
def test_shuffle_modes(mode: str, offset: int, width: int) -> None:
    body = f"""
      %tx = $$tid_x
      %off = arith.constant {offset} : i32
      %w = arith.constant {width} : i32
      %v = memref.load %X[%tx] : memref<?xf32>
      %r, %ok = {shuffle(mode, "%v", "%off", "%w")}
      memref.store %r, %R[%tx] : memref<?xf32>
      %oki = arith.extui %ok : i1 to i32
      memref.store %oki, %V[%tx] : memref<?xi32>
""".replace("$$", "$")
    threads = 32 + width  # a full warp and a partial one of `width` threads
    params = "%X: memref<?xf32>, %R: memref<?xf32>, %V: memref<?xi32>"
    m = module(params, body, block=(threads,), inputs="X", outputs="RV")
    X = f32(threads)
    R, V = np.zeros(threads, np.float32), np.zeros(threads, np.int32)
    run(m, [X], [R, V])
    src, valid = expected_shuffle(mode, offset, width, threads)
    np.testing.assert_array_equal(R, X[src])
    np.testing.assert_array_equal(V, valid)


def test_atomic_add_and_returned_values() -> None:
    body = """
      %tx = $tid_x
      %bx = $bid_x
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %x = memref.load %X[%tx] : memref<?xf32>
      %old = "memref.atomic_rmw"(%x, %S, %c0) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
      %n = "memref.atomic_rmw"(%one, %Count, %c0) <{kind = 1 : i64}> : (i32, memref<?xi32>, index) -> i32
      %b = arith.constant 32 : index
      %g = arith.muli %bx, %b : index
      %t = arith.addi %g, %tx : index
      memref.store %n, %Ticket[%t] : memref<?xi32>
"""
    params = "%X: memref<?xf32>, %S: memref<?xf32>, %Count: memref<?xi32>, %Ticket: memref<?xi32>"
    m = module(
        params,
        body,
        grid=(3,),
        block=(32,),
        inputs="X",
        outputs=["S", "Count", "Ticket"],
    )
    X = f32(32)
    S, Count, Ticket = (
        np.zeros(1, np.float32),
        np.zeros(1, np.int32),
        np.zeros(96, np.int32),
    )
    run(m, [X], [S, Count, Ticket])
    np.testing.assert_allclose(S[0], 3 * X.astype(np.float64).sum(), rtol=1e-5)
    assert Count[0] == 96
    assert sorted(Ticket) == list(range(96))  # each thread saw a different old value


# Atomic updates and plain accesses of one element by different threads:
# thread 0 zeroes S[0] (STORE), every thread adds 1 atomically, thread 0
# reads S[0] into O[0] (LOAD); BARRIER is what lies between them.
ATOMIC_AFTER_STORE = """
      %tx = $tid_x
      %c0 = arith.constant 0 : index
      %is0 = arith.cmpi eq, %tx, %c0 : index
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      scf.if %is0 {
        memref.store %zero, %S[%c0] : memref<?xf32>
      }
      BARRIER1
      %old = "memref.atomic_rmw"(%one, %S, %c0) <{kind = 0 : i64}> : (f32, memref<?xf32>, index) -> f32
      BARRIER2
      scf.if %is0 {
        %s = memref.load %S[%c0] : memref<?xf32>
        memref.store %s, %O[%c0] : memref<?xf32>
      }
"""


def _atomic_after_store(barrier1: str, barrier2: str, grid: int = 1) -> None:
    body = ATOMIC_AFTER_STORE.replace("BARRIER1", barrier1)
    body = body.replace("BARRIER2", barrier2)
    params = "%S: memref<?xf32>, %O: memref<?xf32>"
    m = module(params, body, grid=(grid,), block=(64,), outputs=["S", "O"])
    S, O = np.full(1, 5.0, np.float32), np.zeros(1, np.float32)
    run(m, [], [S, O])
    assert S[0] == O[0] == 64


def test_atomic_updates_ordered_by_barriers_with_plain_accesses() -> None:
    _atomic_after_store("$barrier", "$barrier")


@pytest.mark.parametrize(
    ("barrier1", "barrier2", "grid", "race"),
    [
        ("", "$barrier", 1, r"updates atomically S\[0\], which thread .* wrote"),
        ("$barrier", "", 1, r"reads S\[0\], which .* updated atomically"),
        # thread 0 of block 1 zeroes what block 0 added to: no barrier helps
        ("$barrier", "$barrier", 2, r"S\[0\].*different blocks"),
    ],
)
def test_atomic_updates_race_with_unordered_plain_accesses(
    barrier1: str, barrier2: str, grid: int, race: str
) -> None:
    with pytest.raises(TCError, match=race):
        _atomic_after_store(barrier1, barrier2, grid)


def test_while_loop_with_per_thread_trip_counts() -> None:
    # Collatz steps of n = tid + 1: each thread leaves the loop at its own time.
    body = """
      %tx = $tid_x
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %n0 = arith.addi %tx, %c1 : index
      %r:2 = scf.while (%n = %n0, %s = %tx) : (index, index) -> (index, index) {
        %go = arith.cmpi ne, %n, %c1 : index
        scf.condition(%go) %n, %s : index, index
      } do {
      ^bb0(%m: index, %t: index):
        %odd = arith.remui %m, %c2 : index
        %isodd = arith.cmpi eq, %odd, %c1 : index
        %next = scf.if %isodd -> (index) {
          %a = arith.muli %m, %c3 : index
          %b = arith.addi %a, %c1 : index
          scf.yield %b : index
        } else {
          %h = arith.divui %m, %c2 : index
          scf.yield %h : index
        }
        %t1 = arith.addi %t, %c1 : index
        scf.yield %next, %t1 : index, index
      }
      %steps = arith.subi %r#1, %tx : index
      memref.store %steps, %O[%tx] : memref<?xindex>
"""
    m = module("%O: memref<?xindex>", body, block=(64,), outputs="O")
    O = np.zeros(64, np.int64)
    run(m, [], [O])

    def collatz(n: int) -> int:
        steps = 0
        while n != 1:
            n, steps = (3 * n + 1 if n % 2 else n // 2), steps + 1
        return steps

    assert O.tolist() == [collatz(n) for n in range(1, 65)]


def test_private_memory_is_per_thread() -> None:
    body = """
      %tx = $tid_x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %buf = memref.alloca() : memref<4xindex>
      scf.for %i = %c0 to %c4 step %c1 {
        %v = arith.muli %tx, %i : index
        memref.store %v, %buf[%i] : memref<4xindex>
      }
      %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %c0) -> (index) {
        %v = memref.load %buf[%i] : memref<4xindex>
        %s = arith.addi %a, %v : index
        scf.yield %s : index
      }
      memref.store %r, %O[%tx] : memref<?xindex>
"""
    m = module("%O: memref<?xindex>", body, block=(40,), outputs="O")
    O = np.zeros(40, np.int64)
    run(m, [], [O])
    assert O.tolist() == [6 * t for t in range(40)]


def test_private_memory_under_divergent_control_flow() -> None:
    body = """
      %tx = $tid_x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %buf = memref.alloca() : memref<2xindex>
      memref.store %tx, %buf[%c0] : memref<2xindex>
      %r = arith.remui %tx, %c3 : index
      %odd = arith.cmpi eq, %r, %c1 : index
      scf.if %odd {
        %t2 = arith.muli %tx, %c3 : index
        memref.store %t2, %buf[%c0] : memref<2xindex>
      }
      %v = memref.load %buf[%c0] : memref<2xindex>
      memref.store %v, %O[%tx] : memref<?xindex>
"""
    m = module("%O: memref<?xindex>", body, block=(40,), outputs="O")
    O = np.zeros(40, np.int64)
    run(m, [], [O])
    assert O.tolist() == [3 * t if t % 3 == 1 else t for t in range(40)]


def test_inputs_are_copied_to_the_device() -> None:
    body = """
      %tx = $tid_x
      %z = arith.constant 0.0 : f32
      memref.store %z, %X[%tx] : memref<?xf32>
      memref.store %z, %Y[%tx] : memref<?xf32>
"""
    m = module("%X: memref<?xf32>, %Y: memref<?xf32>", body, inputs="X", outputs="Y")
    X = f32(32)
    before = X.copy()
    run(m, [X], [np.ones(32, np.float32)])
    np.testing.assert_array_equal(X, before)


# ------------------------------------------------------------------ the host side

TWO_LAUNCHES = """
builtin.module attributes {gpu.container_module} {
  func.func @f(%X: memref<?xf32>, %Y: memref<?xf32>, %N: index) attributes {tc.inputs = ["X"], tc.outputs = ["Y"], tc.sizes = ["N"]} {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %g = arith.ceildivsi %N, %c32 : index
    %T = memref.alloc(%N) : memref<?xf32>
    "gpu.launch_func"(%g, %c1, %c1, %c32, %c1, %c1, %X, %T, %N) <{kernel = @f_kernels::@square, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}> : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    "gpu.launch_func"(%g, %c1, %c1, %c32, %c1, %c1, %T, %Y, %N) <{kernel = @f_kernels::@reverse, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0>}> : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    memref.dealloc %T : memref<?xf32>
    func.return
  }
  "gpu.module"() <{sym_name = "f_kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>, memref<?xf32>, index) -> (), known_block_size = array<i32: 32, 1, 1>}> ({
    ^bb0(%A: memref<?xf32>, %B: memref<?xf32>, %n: index):
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c32 = arith.constant 32 : index
      %0 = arith.muli %bx, %c32 : index
      %i = arith.addi %0, %tx : index
      %in = arith.cmpi slt, %i, %n : index
      scf.if %in {
        %a = memref.load %A[%i] : memref<?xf32>
        %s = arith.mulf %a, %a : f32
        memref.store %s, %B[%i] : memref<?xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "square", gpu.kernel} : () -> ()
    "gpu.func"() <{function_type = (memref<?xf32>, memref<?xf32>, index) -> (), known_block_size = array<i32: 32, 1, 1>}> ({
    ^bb0(%A: memref<?xf32>, %B: memref<?xf32>, %n: index):
      %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
      %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %0 = arith.muli %bx, %c32 : index
      %i = arith.addi %0, %tx : index
      %in = arith.cmpi slt, %i, %n : index
      scf.if %in {
        %last = arith.subi %n, %c1 : index
        %j = arith.subi %last, %i : index
        %a = memref.load %A[%j] : memref<?xf32>
        memref.store %a, %B[%i] : memref<?xf32>
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "reverse", gpu.kernel} : () -> ()
  }) : () -> ()
}
"""


def parse(text: str) -> ModuleOp:
    m = Parser(make_context(), text).parse_module()
    m.verify()
    return m


@pytest.mark.parametrize("n", [0, 1, 70])
def test_host_runs_launches_in_order_with_temporaries(n: int) -> None:
    # The second kernel reads what other blocks of the first wrote: launches
    # are ordered, so this is no race.
    X, Y = f32(n), np.zeros(n, np.float32)
    run(parse(TWO_LAUNCHES), [X], [Y], N=n)
    np.testing.assert_array_equal(Y, (X * X)[::-1])


def test_launch_must_match_known_block_size() -> None:
    m = module(VADD_PARAMS, VADD, block=(32,), inputs="AB", outputs="C", sizes="N")
    text = str(m).replace(
        "known_block_size = array<i32: 32, 1, 1>",
        "known_block_size = array<i32: 64, 1, 1>",
    )
    with pytest.raises(
        TCError,
        match=r"@k with a block of \(32, 1, 1\).*known_block_size is \(64, 1, 1\)",
    ):
        run(parse(text), [f32(4), f32(4)], [f32(4)], N=4)


def test_launch_with_too_many_threads() -> None:
    m = module("%O: memref<?xf32>", "", block=(32, 32, 2), outputs="O")
    with pytest.raises(TCError, match="2048 threads per block"):
        run(m, [], [f32(4)])


def test_unsupported_op_is_named_at_compile_time() -> None:
    body = """
      "memref.copy"(%A, %B) : (memref<?xf32>, memref<?xf32>) -> ()
"""
    m = module("%A: memref<?xf32>, %B: memref<?xf32>", body, inputs="A", outputs="B")
    with pytest.raises(TCError, match=r"kernel @k holds 'memref\.copy'"):
        run(m, [f32(4)], [f32(4)])


def test_shared_memory_budget() -> None:
    body = """
      %big = memref.alloca() : memref<128x128xf32, 3 : i32>
"""
    m = module("%O: memref<?xf32>", body, outputs="O")
    with pytest.raises(TCError, match="kernel @k uses 65536 bytes of shared memory"):
        run(m, [], [f32(4)])


def test_error_flag_of_checked_reads() -> None:
    # every thread whose index is out of range sets the flag: the same value,
    # so no race; the launcher reports the checked read
    body = """
      %tx = $tid_x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : i32
      %in = arith.cmpi slt, %tx, %N : index
      scf.if %in {
        %x = memref.load %X[%tx] : memref<?xf32>
        memref.store %x, %Y[%tx] : memref<?xf32>
      } else {
        memref.store %c1, %err[%c0] : memref<1xi32>
      }
"""
    params = "%X: memref<?xf32>, %Y: memref<?xf32>, %err: memref<1xi32>, %N: index"
    m = module(params, body, inputs="X", outputs="Y", sizes="N", checked="X")
    with pytest.raises(TCError, match="out-of-bounds read of tensor 'X'"):
        run(m, [f32(20)], [np.zeros(32, np.float32)], N=20)
    Y = np.zeros(32, np.float32)
    run(m, [f32(32)], [Y], N=32)
    np.testing.assert_array_equal(Y, f32(32))


# ------------------------------------------------------------------ wrong IR


def test_missing_barrier_before_the_tree_is_a_race() -> None:
    m = module(
        BLOCK_SUM_PARAMS,
        block_sum(first_barrier=""),
        grid=(2,),
        block=(64,),
        inputs="X",
        outputs="P",
        sizes="N",
    )
    with pytest.raises(
        TCError,
        match=r"race in kernel @k on shared memory 'smem'.*reads smem\[\d+\], which thread .* wrote, with no gpu.barrier",
    ):
        run(m, [f32(128)], [np.zeros(2, np.float32)], N=128)


def test_missing_barrier_in_the_tree_loop_is_a_race() -> None:
    m = module(
        BLOCK_SUM_PARAMS,
        block_sum(tree_barrier=""),
        grid=(2,),
        block=(64,),
        inputs="X",
        outputs="P",
        sizes="N",
    )
    with pytest.raises(TCError, match="race in kernel @k on shared memory 'smem'"):
        run(m, [f32(128)], [np.zeros(2, np.float32)], N=128)


def test_barrier_in_divergent_code() -> None:
    body = """
      %tx = $tid_x
      %c16 = arith.constant 16 : index
      %lt = arith.cmpi ult, %tx, %c16 : index
      scf.if %lt {
        $barrier
      }
"""
    m = module("%O: memref<?xf32>", body, grid=(2,), outputs="O")
    with pytest.raises(
        TCError,
        match=r"kernel @k: a gpu.barrier is reached by only 16 of the 32 threads of a block: "
        r"thread \(0, 0, 0\) of block \(\d, 0, 0\) waits at it but thread \(16, 0, 0\)",
    ):
        run(m, [], [f32(4)])


def test_barrier_in_a_loop_with_per_thread_trip_counts() -> None:
    # for i = tid; i < 40; i += 32 { barrier }: threads 0-7 go round twice
    body = """
      %tx = $tid_x
      %bdx = $bdim_x
      %c40 = arith.constant 40 : index
      scf.for %i = %tx to %c40 step %bdx {
        $barrier
      }
"""
    m = module("%O: memref<?xf32>", body, outputs="O")
    with pytest.raises(TCError, match="reached by only 8 of the 32 threads"):
        run(m, [], [f32(4)])


def test_barrier_in_block_uniform_control_flow_is_fine() -> None:
    # blocks 0 and 1 take different branches, each with all its threads
    body = """
      %tx = $tid_x
      %bx = $bid_x
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      %two = arith.constant 2.0 : f32
      %smem = memref.alloca() : memref<32xf32, 3 : i32>
      %first = arith.cmpi eq, %bx, %c0 : index
      scf.if %first {
        memref.store %one, %smem[%tx] : memref<32xf32, 3 : i32>
        $barrier
      } else {
        memref.store %two, %smem[%tx] : memref<32xf32, 3 : i32>
        $barrier
      }
      %c31 = arith.constant 31 : index
      %j = arith.subi %c31, %tx : index
      %v = memref.load %smem[%j] : memref<32xf32, 3 : i32>
      %c32 = arith.constant 32 : index
      %b = arith.muli %bx, %c32 : index
      %t = arith.addi %b, %tx : index
      memref.store %v, %O[%t] : memref<?xf32>
"""
    m = module("%O: memref<?xf32>", body, grid=(2,), outputs="O")
    O = np.zeros(64, np.float32)
    run(m, [], [O])
    np.testing.assert_array_equal(O, [1.0] * 32 + [2.0] * 32)


def test_shared_out_of_bounds() -> None:
    body = """
      %tx = $tid_x
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      %tile = memref.alloca() : memref<32xf32, 3 : i32>
      %j = arith.addi %tx, %c1 : index
      memref.store %one, %tile[%j] : memref<32xf32, 3 : i32>
"""
    m = module("%O: memref<?xf32>", body, outputs="O")
    with pytest.raises(
        TCError,
        match=r"out-of-bounds store in kernel @k: thread \(31, 0, 0\) of block \(0, 0, 0\) "
        r"accesses tile\[32\] of shared memory 'tile' \(memref<32xf32, 3 : i32>\), whose extents are \[32\]",
    ):
        run(m, [], [f32(4)])


def test_global_out_of_bounds_load() -> None:
    body = """
      %tx = $tid_x
      %c1 = arith.constant 1 : index
      %in = arith.cmpi slt, %tx, %N : index
      scf.if %in {
        %j = arith.addi %tx, %c1 : index
        %x = memref.load %X[%j, %tx] : memref<?x?xf32>
        memref.store %x, %Y[%tx] : memref<?xf32>
      }
"""
    params = "%X: memref<?x?xf32>, %Y: memref<?xf32>, %N: index"
    m = module(params, body, inputs="X", outputs="Y", sizes="N")
    with pytest.raises(
        TCError,
        match=r"out-of-bounds load in kernel @k: thread \(9, 0, 0\) of block \(0, 0, 0\) "
        r"accesses X\[10, 9\] of global memory 'X' \(memref<\?x\?xf32>\), whose extents are \[10, 10\]",
    ):
        run(m, [f32(10, 10)], [f32(10)], N=10)


def test_global_out_of_bounds_store() -> None:
    m = module(VADD_PARAMS, VADD, grid=(2,), inputs="AB", outputs="C", sizes="N")
    with pytest.raises(
        TCError, match=r"out-of-bounds store .* accesses C\[\d+\] of global memory 'C'"
    ):
        run(m, [f32(50), f32(50)], [f32(40)], N=50)


def test_two_threads_of_a_block_write_one_element() -> None:
    body = """
      %tx = $tid_x
      %c2 = arith.constant 2 : index
      %i = arith.divui %tx, %c2 : index
      %v = arith.index_cast %tx : index to i32
      %f = arith.sitofp %v : i32 to f32
      memref.store %f, %O[%i] : memref<?xf32>
"""
    m = module("%O: memref<?xf32>", body, outputs="O")
    with pytest.raises(
        TCError,
        match=r"race in kernel @k on global memory 'O' \(memref<\?xf32>\): "
        r"thread \(\d+, 0, 0\) of block \(0, 0, 0\) writes O\[\d+\] while thread .* writes a different value to it",
    ):
        run(m, [], [np.zeros(16, np.float32)])


def test_two_blocks_write_one_element() -> None:
    body = """
      %tx = $tid_x
      %bx = $bid_x
      %v = arith.index_cast %bx : index to i32
      %f = arith.sitofp %v : i32 to f32
      memref.store %f, %O[%tx] : memref<?xf32>
"""
    m = module("%O: memref<?xf32>", body, grid=(3,), block=(8,), outputs="O")
    with pytest.raises(
        TCError,
        match=r"race in kernel @k on global memory 'O'.* writes O\[\d\].*"
        r"\(threads of different blocks cannot synchronise within a launch\)",
    ):
        run(m, [], [np.zeros(8, np.float32)])
    host = next(op for op in m.ops if isinstance(op, FuncOp))
    one_block_a_chunk = SimLauncher(
        m, "f", signature_of(host), CudaOptions(), SimDevice(max_lanes=8)
    )
    with pytest.raises(
        TCError,
        match=r"writes O\[\d\], which thread \(\d, 0, 0\) of block \(\d, 0, 0\) wrote, with no "
        r"gpu.barrier between them \(threads of different blocks cannot synchronise",
    ):
        one_block_a_chunk([], [np.zeros(8, np.float32)], {})


def test_reading_what_another_block_wrote_is_a_race() -> None:
    # T[i] = X[i], then Y[i] = T[n - 1 - i]: a grid-wide dependence in one launch
    body = """
      %tx = $tid_x
      %bx = $bid_x
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %0 = arith.muli %bx, %c8 : index
      %i = arith.addi %0, %tx : index
      %x = memref.load %X[%i] : memref<?xf32>
      memref.store %x, %T[%i] : memref<?xf32>
      %last = arith.subi %N, %c1 : index
      %j = arith.subi %last, %i : index
      %t = memref.load %T[%j] : memref<?xf32>
      memref.store %t, %Y[%i] : memref<?xf32>
"""
    params = "%X: memref<?xf32>, %T: memref<?xf32>, %Y: memref<?xf32>, %N: index"
    m = module(params, body, grid=(4,), block=(8,), inputs="X", outputs="TY", sizes="N")
    with pytest.raises(
        TCError, match=r"race in kernel @k on global memory 'T'.* reads T\[\d+\], which"
    ):
        run(m, [f32(32)], [f32(32), f32(32)], N=32)


def test_a_racing_read_whose_value_no_thread_uses_is_no_error() -> None:
    # thread 0 writes T[0]; every thread loads it (no barrier) but only thread
    # 0 stores what it loaded: the other threads' loads race but are unused
    body = """
      %tx = $tid_x
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        memref.store %one, %T[%c0] : memref<?xf32>
      }
      %t = memref.load %T[%c0] : memref<?xf32>
      %u = arith.addf %t, %one : f32
      %w = scf.for %i = %c0 to %N step %tx iter_args(%a = %u) -> (f32) {
        scf.yield %a : f32
      }
      scf.if %first {
        memref.store %w, %Y[%c0] : memref<?xf32>
      }
"""
    params = "%T: memref<?xf32>, %Y: memref<?xf32>, %N: index"
    m = module(params, body, outputs="TY", sizes="N")
    Y = np.zeros(1, np.float32)
    run(m, [], [np.zeros(1, np.float32), Y], N=0)
    assert Y[0] == 2.0


@pytest.mark.parametrize(
    ("use", "op"),
    [
        ("memref.store %u, %Y[%tx] : memref<?xf32>", "memref.store"),
        (
            "%i = arith.fptosi %u : f32 to i64\n      %j = arith.index_cast %i : i64 to index\n"
            "      memref.store %one, %Y[%j] : memref<?xf32>",
            "memref.store",
        ),
        ("%p = arith.cmpf ogt, %u, %one : f32\n      scf.if %p {\n      }", "scf.if"),
        (
            "%n = arith.fptosi %u : f32 to i64\n      %m = arith.index_cast %n : i64 to index\n"
            "      scf.for %i = %c0 to %m step %c1 {\n      }",
            "scf.for",
        ),
    ],
    ids=["stored", "address", "condition", "bound"],
)
def test_a_racing_read_is_reported_where_its_value_is_used(use: str, op: str) -> None:
    body = f"""
      %tx = $$tid_x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {{
        memref.store %one, %T[%c0] : memref<?xf32>
      }}
      %t = memref.load %T[%c0] : memref<?xf32>
      %u = arith.addf %t, %one : f32
      {use}
""".replace("$$", "$")
    m = module("%T: memref<?xf32>, %Y: memref<?xf32>", body, outputs="TY")
    with pytest.raises(
        TCError,
        match=rf"race in kernel @k on global memory 'T'.*: thread \(1, 0, 0\) of block \(0, 0, 0\) "
        rf"reads T\[0\], which thread \(0, 0, 0\) of block \(0, 0, 0\) wrote, .*; {op} uses the value read",
    ):
        run(m, [], [np.zeros(1, np.float32), np.zeros(32, np.float32)])


def test_overwriting_shared_memory_another_thread_read_is_a_race() -> None:
    # y[t] = smem[t + 1]; smem[t] = 0 with no barrier between: thread t - 1 read smem[t]
    body = """
      %tx = $tid_x
      %c1 = arith.constant 1 : index
      %z = arith.constant 0.0 : f32
      %smem = memref.alloca() : memref<33xf32, 3 : i32>
      %x = memref.load %X[%tx] : memref<?xf32>
      memref.store %x, %smem[%tx] : memref<33xf32, 3 : i32>
      %j = arith.addi %tx, %c1 : index
      %last = arith.cmpi eq, %j, %c32 : index
      scf.if %last {
        memref.store %x, %smem[%j] : memref<33xf32, 3 : i32>
      }
      $barrier
      %y = memref.load %smem[%j] : memref<33xf32, 3 : i32>
      memref.store %y, %Y[%tx] : memref<?xf32>
      $store
"""
    for store, error in (
        ("", None),
        ("memref.store %z, %smem[%tx] : memref<33xf32, 3 : i32>", "race"),
    ):
        text = body.replace("$store", store).replace(
            "%last = arith.cmpi eq, %j, %c32",
            "%c32 = arith.constant 32 : index\n      %last = arith.cmpi eq, %j, %c32",
        )
        m = module(
            "%X: memref<?xf32>, %Y: memref<?xf32>", text, inputs="X", outputs="Y"
        )
        X, Y = f32(32), np.zeros(32, np.float32)
        if error is None:
            run(m, [X], [Y])
            np.testing.assert_array_equal(Y, np.r_[X[1:], X[-1]])
            continue
        with pytest.raises(
            TCError,
            match=r"race in kernel @k on shared memory 'smem'.*: thread \(1, 0, 0\) of block \(0, 0, 0\) "
            r"writes smem\[1\], which thread \(0, 0, 0\) of block \(0, 0, 0\) read, with no gpu.barrier",
        ):
            run(m, [X], [Y])


def test_overwriting_what_another_block_read_is_a_race() -> None:
    # Y[i] = X[(i + 8) % 16] then X[i] = 0, in place: block 1 overwrites what block 0 read
    body = """
      %tx = $tid_x
      %bx = $bid_x
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %z = arith.constant 0.0 : f32
      %0 = arith.muli %bx, %c8 : index
      %i = arith.addi %0, %tx : index
      %1 = arith.addi %i, %c8 : index
      %j = arith.remui %1, %c16 : index
      %x = memref.load %X[%j] : memref<?xf32>
      memref.store %x, %Y[%i] : memref<?xf32>
      memref.store %z, %X[%i] : memref<?xf32>
"""
    m = module(
        "%X: memref<?xf32>, %Y: memref<?xf32>",
        body,
        grid=(2,),
        block=(8,),
        outputs="XY",
    )
    with pytest.raises(
        TCError,
        match=r"race in kernel @k on global memory 'X'.* writes X\[\d+\], which thread .* of block "
        r"\(\d, 0, 0\) read, .*\(threads of different blocks cannot synchronise",
    ):
        run(m, [], [f32(16), f32(16)])


def test_shuffle_in_divergent_code() -> None:
    body = f"""
      %tx = $$tid_x
      %c8 = arith.constant 8 : index
      %one = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %lt = arith.cmpi ult, %tx, %c8 : index
      scf.if %lt {{
        %v = memref.load %X[%tx] : memref<?xf32>
        %r, %ok = {shuffle("xor", "%v", "%one", "%w")}
        memref.store %r, %X[%tx] : memref<?xf32>
      }}
""".replace("$$", "$")
    m = module("%X: memref<?xf32>", body, outputs="X")
    with pytest.raises(
        TCError,
        match=r"gpu.shuffle: lanes 0 to 31 of the warp .* must all execute a shuffle of width 32, but only 8 do",
    ):
        run(m, [], [f32(32)])


# ------------------------------------------------------------------ end to end

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
"""
SOFTMAX = """
def softmax(float(N, D) I) -> (O) {
    maxVal(n) max=! I(n, d)
    shifted(n, d) = exp(I(n, d) - maxVal(n))
    expsum(n) +=! shifted(n, r_d)
    O(n, d) = shifted(n, d) / expsum(n)
}
"""


@pytest.mark.parametrize(
    "options",
    [CudaOptions(), CudaOptions.naive(), CudaOptions(block=(7, 3), grid=(2,))],
    ids=["default", "naive", "odd"],
)
@pytest.mark.parametrize("source", [MATMUL, SOFTMAX], ids=["matmul", "softmax"])
def test_define_runs_in_the_simulator(source: str, options: CudaOptions) -> None:
    k = tcdialect.define(source, target="cuda-sim", options=options)
    rng = np.random.default_rng(3)
    if "matmul" in source:
        inputs = [
            rng.uniform(-1, 1, s).astype(np.float32) for s in ((37, 19), (19, 45))
        ]
    else:
        inputs = [rng.uniform(-1, 1, (13, 50)).astype(np.float32)]
    (want,) = reference.run(parse_tc(source), None, inputs)
    np.testing.assert_allclose(k(*inputs), want, rtol=1e-5, atol=1e-5)


def test_the_cuda_target_runs_in_the_simulator_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TCDIALECT_CUDA_SIM", "1")
    k = tcdialect.define(MATMUL, target="cuda")
    A, B = f32(5, 7), f32(7, 3, seed=1)
    np.testing.assert_allclose(k(A, B), A @ B, rtol=1e-5, atol=1e-6)


WARP_HANDOFF = """
      %tx = $tid_x
      %ty = $tid_y
      %c0 = arith.constant 0 : index
      %all = arith.constant -1 : i32
      %first = arith.cmpi eq, %tx, %c0 : index
      %v = arith.index_cast %ty : index to i64
      %f = arith.sitofp %v : i64 to f32
      scf.if %first {
        memref.store %f, %T[%ty] : memref<?xf32>
      }
      $sync
      %t = memref.load %T[%ty] : memref<?xf32>
      %c32 = arith.constant 32 : index
      %off = arith.muli %ty, %c32 : index
      %g = arith.addi %tx, %off : index
      memref.store %t, %Y[%g] : memref<?xf32>
"""
WARP_PARAMS = "%T: memref<?xf32>, %Y: memref<?xf32>"


def warp_handoff(sync: str) -> ModuleOp:
    # thread (0, y) writes T[y]; every thread of row y (one warp) reads it
    body = Template(WARP_HANDOFF).safe_substitute(sync=sync)
    return module(WARP_PARAMS, body, block=(32, 4), outputs="TY")


def test_warp_barrier_orders_a_handoff_within_a_warp() -> None:
    m = warp_handoff('"nvvm.bar.warp.sync"(%all) : (i32) -> ()')
    Y = np.zeros(128, np.float32)
    run(m, [], [np.zeros(4, np.float32), Y])
    np.testing.assert_array_equal(Y, np.repeat(np.arange(4, dtype=np.float32), 32))


def test_missing_warp_barrier_is_a_race() -> None:
    m = warp_handoff("")
    with pytest.raises(TCError, match=r"race in kernel @k on global memory 'T'"):
        run(m, [], [np.zeros(4, np.float32), np.zeros(128, np.float32)])


def test_warp_barrier_does_not_order_other_warps() -> None:
    # thread (0, 0) writes T[0]; thread (0, 1), in another warp, reads it after
    # a warp barrier only: a race (a gpu.barrier would order them)
    body = """
      %tx = $tid_x
      %ty = $tid_y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %all = arith.constant -1 : i32
      %one = arith.constant 1.0 : f32
      %x0 = arith.cmpi eq, %tx, %c0 : index
      %y0 = arith.cmpi eq, %ty, %c0 : index
      %y1 = arith.cmpi eq, %ty, %c1 : index
      %w = arith.andi %x0, %y0 : i1
      scf.if %w {
        memref.store %one, %T[%c0] : memref<?xf32>
      }
      "nvvm.bar.warp.sync"(%all) : (i32) -> ()
      %r = arith.andi %x0, %y1 : i1
      scf.if %r {
        %t = memref.load %T[%c0] : memref<?xf32>
        memref.store %t, %Y[%c0] : memref<?xf32>
      }
"""
    m = module(WARP_PARAMS, body, block=(32, 2), outputs="TY")
    with pytest.raises(TCError, match="race in kernel @k on global memory 'T'"):
        run(m, [], [np.zeros(1, np.float32), np.zeros(1, np.float32)])


def test_warp_barrier_in_divergent_code() -> None:
    body = """
      %tx = $tid_x
      %c16 = arith.constant 16 : index
      %all = arith.constant -1 : i32
      %lt = arith.cmpi ult, %tx, %c16 : index
      scf.if %lt {
        "nvvm.bar.warp.sync"(%all) : (i32) -> ()
      }
"""
    m = module("%O: memref<?xf32>", body, outputs="O")
    with pytest.raises(TCError, match="a warp barrier is not reached by thread"):
        run(m, [], [f32(4)])


# ------------------------------------------------------------- async copies


def through_shared(copy: str, early: bool) -> str:
    """Each of 32 threads copies X[t] into shared memory, marked `copy`
    (`{tc.async_copy}` or nothing), and writes to Y[t] element 31 - t of it
    after the barrier or (`early`) its own element t before it."""
    after = """
      %r = arith.subi %c31, %tx : index
      %v = memref.load %smem[%r] : memref<32xf32, 3 : i32>
      memref.store %v, %Y[%tx] : memref<32xf32>
"""
    before = """
      %v = memref.load %smem[%tx] : memref<32xf32, 3 : i32>
      memref.store %v, %Y[%tx] : memref<32xf32>
"""
    return f"""
      %c31 = arith.constant 31 : index
      %smem = memref.alloca() : memref<32xf32, 3 : i32>
      %tx = $tid_x
      %x = memref.load %X[%tx] : memref<32xf32>
      memref.store %x, %smem[%tx] {copy} : memref<32xf32, 3 : i32>
      {before if early else ""}
      $barrier
      {"" if early else after}
"""


PARAMS_XY = "%X: memref<32xf32>, %Y: memref<32xf32>"


@pytest.mark.parametrize("copy", ["", "{tc.async_copy}"])
def test_async_copies_land_at_the_barrier(copy: str) -> None:
    """A store marked `tc.async_copy` (cp.async on the device) lands when
    its thread reaches the next barrier: read after it, the copy is there."""
    m = module(PARAMS_XY, through_shared(copy, False), inputs="X", outputs="Y")
    X = f32(32)
    Y = np.zeros(32, np.float32)
    run(m, [X], [Y])
    np.testing.assert_array_equal(Y, X[::-1])


@pytest.mark.parametrize(("copy", "lands"), [("", True), ("{tc.async_copy}", False)])
def test_an_async_copy_is_not_there_before_the_barrier(copy: str, lands: bool) -> None:
    """Read back by its own thread before the barrier, a plain store is
    there, a marked copy still in flight: the read sees shared memory's
    poison (NaN), as it may on the device."""
    m = module(PARAMS_XY, through_shared(copy, True), inputs="X", outputs="Y")
    X = f32(32)
    Y = np.zeros(32, np.float32)
    run(m, [X], [Y])
    if lands:
        np.testing.assert_array_equal(Y, X)
    else:
        assert np.isnan(Y).all()
