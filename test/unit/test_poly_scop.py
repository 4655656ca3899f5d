"""The polyhedral model extracted from affine IR (tcdialect.poly.scop).

Sets and maps are compared with isl's `is_equal` against hand-written ones.
"""

from __future__ import annotations

import sys
from pathlib import Path

import islpy as isl
import pytest
from xdsl.dialects import affine, func
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr, AffineMap
from xdsl.parser import Parser

from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.pipeline import lower, make_context
from tcdialect.poly.scop import dependences, extract_scop, reduction_loops

sys.path.insert(0, str(Path(__file__).parent))
from test_reference_catalog import KERNELS

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}"""


def _func(module: ModuleOp) -> func.FuncOp:
    fns = [op for op in module.ops if isinstance(op, func.FuncOp)]
    assert len(fns) == 1
    return fns[0]


def _affine(source: str, sizes: dict[str, int] | None = None) -> func.FuncOp:
    return _func(lower(parse_tc(source), "affine", sizes))


def _parse(text: str) -> func.FuncOp:
    return _func(Parser(make_context(), text).parse_module())


def _eq(a: isl.Set | isl.Map | isl.UnionMap, b: str) -> bool:
    other = type(a)(b)
    return bool(a.is_equal(other))


def _by_store(scop: object, array: str) -> list[str]:
    """Statement names whose store writes `array`, in order."""
    out = []
    for name, s in scop.statements.items():  # type: ignore[attr-defined]
        if any(a.kind == "write" and a.array == array for a in s.accesses):
            out.append(name)
    return out


def test_matmul_generic() -> None:
    scop = extract_scop(_affine(MATMUL))
    assert scop.params == ("M", "K", "N")
    assert list(scop.statements) == ["S0", "S1"]
    p = "[M, K, N] -> "
    assert _eq(
        scop.statements["S0"].domain, p + "{ S0[i, j] : 0 <= i < M and 0 <= j < N }"
    )
    assert _eq(
        scop.statements["S1"].domain,
        p + "{ S1[i, j, k] : 0 <= i < M and 0 <= j < N and 0 <= k < K }",
    )
    dom1 = "0 <= i < M and 0 <= j < N and 0 <= k < K"
    assert _eq(
        scop.reads,
        p + "{ S1[i, j, k] -> A[i, k] : " + dom1 + "; S1[i, j, k] -> B[k, j] : "
        f"{dom1}; S1[i, j, k] -> C[i, j] : {dom1} }}",
    )
    assert _eq(
        scop.writes,
        p + "{ S0[i, j] -> C[i, j] : 0 <= i < M and 0 <= j < N; "
        f"S1[i, j, k] -> C[i, j] : {dom1} }}",
    )
    assert scop.may_reads.is_empty()
    # Textual order: all of S0 before any S1; S1 in (i, j, k) order.
    assert _eq(
        scop.schedule,
        p + "{ S0[i, j] -> [0, i, 0, j, 0, 0, 0] : 0 <= i < M and 0 <= j < N; "
        f"S1[i, j, k] -> [1, i, 0, j, 0, k, 0] : {dom1} }}",
    )
    deps = dependences(scop)
    assert _eq(
        deps.flow,
        p + "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < M and 0 <= j < N and K > 0; "
        "S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < M and 0 <= j < N and 0 <= k < K - 1 }",
    )
    assert _eq(
        deps.output,
        p + "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < M and 0 <= j < N and K > 0; "
        "S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < M and 0 <= j < N and 0 <= k < K - 1 }",
    )
    assert deps.flow.is_subset(deps.all)
    assert deps.anti.is_subset(deps.all)


def test_matmul_specialised() -> None:
    scop = extract_scop(_affine(MATMUL, {"M": 5, "K": 7, "N": 3}))
    assert scop.params == ()
    assert _eq(
        scop.statements["S1"].domain,
        "{ S1[i, j, k] : 0 <= i < 5 and 0 <= j < 3 and 0 <= k < 7 }",
    )
    deps = dependences(scop)
    assert _eq(
        deps.flow,
        "{ S0[i, j] -> S1[i, j, 0] : 0 <= i < 5 and 0 <= j < 3; "
        "S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < 5 and 0 <= j < 3 and 0 <= k < 6 }",
    )


def test_reductions() -> None:
    red = reduction_loops(extract_scop(_affine(MATMUL)))
    assert list(red) == ["S1"]
    assert red["S1"].dims == (2,)
    assert red["S1"].dim_names == ("r_k",)
    assert red["S1"].op == "arith.addf"
    rowmax = """
    def rowmax(float(N, D) I) -> (O) {
        O(n) max=! I(n, r_d)
    }"""
    scop = extract_scop(_affine(rowmax))
    red = reduction_loops(scop)
    assert list(red) == ["S1"]
    assert red["S1"].dims == (1,)
    assert red["S1"].op in ("arith.maximumf", "arith.maxnumf")


def test_convolution_bounds() -> None:
    conv = next(k for k in KERNELS if k.name == "conv_valid")
    scop = extract_scop(_affine(conv.source))
    p = "[N, C, H, W, M, KH, KW] -> "
    out = "0 <= n < N and 0 <= m < M and 0 <= h < H - KH + 1 and 0 <= w < W - KW + 1"
    s1 = _by_store(scop, "O")[1]
    assert _eq(
        scop.statements[s1].domain,
        p + f"{{ {s1}[n, m, h, w, c, kh, kw] : {out} and 0 <= c < C "
        "and 0 <= kh < KH and 0 <= kw < KW }",
    )
    reads_i = scop.reads.intersect_range(isl.UnionSet(p + "{ I[a, b, c, d] }"))
    assert _eq(
        reads_i,
        p + f"{{ {s1}[n, m, h, w, c, kh, kw] -> I[n, c, h + kh, w + kw] : {out} "
        "and 0 <= c < C and 0 <= kh < KH and 0 <= kw < KW }",
    )
    assert list(reduction_loops(scop)) == [s1]
    assert reduction_loops(scop)[s1].dims == (4, 5, 6)


MIN_BOUND = """
func.func @f(%A: memref<?xf32>, %B: memref<?xf32>, %N: index, %T: index) {
  %c = arith.constant 1.0 : f32
  "affine.for"(%N, %T) <{lowerBoundMap = affine_map<() -> (0)>,
      upperBoundMap = affine_map<()[s0, s1] -> (s0, s1 + 2)>, step = 2 : index,
      operandSegmentSizes = array<i32: 0, 2, 0>}> ({
  ^bb0(%i: index):
    "affine.if"(%i, %N) <{condition = affine_set<(d0)[s0] : (s0 - d0 - 5 >= 0)>}> ({
      %v = affine.load %A[%i floordiv 2] : memref<?xf32>
      affine.store %v, %B[%i] : memref<?xf32>
      "affine.yield"() : () -> ()
    }, {
      affine.store %c, %B[%i] : memref<?xf32>
      "affine.yield"() : () -> ()
    }) : (index, index) -> ()
    "affine.yield"() : () -> ()
  }) : (index, index) -> ()
  func.return
}
"""


def test_min_bound_step_and_if() -> None:
    scop = extract_scop(_parse(MIN_BOUND))
    assert scop.params == ("N", "T")
    base = "0 <= i < N and i < T + 2 and exists (e : i = 2e)"
    assert _eq(
        scop.statements["S0"].domain, f"[N, T] -> {{ S0[i] : {base} and i <= N - 5 }}"
    )
    assert _eq(
        scop.statements["S1"].domain, f"[N, T] -> {{ S1[i] : {base} and i > N - 5 }}"
    )
    assert _eq(
        scop.reads,
        f"[N, T] -> {{ S0[i] -> A[floor(i / 2)] : {base} and i <= N - 5 }}",
    )


def test_gather_may_reads_whole_table() -> None:
    gather = next(k for k in KERNELS if k.name == "gather_rows")
    scop = extract_scop(_affine(gather.source))
    p = "[V, W, L] -> "
    dom = "0 <= l < L and 0 <= w < W"
    assert _eq(scop.statements["S0"].domain, p + f"{{ S0[l, w] : {dom} }}")
    assert _eq(scop.reads, p + f"{{ S0[l, w] -> Idx[l] : {dom} }}")
    may = scop.may_reads.intersect_range(isl.UnionSet(p + "{ In[a, b] }"))
    assert _eq(may, p + f"{{ S0[l, w] -> In[a, b] : {dom} and a >= 0 and b >= 0 }}")
    spec = extract_scop(_affine(gather.source, gather.sizes[0]))
    may = spec.may_reads.intersect_range(isl.UnionSet("{ In[a, b] }"))
    v, w, l = (gather.sizes[0][k] for k in ("V", "W", "L"))
    assert _eq(
        may,
        f"{{ S0[l, w] -> In[a, b] : 0 <= l < {l} and 0 <= w < {w} "
        f"and 0 <= a < {v} and 0 <= b < {w} }}",
    )
    dependences(spec)


def test_softmax_flow_between_statements() -> None:
    softmax = next(k for k in KERNELS if k.name == "softmax")
    scop = extract_scop(_affine(softmax.source, {"N": 3, "D": 4}))
    # mx init, mx max, e exp, s init, s add, O div.
    assert len(scop.statements) == 6
    deps = dependences(scop)
    maps: list[isl.Map] = []
    deps.flow.foreach_map(maps.append)
    pairs = {
        (m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out))
        for m in maps
    }
    assert pairs >= {
        ("S0", "S1"),
        ("S1", "S1"),
        ("S1", "S2"),
        ("S2", "S4"),
        ("S3", "S4"),
        ("S4", "S4"),
        ("S2", "S5"),
        ("S4", "S5"),
    }
    assert _eq(
        deps.flow.intersect_domain(isl.UnionSet("{ S1[n, d] }")).intersect_range(
            isl.UnionSet("{ S2[n, d] }")
        ),
        "{ S1[n, 3] -> S2[n, d] : 0 <= n < 3 and 0 <= d < 4 }",
    )
    assert {r.statement for r in reduction_loops(scop).values()} == {"S1", "S4"}


def test_unsupported_constructs() -> None:
    semi = """
    func.func @f(%A: memref<?xf32>, %N: index) {
      affine.for %i = 0 to 4 {
        %v = affine.load %A[%i + symbol(%N)] : memref<?xf32>
        affine.store %v, %A[%i] : memref<?xf32>
      }
      func.return
    }"""
    fn = _parse(semi)
    load = next(op for op in fn.walk() if isinstance(op, affine.LoadOp))
    # xDSL's `*` refuses semi-affine products: build d0 * s0 directly.
    mul = AffineBinaryOpExpr(
        AffineBinaryOpKind.Mul, AffineExpr.dimension(0), AffineExpr.symbol(0)
    )
    load.properties["map"] = AffineMapAttr(AffineMap(1, 1, (mul,)))
    with pytest.raises(TCError, match="semi-affine"):
        extract_scop(fn)
    scf_for = """
    func.func @f(%A: memref<?xf32>, %N: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %N step %c1 {
        %v = memref.load %A[%i] : memref<?xf32>
        memref.store %v, %A[%i] : memref<?xf32>
      }
      func.return
    }"""
    with pytest.raises(TCError, match="scf loops"):
        extract_scop(_parse(scf_for))


def test_local_arrays() -> None:
    """A `memref.alloca` in a loop body is an error by default (the scheduler
    could not place it) and, with `local_arrays`, one array whose accesses
    over-approximate the per-iteration buffers."""
    local = """
    func.func @f(%A: memref<4x8xf32>, %B: memref<4xf32>) {
      affine.for %m = 0 to 4 {
        %T = memref.alloca() : memref<8xf32>
        affine.for %i = 0 to 8 {
          %v = affine.load %A[%m, %i] : memref<4x8xf32>
          affine.store %v, %T[%i] : memref<8xf32>
        }
        %t = affine.load %T[3] : memref<8xf32>
        affine.store %t, %B[%m] : memref<4xf32>
      }
      func.return
    }"""
    with pytest.raises(
        TCError, match=r"neither a function argument nor a memref\.alloc"
    ):
        extract_scop(_parse(local))
    scop = extract_scop(_parse(local), local_arrays=True)
    assert set(scop.arrays) == {"A", "B", "T"}
    assert _eq(
        scop.writes,
        "{ S0[m, i] -> T[i] : 0 <= m < 4 and 0 <= i < 8; S1[m] -> B[m] : 0 <= m < 4 }",
    )
    flow = dependences(scop).flow.intersect_range(isl.UnionSet("{ S1[m] }"))
    assert _eq(flow, "{ S0[m, 3] -> S1[m] : 0 <= m < 4 }")


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_catalog_extracts(kernel: object) -> None:
    source, sizes = kernel.source, kernel.sizes[0]  # type: ignore[attr-defined]
    module = lower(parse_tc(source), "affine", sizes)
    # (declarations of the C functions that builtins call have no body)
    fns = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    assert fns
    for fn in fns:
        scop = extract_scop(fn)
        assert scop.params == ()
        assert scop.statements
        deps = dependences(scop)
        assert deps.flow.is_subset(deps.all)
