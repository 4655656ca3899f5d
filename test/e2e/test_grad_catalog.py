"""Derived gradients of the kernel catalog against finite differences.

For every differentiable kernel of the catalog (`test_reference_catalog.KERNELS`),
the source is rewritten to float64 (`float`, `float16`, `bfloat16` become
`double`), `tc-differentiate` derives ``@<name>_grad`` and the reference
interpreter evaluates both. The check is a random vector-Jacobian product
(two forward evaluations per kernel): for random output gradients ``g`` and a
random direction ``v`` in the differentiated inputs,
``<g, (f(x + eps v) - f(x - eps v)) / 2 eps>`` must equal ``<grad(x, g), v>``.

A handful of backward kernels also run compiled for the CPU target
(`tcdialect.grad`) against the reference interpreter.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

# test/unit is on pytest's pythonpath
from test_reference_catalog import KERNELS, Kernel
from test_tc_differentiate import vjp_check

import tcdialect
from tcdialect import reference
from tcdialect.autodiff import grad

Arr = np.ndarray[Any, Any]

#: Catalog kernels without a gradient check, and why.
NOT_CHECKED = {
    "cast": "integer output",
    "count_pos": "integer output",
    "integer_floor_div_mod": "integer inputs and outputs",
    "rnn": "recurrences are not differentiable yet",
    "lstm": "recurrences are not differentiable yet",
    # (lgamma, tgamma and logb have no derivative; the others' rules are
    # checked in test/unit/test_builtin_derivatives.py)
    "probability_builtins": "uses a builtin without a derivative",
    "gamma_bessel_builtins": "uses a builtin without a derivative",
}


def to_double(source: str) -> str:
    return re.sub(r"\b(bfloat16|float16|float32|float)\b", "double", source)


def double_inputs(
    k: Kernel, rng: np.random.Generator, sizes: dict[str, int]
) -> list[Any]:
    out: list[Any] = []
    for x in k.inputs(rng, sizes):
        a = np.asarray(x)
        if k.name.startswith("bf16") and a.dtype == np.uint16:
            a = tcdialect.bfloat16.from_bfloat16(a)
        out.append(
            a.astype(np.float64) if a.dtype.kind in "fu" and a.dtype != np.uint8 else a
        )
    return out


@pytest.mark.parametrize(
    "k", [k for k in KERNELS if k.name not in NOT_CHECKED], ids=lambda k: k.name
)
def test_catalog_vjp(k: Kernel) -> None:
    rng = np.random.default_rng(7)
    for sizes in k.sizes:  # including empty outputs and reductions
        vjp_check(to_double(k.source), k.entry, double_inputs(k, rng, sizes), 11)


#: Catalog kernels whose backward also runs compiled for the CPU (kron's
#: gradients are scatter-accumulates).
COMPILED = ["conv_valid", "maxpool", "softmax", "layernorm", "kron"]


@pytest.mark.parametrize("name", COMPILED)
def test_compiled_cpu_backward(name: str) -> None:
    k = next(k for k in KERNELS if k.name == name)
    rng = np.random.default_rng(3)
    inputs = [np.asarray(x) for x in k.inputs(rng, k.sizes[0])]
    fwd = tcdialect.define(k.source, k.entry, target="cpu")
    bwd = grad(fwd)
    outs = fwd(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    d_outs = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
    got = bwd(*inputs, *d_outs)
    got = got if isinstance(got, tuple) else (got,)
    want = reference.run(bwd.defop, None, [*inputs, *d_outs])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
