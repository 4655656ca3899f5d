"""The saving backward of `tc-differentiate` (the rematerialisation policy)
against finite differences and the recomputing backward.

For every differentiable kernel of the catalog (in float64, as
`test_grad_catalog` checks them), ``@<name>_fwd`` must return the forward's
outputs exactly and, with the tensors it saves, ``@<name>_grad`` must give
the gradient that finite differences give (a random vector-Jacobian
product), for ``save=auto`` and ``save=all``; with a budget of 0 the two
backward definitions are the same. (`forward_backward` runs compiled in
`test_bench_backward` and, through PyTorch, in `test_torch_autograd`.)
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from test_grad_catalog import NOT_CHECKED, double_inputs, to_double
from test_reference_catalog import KERNELS, Kernel

from tcdialect import reference
from tcdialect.diagnostics import TCError
from tcdialect.frontend import parse_tc
from tcdialect.symbolic import SizeExpr
from tcdialect.transforms.tc_differentiate import (
    Policy,
    differentiate,
    differentiate_saving,
    float_inputs,
)

Arr = np.ndarray[Any, Any]

#: As `test_grad_catalog` checks them; recurrences (``for t in``) are not
#: differentiable yet.
CHECKED = [
    k
    for k in KERNELS
    if k.name not in NOT_CHECKED and not re.search(r"^\s*for\b", k.source, re.M)
]


def saving_vjp_check(k: Kernel, policy: Policy, seed: int) -> tuple[str, ...]:
    """Check the saving backward of `k` under `policy` against central
    differences; return the names it saves."""
    d = reference.find_def(parse_tc(to_double(k.source)), k.entry)
    fwd, bwd = differentiate_saving(d, None, policy)
    rng = np.random.default_rng(seed)
    inputs = double_inputs(k, rng, k.sizes[0])
    outs = reference.run(d, None, inputs)
    returned = reference.run(fwd, None, inputs)
    for o, r in zip(outs, returned):
        np.testing.assert_array_equal(o, r)
    by_name = dict(zip(fwd.output_names, returned))
    n_in = len(d.input_names)
    saved = bwd.input_names[n_in : len(bwd.input_names) - len(outs)]
    d_outs = [
        rng.standard_normal(o.shape).astype(o.dtype)
        if o.dtype.kind == "f"
        else np.zeros_like(o)
        for o in outs
    ]
    grads = reference.run(bwd, None, [*inputs, *(by_name[n] for n in saved), *d_outs])
    idx = [d.input_names.index(n) for n in float_inputs(d)]
    v = {i: rng.standard_normal(np.shape(inputs[i])) for i in idx}
    eps = 1e-6

    def f(sign: float) -> tuple[Arr, ...]:
        xs = list(inputs)
        for i in idx:
            xs[i] = np.asarray(inputs[i]) + sign * eps * v[i]
        return reference.run(d, None, xs)

    plus, minus = f(1.0), f(-1.0)
    lhs = sum(
        float(np.sum(g * (p - m) / (2 * eps)))
        for g, p, m in zip(d_outs, plus, minus)
        if p.dtype.kind == "f"
    )
    rhs = sum(float(np.sum(g * v[i])) for g, i in zip(grads, idx))
    scale = 1.0 + sum(float(np.sum(np.abs(g * v[i]))) for g, i in zip(grads, idx))
    assert abs(lhs - rhs) <= 1e-6 * scale, (lhs, rhs)
    return saved


@pytest.mark.parametrize("k", CHECKED, ids=lambda k: k.name)
def test_saving_vjp(k: Kernel) -> None:
    saving_vjp_check(k, Policy("auto"), 11)
    saving_vjp_check(k, Policy("all"), 12)


def test_what_is_saved() -> None:
    """The policy's choices on the catalog: the reductions and the
    transcendentals with ``auto``, every version the backward reads with
    ``all``, nothing within 0."""
    by_name = {k.name: k for k in CHECKED}
    auto = {
        "softmax": ("mx", "e", "s", "mx_first"),  # (with mx, its first maximum)
        "layernorm": ("mean_saved", "var_saved"),
        "mlp2": ("O1_saved", "O2_saved"),
        "maxpool": ("O",),
        "matmul": (),
        "conv_valid": (),
    }
    for name, saved in auto.items():
        assert saving_vjp_check(by_name[name], Policy("auto"), 1) == saved, name
    assert saving_vjp_check(by_name["layernorm"], Policy("all"), 1) == ("cen", "var")
    d = reference.find_def(parse_tc(by_name["layernorm"].source))
    fwd, bwd = differentiate_saving(d, None, Policy("auto", SizeExpr.lit(0)))
    assert fwd.output_names == d.output_names
    assert str(bwd) == str(differentiate(d))


def test_bad_policy() -> None:
    with pytest.raises(TCError, match="save='some' is not one of none, auto, all"):
        Policy.parse("some", None)
    with pytest.raises(TCError, match=re.escape("memory-budget='N +' is not a size")):
        Policy.parse("auto", "N +")
