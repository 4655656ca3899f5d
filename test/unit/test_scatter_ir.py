"""Scatter-accumulate comprehensions (``tc.yield %v at [...]``) in the tc
dialect and the reference interpreter: duplicates add up (``np.add.at``),
``+=!`` starts from zeros and ``+=`` from the ``into`` value, integer and
16-bit float targets, out-of-range subscripts, and the verifier's rules."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.math import Math
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from tcdialect import reference
from tcdialect.diagnostics import TCError
from tcdialect.dialects.tc import TC, ComprehensionOp


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Arith, Math, TC):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def scatter_def(elem: str, op: str = '"+=!"', into: str = "") -> str:
    """``dE(Idx(k), d) += g(k, d)`` into a [V, D] tensor (E gives V and D);
    with `into`, accumulated into ``S(v, d) = E(v, d)``."""
    start = (
        f"""%S = tc.comprehension @S(%v in [0, V), %e in [0, D)) "=" : !tc.tensor<[V, D], {elem}> {{
    %x = tc.read %E[%v, %e] : !tc.tensor<[V, D], {elem}>
    tc.yield %x : {elem}
  }}
  """
        if into
        else ""
    )
    return f"""tc.def @f<V, D, K>(E, Idx, g) -> (S) {{
^bb0(%E : !tc.tensor<[V, D], {elem}>, %Idx : !tc.tensor<[K], i32>, %g : !tc.tensor<[K, D], {elem}>):
  {start}%S{"_1" if into else ""} = tc.comprehension @S() {op} (%k in [0, K), %d in [0, D)) {into}: !tc.tensor<[V, D], {elem}> {{
    %0 = tc.read %Idx[%k] : !tc.tensor<[K], i32>
    %1 = arith.index_cast %0 : i32 to index
    %2 = tc.read %g[%k, %d] : !tc.tensor<[K, D], {elem}>
    tc.yield %2 at [%1, %d] : {elem}
  }}
  tc.return %S{"_1" if into else ""} : !tc.tensor<[V, D], {elem}>
}}"""


IDX = np.array([1, 3, 1, 0, 1], np.int32)


def expected(e: Any, g: Any, into: bool) -> Any:
    out = np.array(e, dtype=np.float64) if into else np.zeros(e.shape)
    np.add.at(out, IDX, g.astype(np.float64))
    return out


@pytest.mark.parametrize("into", [False, True])
def test_duplicates_add_up(into: bool) -> None:
    rng = np.random.default_rng(0)
    e = rng.standard_normal((4, 3))
    g = rng.standard_normal((5, 3))
    text = scatter_def("f64", '"+="' if into else '"+=!"', "into %S " if into else "")
    (out,) = reference.run(parse(text), None, [e, IDX, g])
    np.testing.assert_allclose(out, expected(e, g, into), rtol=1e-12)
    if not into:
        assert out[2].tolist() == [0.0, 0.0, 0.0]  # never written


def test_integer_and_half_targets() -> None:
    e = np.zeros((4, 2), np.int32)
    g = np.arange(10, dtype=np.int32).reshape(5, 2)
    (out,) = reference.run(parse(scatter_def("i32")), None, [e, IDX, g])
    np.testing.assert_array_equal(out, expected(e, g, False).astype(np.int32))
    # f16: accumulated in f32, rounded once (f16 steps of 2**-10 would stall)
    h = np.full((5, 2), 1.0 + 2**-10, np.float16)
    (half,) = reference.run(
        parse(scatter_def("f16")), None, [np.zeros((4, 2), np.float16), IDX, h]
    )
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, expected(e, h, False).astype(np.float16))


def test_out_of_range_subscript() -> None:
    bad = np.array([0, 4], np.int32)
    with pytest.raises(TCError, match="scatter into tensor 'S' out of bounds") as e:
        reference.run(
            parse(scatter_def("f32")),
            None,
            [np.zeros((4, 1), np.float32), bad, np.ones((2, 1), np.float32)],
        )
    assert "subscript 0 is 4 but the extent is 4 (Idx[1] = 4" in str(e.value)


def test_printed_form_round_trips() -> None:
    module = parse(scatter_def("f32"))
    text = str(module)
    assert "tc.yield %2 at [%1, %d] : f32" in text
    assert 'tc.comprehension @S() "+=!" (%k in [0, K), %d in [0, D))' in text
    op = next(o for o in module.walk() if isinstance(o, ComprehensionOp))
    assert op.is_scatter and op.num_output_indices == 0
    assert str(parse(text)) == text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("at [%1, %d]", "at [%1]"),
            "a scatter into a rank-2 tensor needs 2 subscripts, got 1",
        ),
        (('"+=!"', '"max=!"'), "a scatter accumulates with '+=' or '+=!', not 'max=!'"),
    ],
)
def test_verifier(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(VerifyException, match=re.escape(message)):
        parse(scatter_def("f32").replace(*edit))
