"""Atomic updates (`memref.atomic_rmw`) in the polyhedral model
(tcdialect.poly.scop): a scatter-accumulate's guarded update is a statement
of its own, its update an `atomic` access of the whole array; with
`commuting_atomics` two updates of one kind have no dependence (the GPU's
model) while the zero-init before them and the reads after them stay
ordered; without, they are ordered like plain read-modify-writes (the CPU's).
"""

from __future__ import annotations

import islpy as isl
from xdsl.dialects import func, scf
from xdsl.parser import Parser

from tcdialect.pipeline import make_context
from tcdialect.poly.scop import dependences, error_flag_arrays, extract_scop

# dE = 0; dE[Idx[k], d] += g[k, d] (atomic addf, guarded); with KIND the
# kind of a second atomic update after it; then a plain read of dE.
SCATTER = """
func.func @emb(%Idx: memref<?xi32>, %g: memref<?x?xf32>, %dE: memref<?x?xf32>, %out: memref<?xf32>, %err: memref<1xi32>, %V: index, %D: index, %K: index) attributes {tc.inputs = ["Idx", "g"], tc.outputs = ["dE", "out"], tc.sizes = ["V", "D", "K"], tc.checked = ["dE"]} {
  affine.for %v = 0 to %V {
    affine.for %e = 0 to %D {
      %z = arith.constant 0.000000e+00 : f32
      affine.store %z, %dE[%v, %e] : memref<?x?xf32>
    }
  }
  %c0 = arith.constant 0 : index
  affine.for %k = 0 to %K {
    affine.for %d = 0 to %D {
      %i = affine.load %Idx[%k] : memref<?xi32>
      %x = arith.index_cast %i : i32 to index
      %w = affine.load %g[%k, %d] : memref<?x?xf32>
      %ge = arith.cmpi sge, %x, %c0 : index
      %lt = arith.cmpi slt, %x, %V : index
      %ok = arith.andi %ge, %lt : i1
      scf.if %ok {
        %old = "memref.atomic_rmw"(%w, %dE, %x, %d) <{kind = 0 : i64}> : (f32, memref<?x?xf32>, index, index) -> f32
      } else {
        %code = arith.constant 1 : i32
        memref.store %code, %err[%c0] : memref<1xi32>
      }
    }
  }
  affine.for %k2 = 0 to %K {
    %w2 = affine.load %g[%k2, %c0] : memref<?x?xf32>
    %old2 = "memref.atomic_rmw"(%w2, %dE, %c0, %c0) <{kind = KIND : i64}> : (f32, memref<?x?xf32>, index, index) -> f32
  }
  affine.for %v3 = 0 to %V {
    %r = affine.load %dE[%v3, %c0] : memref<?x?xf32>
    affine.store %r, %out[%v3] : memref<?xf32>
  }
  func.return
}
"""


def _scatter(kind: int) -> func.FuncOp:
    module = Parser(make_context(), SCATTER.replace("KIND", str(kind))).parse_module()
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return fn


def _pairs(deps: isl.UnionMap) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    deps.foreach_map(
        lambda m: out.add(
            (m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out))
        )
    )
    return out


def test_the_guarded_atomic_update_is_a_statement() -> None:
    fn = _scatter(0)
    scop = extract_scop(fn)
    assert list(scop.statements) == ["S0", "S1", "S2", "S3"]
    s1 = scop.statements["S1"]
    assert isinstance(s1.store, scf.IfOp) and s1.dims == ("k", "d")
    atomic = [a for a in s1.accesses if a.kind == "atomic"]
    assert [a.array for a in atomic] == ["dE"]
    assert list(scop.atomics) == ["addf"]
    assert scop.atomics["addf"].is_equal(
        isl.UnionMap(
            "[V, D, K] -> { S1[k, d] -> dE[o0, o1] : 0 <= k < K and 0 <= d < D "
            "and o0 >= 0 and o1 >= 0; S2[k2] -> dE[o0, o1] : 0 <= k2 < K "
            "and o0 >= 0 and o1 >= 0 }"
        )
    )
    # the atomic updates are in none of the plain access maps
    plain = scop.reads.union(scop.may_reads).union(scop.writes)
    dE = isl.UnionSet("[V, D, K] -> { dE[o0, o1] }")
    assert (
        plain.union(scop.may_writes)
        .intersect_range(dE)
        .domain()
        .is_equal(
            isl.UnionSet(
                "[V, D, K] -> { S0[v, e] : 0 <= v < V and 0 <= e < D; "
                "S3[v3] : 0 <= v3 < V }"
            )
        )
    )
    assert error_flag_arrays(fn, scop) == ["err"]


def test_atomic_adds_commute_with_each_other_only() -> None:
    fn = _scatter(0)  # both updates add
    scop = extract_scop(fn)
    flag = error_flag_arrays(fn, scop)
    commuting = _pairs(dependences(scop, flag, commuting_atomics=True).all)
    # zero-init before the adds, the read of dE after them
    assert {("S0", "S1"), ("S0", "S2"), ("S1", "S3"), ("S2", "S3")} <= commuting
    assert not {("S1", "S1"), ("S1", "S2"), ("S2", "S2")} & commuting
    ordered = _pairs(dependences(scop, flag).all)
    assert {("S1", "S1"), ("S1", "S2"), ("S2", "S2")} <= ordered


def test_atomic_updates_of_different_kinds_are_ordered() -> None:
    fn = _scatter(5)  # the second update is a maxnumf
    scop = extract_scop(fn)
    assert sorted(scop.atomics) == ["addf", "maxnumf"]
    deps = dependences(scop, error_flag_arrays(fn, scop), commuting_atomics=True)
    pairs = _pairs(deps.all)
    assert ("S1", "S2") in pairs
    assert not {("S1", "S1"), ("S2", "S2")} & pairs
