"""`convert-tc-to-affine` (and `tc-specialize`) on the whole kernel catalog.

Every kernel of `test_reference_catalog.KERNELS` is lowered generically and
specialised for each of its size sets, and the result must verify and keep
the affine-stage contract (docs/pipeline.md). The numerics are checked by
executing the affine IR against `tcdialect.reference.run`.

xDSL's own interpreter (`xdsl.interpreters`, as used by `xdsl-run`) cannot
run this IR: it has no `affine.parallel`, evaluates `affine.for` bounds and
`affine.load`/`affine.store` maps without their operands (only constant
bounds, no symbols) and implements three `math` ops. So this file carries a
small evaluator of the affine stage (`_Evaluator`, below) that reuses the
reference interpreter's element-wise semantics of the `arith`/`math` ops.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import test_reference_catalog as catalog  # test/unit is on pytest's pythonpath
from xdsl.context import Context
from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    IndexType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, SSAValue

from tcdialect import reference, special_functions
from tcdialect.conversion.convert_tc_to_affine import ConvertTcToAffinePass
from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.frontend import parse_tc
from tcdialect.transforms.tc_specialize import TcSpecializePass, parse_sizes

KERNELS = catalog.KERNELS
Kernel = catalog.Kernel
Arr = np.ndarray[Any, Any]

_AFFINE_STAGE_DIALECTS = {"builtin", "func", "affine", "memref", "arith", "math", "scf"}


def _lower(source: str, sizes: dict[str, int] | None = None) -> ModuleOp:
    module = parse_tc(source, "catalog.tc")
    if sizes is not None:
        spec = ",".join(f"{k}={v}" for k, v in sizes.items())
        TcSpecializePass(spec).apply(Context(), module)
        module.verify()
    ConvertTcToAffinePass().apply(Context(), module)
    module.verify()
    return module


def _params(all_sizes: bool) -> list[Any]:
    out = []
    for k in KERNELS:
        out.append(pytest.param(k, None, id=f"{k.name}[generic]"))
        for s in k.sizes if all_sizes else []:
            label = ",".join(f"{n}={v}" for n, v in s.items())
            out.append(pytest.param(k, s, id=f"{k.name}[{label}]"))
    return out


def _check_contract(
    module: ModuleOp, source: str, sizes: dict[str, int] | None
) -> None:
    defs = [d for d in parse_tc(source, "x.tc").ops if isinstance(d, tc.DefOp)]
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    for op in module.walk():
        assert op.dialect_name() in _AFFINE_STAGE_DIALECTS, op.name
    for d in defs:
        f = funcs[d.sym_name.data]
        attr = f.attributes
        names = lambda key: [s.data for s in attr[key].data]  # noqa: E731
        assert isinstance(attr["tc.inputs"], ArrayAttr)
        assert names("tc.inputs") == list(d.input_names)
        assert names("tc.outputs") == list(d.output_names)
        unbound = [n for n in d.size_names if sizes is None or n not in sizes]
        assert names("tc.sizes") == unbound
        inputs = f.function_type.inputs.data
        nt = len(d.input_names) + len(d.output_names)
        checked = "tc.checked" in attr
        assert len(inputs) == nt + checked + len(unbound)
        for t in inputs[:nt]:
            assert isinstance(t, MemRefType)
            if sizes is not None:
                assert all(s >= 0 for s in t.get_shape()), "specialised: static"
        if checked:
            assert inputs[nt] == MemRefType(arith.IntegerType(32), [1])
        assert all(isinstance(t, IndexType) for t in inputs[nt + checked :])
        allocs = [o for o in f.walk() if isinstance(o, memref.AllocOp)]
        deallocs = [o for o in f.walk() if isinstance(o, memref.DeallocOp)]
        assert len(allocs) == len(deallocs)


@pytest.mark.parametrize(("kernel", "sizes"), _params(all_sizes=True))
def test_catalog_lowers_and_verifies(
    kernel: Kernel, sizes: dict[str, int] | None
) -> None:
    module = _lower(kernel.source, sizes)
    _check_contract(module, kernel.source, sizes)


def test_catalog_pq_argmin_lowers() -> None:
    source = catalog._pq_argmin_source()  # pyright: ignore[reportPrivateUsage]
    module = _lower(source)
    f = next(o for o in module.ops if isinstance(o, func.FuncOp))
    assert [s.data for s in f.attributes["tc.checked"].data] == ["L"]  # type: ignore[union-attr]
    _lower(source, {"N": 3, "M": 2, "K": 4})


# ------------------------------------------------------------------ evaluator


class _Evaluator:
    """Runs one `func.func` of the affine stage on NumPy buffers."""

    _CALLS = {
        "hypot": np.hypot,
        "fmod": np.fmod,
        "exp10": lambda x: np.power(x.dtype.type(10), x),
        "erfc": np.vectorize(math.erfc),
    }

    def __init__(self, module: ModuleOp):
        self.funcs = {
            o.sym_name.data: o for o in module.ops if isinstance(o, func.FuncOp)
        }

    def call(self, name: str, args: Sequence[Any]) -> None:
        f = self.funcs[name]
        env: dict[SSAValue, Any] = dict(zip(f.body.block.args, args, strict=True))
        self.block(f.body.block, env)

    def block(self, block: Block, env: dict[SSAValue, Any]) -> list[Any]:
        for op in block.ops:
            if isinstance(op, affine.YieldOp | scf.YieldOp | func.ReturnOp):
                return [env[v] for v in op.operands]
            self.op(op, env)
        raise AssertionError("block without terminator")

    @staticmethod
    def _bounds(amap: Any, operands: Sequence[Any]) -> tuple[int, ...]:
        nd = amap.num_dims
        ints = [int(x) for x in operands]
        return amap.eval(ints[:nd], ints[nd:])

    def op(self, op: Operation, env: dict[SSAValue, Any]) -> None:
        xs = [env[v] for v in op.operands]
        if isinstance(op, affine.ParallelOp):
            lmap, umap = op.lowerBoundsMap.data, op.upperBoundsMap.data
            nl = lmap.num_dims + lmap.num_symbols
            lbs = self._bounds(lmap, xs[:nl])
            ubs = self._bounds(umap, xs[nl:])
            ranges = []
            lg = op.lowerBoundsGroups.get_values()
            ug = op.upperBoundsGroups.get_values()
            li = ui = 0
            for a, b in zip(lg, ug, strict=True):
                lo = max(lbs[li : li + a])
                hi = min(ubs[ui : ui + b])
                li, ui = li + a, ui + b
                ranges.append(range(lo, hi))
            for point in itertools.product(*ranges):
                inner = dict(env)
                inner.update(zip(op.body.block.args, point))
                self.block(op.body.block, inner)
        elif isinstance(op, affine.ForOp):
            lmap, umap = op.lowerBoundMap.data, op.upperBoundMap.data
            lo = max(self._bounds(lmap, [env[v] for v in op.lowerBoundOperands]))
            hi = min(self._bounds(umap, [env[v] for v in op.upperBoundOperands]))
            for i in range(lo, hi, op.step.value.data):
                inner = dict(env)
                inner[op.body.block.args[0]] = i
                self.block(op.body.block, inner)
        elif isinstance(op, affine.LoadOp):
            idx = self._bounds(op.map.data, xs[1:])
            env[op.result] = np.asarray(xs[0][idx])
        elif isinstance(op, affine.StoreOp):
            idx = self._bounds(op.map.data, xs[2:])
            xs[1][idx] = xs[0]
        elif isinstance(op, memref.LoadOp):
            env[op.res] = np.asarray(xs[0][tuple(int(i) for i in xs[1:])])
        elif isinstance(op, memref.StoreOp):
            xs[1][tuple(int(i) for i in xs[2:])] = xs[0]
        elif isinstance(op, memref.AllocOp):
            t = op.memref.type
            shape = iter(int(x) for x in xs)
            dims = [next(shape) if d < 0 else d for d in t.get_shape()]
            dt = reference._storage_dtype(t.element_type)  # pyright: ignore
            env[op.memref] = np.full(dims, 77, dtype=dt)
        elif isinstance(op, memref.DeallocOp):
            pass
        elif isinstance(op, scf.IfOp):
            region = op.true_region if bool(xs[0]) else op.false_region
            env.update(zip(op.results, self.block(region.block, dict(env))))
        elif isinstance(op, func.CallOp):
            name = op.callee.string_value()
            # (the f32 function of a C name has an `f` suffix: `erfinvf`)
            f32 = isinstance(op.res[0].type, Float32Type)
            base = name.removesuffix("f") if f32 else name
            fn = self._CALLS.get(base) or special_functions.BUILTINS[base]
            dt = reference._storage_dtype(op.res[0].type)  # pyright: ignore
            env[op.res[0]] = np.asarray(fn(*xs)).astype(dt)
        else:
            arrays = [
                np.asarray(x, dtype=np.int64) if isinstance(x, int) else x for x in xs
            ]
            fn = reference._OPS[op.name]  # pyright: ignore
            env[op.results[0]] = reference.body_value(
                fn(op, arrays), op.results[0].type
            )


def _execute(
    kernel: Kernel, sizes: dict[str, int], specialise: bool
) -> tuple[list[Arr], list[Arr], int]:
    """Reference outputs, affine-stage outputs and the error flag."""
    tc_module = parse_tc(kernel.source, "catalog.tc")
    defop = reference.find_def(tc_module, kernel.entry)
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()) + sum(sizes.values()))
    inputs = kernel.inputs(rng, sizes)
    arrays, bound = reference.prepare_inputs(defop, inputs)
    expected = reference.run(tc_module, kernel.entry, inputs)
    module = _lower(kernel.source, bound if specialise else None)
    fn = next(
        o
        for o in module.ops
        if isinstance(o, func.FuncOp) and o.sym_name.data == defop.sym_name.data
    )

    # Buffers in the body form of their elements (uint8 viewed as int8,
    # bfloat16 bit patterns as float32 values ...).
    def storage(a: Arr, t: Any) -> Arr:
        return np.array(reference.tensor_to_body(a, t), copy=True)

    in_types = [t.element_type for t in defop.input_types]
    out_types = [t.element_type for t in defop.output_types]
    args: list[Any] = [storage(a, t) for a, t in zip(arrays, in_types)]
    outs = [
        np.full(e.shape, 99, dtype=storage(e, t).dtype)
        for e, t in zip(expected, out_types)
    ]
    args += outs
    flag = np.zeros(1, np.int32)
    if "tc.checked" in fn.attributes:
        args.append(flag)
    size_names = [s.data for s in fn.attributes["tc.sizes"].data]  # type: ignore[union-attr]
    args += [bound[n] for n in size_names]
    _Evaluator(module).call(defop.sym_name.data, args)
    got = [reference.body_to_tensor(o, t) for o, t in zip(outs, out_types, strict=True)]
    return expected, got, int(flag[0])


def _small(k: Kernel) -> dict[str, int]:
    """The catalog size set with the smallest iteration count."""
    return min(k.sizes, key=lambda s: math.prod(max(v, 1) for v in s.values()))


@pytest.mark.parametrize("specialise", [False, True], ids=["generic", "specialised"])
@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_catalog_numerics(kernel: Kernel, specialise: bool) -> None:
    sizes = _small(kernel)
    expected, got, flag = _execute(kernel, sizes, specialise)
    assert flag == 0
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        assert g.shape == e.shape and g.dtype == e.dtype, f"output {i}"
        if e.dtype.kind == "f":
            np.testing.assert_allclose(
                g, e, rtol=1e-5, atol=1e-5, err_msg=f"output {i}"
            )
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")


_MIXED = """
def mixed(float(N) A, uint8(N) U, int16(N) S, float s) -> (B, mx, mn, smax, cnt, bm, bx, R) {
    B(i) = A(i) * s
    B(i) = B(N - 1 - i)
    mx max=! A(r)
    mn(i) min=! U(i)
    mn(i) max= U(r) where i in 0:N
    smax max=! S(r)
    cnt +=! int32(A(r) > 0.0)
    bm min=! A(r) > 0.0
    bx max=! A(r) > 0.5
    R(i) = hypot(A(i), s) + fmod(A(i), s) + fdim(A(i), s) + erfc(A(i)) + exp10(A(i))
    R(i) +=! R(r) where r in 0:N, i in 0:N
}
"""


@pytest.mark.parametrize("specialise", [False, True], ids=["generic", "specialised"])
@pytest.mark.parametrize("n", [0, 1, 6])
def test_mixed_reductions_builtins_and_snapshot(n: int, specialise: bool) -> None:
    rng = np.random.default_rng(n)
    k = Kernel(
        "mixed",
        _MIXED,
        lambda r, s: [
            rng.uniform(-1, 1, n).astype(np.float32),
            rng.integers(0, 256, n).astype(np.uint8),
            rng.integers(-30000, 30000, n).astype(np.int16),
            0.75,
        ],
        lambda *a: None,
        [{"N": n}],
    )
    expected, got, flag = _execute(k, {"N": n}, specialise)
    assert flag == 0
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=f"output {i}")


def test_out_of_bounds_gather_sets_the_error_flag() -> None:
    k = next(k for k in KERNELS if k.name == "gather_rows")
    bad = Kernel(
        k.name,
        k.source,
        lambda r, s: [
            np.ones((3, 2), np.float32),
            np.array([0, 5, 1, -1], np.int32),
        ],
        k.expected,
        [{"V": 3, "W": 2, "L": 4}],
    )
    with pytest.raises(TCError, match="out of bounds"):
        _execute(bad, {"V": 3, "W": 2, "L": 4}, False)
    # The reference refuses; run the affine IR alone.
    module = _lower(k.source)
    out = np.full((4, 2), 7, np.float32)
    flag = np.zeros(1, np.int32)
    In = np.arange(6, dtype=np.float32).reshape(3, 2)
    Idx = np.array([0, 5, 1, -1], np.int32)
    _Evaluator(module).call("gather", [In, Idx, out, flag, 3, 2, 4])
    assert flag[0] == 1  # 'In' is tc.checked[0]
    np.testing.assert_array_equal(out[0], In[0])
    np.testing.assert_array_equal(out[2], In[1])
    np.testing.assert_array_equal(out[1], [0, 0])  # out-of-bounds reads give 0


# ------------------------------------------------------------- tc-specialize


def test_parse_sizes() -> None:
    assert parse_sizes("") == {}
    assert parse_sizes(" M = 4 , N=0") == {"M": 4, "N": 0}
    for bad in ["M", "M=", "=3", "M=x", "M=1,,N=2", "3=4"]:
        with pytest.raises(TCError, match=r"malformed|must be an integer"):
            parse_sizes(bad)
    with pytest.raises(TCError, match="cannot be negative"):
        parse_sizes("M=-1")
    with pytest.raises(TCError, match="bound twice"):
        parse_sizes("M=1,M=2")


def test_specialize_unknown_size() -> None:
    module = parse_tc(KERNELS[0].source, "x.tc")
    with pytest.raises(TCError, match="unknown size 'Q'"):
        TcSpecializePass("N=3,Q=4").apply(Context(), module)


def test_specialize_clamps_negative_extents() -> None:
    conv = next(k for k in KERNELS if k.name == "conv_valid")
    module = parse_tc(conv.source, "x.tc")
    TcSpecializePass("H=2,KH=3").apply(Context(), module)
    module.verify()
    text = str(module)
    assert "H - KH + 1" not in text and "[0, 0)" in text


_BOUNDS = """
def bounds(float(N) A, float(M) B) -> (O, P) {
    O(i) +=! A(r) + B(r) where i in 0:2, r in max(1, N - M):min(N, M)
    P(i) +=! A(r) where i in 0:2, r in min(1, N):max(N - 1, 0)
}
"""


@pytest.mark.parametrize("specialise", [False, True], ids=["generic", "specialised"])
@pytest.mark.parametrize(("n", "m"), [(5, 3), (3, 5), (1, 1), (0, 0), (9, 2)])
def test_min_max_bounds(n: int, m: int, specialise: bool) -> None:
    k = Kernel(
        "bounds",
        _BOUNDS,
        lambda r, s: [
            r.uniform(-1, 1, n).astype(np.float32),
            r.uniform(-1, 1, m).astype(np.float32),
        ],
        lambda *a: None,
        [{"N": n, "M": m}],
    )
    expected, got, _ = _execute(k, {"N": n, "M": m}, specialise)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
    if not specialise:
        text = str(_lower(_BOUNDS))
        assert "max affine_map<()[s0, s1] -> (1, (s0 + (s1 * -1)))>" in text
        assert "arith.minsi" in text and "arith.maxsi" in text
