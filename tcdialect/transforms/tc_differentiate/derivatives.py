"""The derivative table of `tc-differentiate`: reverse-mode over one
comprehension body (`_body_adjoint`), with the rules of the `arith`, `math`
and `tc.builtin` ops (`_UNARY`, `_UNARY_BUILTIN`, `_builtin_adjoint`), the
builtins without a derivative (`_NOT_DIFFERENTIABLE`,
`_NO_BUILTIN_DERIVATIVE`) and `_depends`, whether a value is
computed from another through float values."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from tcdialect.diagnostics import TCError
from tcdialect.dialects import tc
from tcdialect.transforms.tc_differentiate.body import _Body, is_float_type
from tcdialect.transforms.tc_differentiate.subscripts import _render

#: Builtins whose derivative is zero almost everywhere and undefined at their
#: jumps: differentiating through them is an error.
_NOT_DIFFERENTIABLE = {
    "math.floor": "floor",
    "math.ceil": "ceil",
    "math.trunc": "trunc",
    "math.round": "round",
    "math.roundeven": "round",
}

#: `tc.builtin`s without a derivative rule, and why.
_NO_BUILTIN_DERIVATIVE = {
    "lgamma": "its derivative, digamma, is not a builtin",
    "tgamma": "its derivative needs digamma, which is not a builtin",
    "logb": "it is piecewise constant",
}


def _depends(v: SSAValue, on: SSAValue) -> bool:
    """Whether `v` is computed from `on` through float values."""
    seen: set[SSAValue] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if x == on:
            return True
        if x in seen:
            continue
        seen.add(x)
        owner = x.owner
        if isinstance(owner, Operation) and not isinstance(owner, tc.ReadOp):
            if is_float_type(x.type):
                stack.extend(owner.operands)
    return False


_LN2 = pymath.log(2.0)
_LN10 = pymath.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / pymath.sqrt(pymath.pi)


def _body_adjoint(
    op: tc.ComprehensionOp,
    vm: dict[SSAValue, SSAValue],
    body: _Body,
    y: SSAValue,
    seed: SSAValue,
    target: SSAValue,
    error: Callable[[str], TCError],
) -> SSAValue | None:
    """Reverse-mode over the cloned body: d(y)/d(target) * seed, or None if 0."""
    ops = [vm[o.results[0]].owner for o in op.body.block.ops if o.results]
    active: set[SSAValue] = {target}
    for o in ops:
        assert isinstance(o, Operation)
        if o is target.owner:
            continue
        if any(x in active for x in o.operands) and is_float_type(o.results[0].type):
            active.add(o.results[0])
    if y not in active:
        return None
    adj: dict[SSAValue, SSAValue] = {y: seed}

    def acc(x: SSAValue, g: SSAValue) -> None:
        if x in active:
            adj[x] = body.add(adj[x], g) if x in adj else g

    for o in reversed(ops):
        assert isinstance(o, Operation)
        r = o.results[0]
        if r not in adj or o is target.owner:
            continue
        g = adj[r]
        t = r.type
        xs = o.operands
        one = lambda: body.fconst(1.0, t)  # noqa: E731
        zero = lambda: body.fconst(0.0, t)  # noqa: E731
        name = o.name
        if isinstance(o, tc.BuiltinOp) and o.callee.data in _NO_BUILTIN_DERIVATIVE:
            raise error(
                f"the builtin '{o.callee.data}' in the statement defining "
                f"'{op.target.data}' ({_render(_vm_inverse(vm, r))}) has no "
                f"derivative: {_NO_BUILTIN_DERIVATIVE[o.callee.data]}"
            )
        if name in _NOT_DIFFERENTIABLE:
            raise error(
                f"the builtin '{_NOT_DIFFERENTIABLE[name]}' in the statement "
                f"defining '{op.target.data}' ({_render(_vm_inverse(vm, r))}) has no "
                "derivative; wrap its argument in a value that does not depend on "
                "the differentiated inputs"
            )
        if name == "arith.addf":
            acc(xs[0], g)
            acc(xs[1], g)
        elif name == "arith.subf":
            acc(xs[0], g)
            if xs[1] in active:
                acc(xs[1], body.neg(g))
        elif name == "arith.mulf":
            if xs[0] in active:
                acc(xs[0], body.mul(g, xs[1]))
            if xs[1] in active:
                acc(xs[1], body.mul(g, xs[0]))
        elif name == "arith.divf":
            if xs[0] in active:
                acc(xs[0], body.div(g, xs[1]))
            if xs[1] in active:
                acc(xs[1], body.neg(body.div(body.mul(g, r), xs[1])))
        elif name == "arith.negf":
            acc(xs[0], body.neg(g))
        elif name in (
            "arith.maximumf",
            "arith.minimumf",
            "arith.maxnumf",
            "arith.minnumf",
        ):
            # the first operand equal to the result gets the gradient
            first = body.cmpf(xs[0], r, "oeq")
            if xs[0] in active:
                acc(xs[0], body.select(first, g, zero()))
            if xs[1] in active:
                acc(xs[1], body.select(first, zero(), g))
        elif name == "arith.select":
            if xs[1] in active:
                acc(xs[1], body.select(xs[0], g, zero()))
            if xs[2] in active:
                acc(xs[2], body.select(xs[0], zero(), g))
        elif name == "arith.extf":
            acc(xs[0], body.op(arith.TruncFOp(g, xs[0].type)))
        elif name == "arith.truncf":
            acc(xs[0], body.op(arith.ExtFOp(g, xs[0].type)))
        elif name in _UNARY:
            acc(xs[0], body.mul(g, _UNARY[name](body, xs[0], r, one)))
        elif name == "math.powf":
            a, p = xs
            if a in active:
                pm1 = body.sub(p, one())
                acc(a, body.mul(g, body.mul(p, body.op(math.PowFOp(a, pm1)))))
            if p in active:
                acc(p, body.mul(g, body.mul(r, body.op(math.LogOp(a)))))
        elif name == "math.atan2":
            a, b = xs  # atan2(a, b)
            den = body.add(body.mul(a, a), body.mul(b, b))
            if a in active:
                acc(a, body.mul(g, body.div(b, den)))
            if b in active:
                acc(b, body.neg(body.mul(g, body.div(a, den))))
        elif name == "math.copysign":
            a, b = xs
            if a in active:
                sa = body.op(math.CopySignOp(one(), a))
                sb = body.op(math.CopySignOp(one(), b))
                acc(a, body.mul(g, body.mul(sa, sb)))
        elif name == "math.fma":
            a, b, c = xs
            if a in active:
                acc(a, body.mul(g, b))
            if b in active:
                acc(b, body.mul(g, a))
            acc(c, g)
        elif isinstance(o, tc.BuiltinOp):
            _builtin_adjoint(o, body, g, acc, active, zero)
        elif is_float_type(t):
            raise error(
                f"no derivative rule for '{name}' in the statement defining "
                f"'{op.target.data}'"
            )
    return adj.get(target)


def _vm_inverse(vm: dict[SSAValue, SSAValue], v: SSAValue) -> SSAValue:
    for k, x in vm.items():
        if x == v:
            return k
    return v


_Unary = Callable[[_Body, SSAValue, SSAValue, Callable[[], SSAValue]], SSAValue]


def _sq(b: _Body, x: SSAValue) -> SSAValue:
    return b.mul(x, x)


_UNARY: dict[str, _Unary] = {
    "math.exp": lambda b, x, y, one: y,
    "math.exp2": lambda b, x, y, one: b.mul(y, b.fconst(_LN2, y.type)),
    "math.expm1": lambda b, x, y, one: b.add(y, one()),
    "math.log": lambda b, x, y, one: b.div(one(), x),
    "math.log2": lambda b, x, y, one: b.div(one(), b.mul(x, b.fconst(_LN2, x.type))),
    "math.log10": lambda b, x, y, one: b.div(one(), b.mul(x, b.fconst(_LN10, x.type))),
    "math.log1p": lambda b, x, y, one: b.div(one(), b.add(x, one())),
    "math.sqrt": lambda b, x, y, one: b.div(b.fconst(0.5, y.type), y),
    "math.rsqrt": lambda b, x, y, one: b.mul(
        b.fconst(-0.5, y.type), b.mul(y, _sq(b, y))
    ),
    "math.cbrt": lambda b, x, y, one: b.div(
        one(), b.mul(b.fconst(3.0, y.type), _sq(b, y))
    ),
    "math.sin": lambda b, x, y, one: b.op(math.CosOp(x)),
    "math.cos": lambda b, x, y, one: b.neg(b.op(math.SinOp(x))),
    "math.tan": lambda b, x, y, one: b.add(one(), _sq(b, y)),
    "math.asin": lambda b, x, y, one: b.op(math.RsqrtOp(b.sub(one(), _sq(b, x)))),
    "math.acos": lambda b, x, y, one: b.neg(
        b.op(math.RsqrtOp(b.sub(one(), _sq(b, x))))
    ),
    "math.atan": lambda b, x, y, one: b.div(one(), b.add(one(), _sq(b, x))),
    "math.sinh": lambda b, x, y, one: b.op(math.CoshOp(x)),
    "math.cosh": lambda b, x, y, one: b.op(math.SinhOp(x)),
    "math.tanh": lambda b, x, y, one: b.sub(one(), _sq(b, y)),
    "math.asinh": lambda b, x, y, one: b.op(math.RsqrtOp(b.add(_sq(b, x), one()))),
    "math.acosh": lambda b, x, y, one: b.op(math.RsqrtOp(b.sub(_sq(b, x), one()))),
    "math.atanh": lambda b, x, y, one: b.div(one(), b.sub(one(), _sq(b, x))),
    "math.erf": lambda b, x, y, one: b.mul(
        b.fconst(_TWO_OVER_SQRT_PI, x.type), b.op(math.ExpOp(b.neg(_sq(b, x))))
    ),
    "math.absf": lambda b, x, y, one: b.op(math.CopySignOp(one(), x)),
}


_SQRT_PI_OVER_2 = pymath.sqrt(pymath.pi) / 2
_SQRT_2PI = pymath.sqrt(2 * pymath.pi)


def _call(b: _Body, name: str, x: SSAValue) -> SSAValue:
    return b.op(tc.BuiltinOp(name, [x]))


def _over_x(b: _Body, f: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    """f - y/x, 1/2 at x = 0 (the derivative of j1 and cyl_bessel_i1)."""
    d = b.sub(f, b.div(y, x))
    zero = b.cmpf(x, b.fconst(0.0, x.type), "oeq")
    return b.select(zero, b.fconst(0.5, x.type), d)


#: d builtin(x)/dx of the unary `tc.builtin`s, from x and the result y.
_UNARY_BUILTIN: dict[str, _Unary] = {
    "erfinv": lambda b, x, y, one: b.mul(
        b.fconst(_SQRT_PI_OVER_2, y.type), b.op(math.ExpOp(_sq(b, y)))
    ),
    "erfcinv": lambda b, x, y, one: b.mul(
        b.fconst(-_SQRT_PI_OVER_2, y.type), b.op(math.ExpOp(_sq(b, y)))
    ),
    "normcdf": lambda b, x, y, one: b.mul(
        b.fconst(1 / _SQRT_2PI, x.type),
        b.op(math.ExpOp(b.mul(b.fconst(-0.5, x.type), _sq(b, x)))),
    ),
    "normcdfinv": lambda b, x, y, one: b.mul(
        b.fconst(_SQRT_2PI, y.type),
        b.op(math.ExpOp(b.mul(b.fconst(0.5, y.type), _sq(b, y)))),
    ),
    "erfcx": lambda b, x, y, one: b.sub(
        b.mul(b.fconst(2.0, x.type), b.mul(x, y)),
        b.fconst(_TWO_OVER_SQRT_PI, x.type),
    ),
    "sinpi": lambda b, x, y, one: b.mul(
        b.fconst(pymath.pi, x.type), _call(b, "cospi", x)
    ),
    "cospi": lambda b, x, y, one: b.mul(
        b.fconst(-pymath.pi, x.type), _call(b, "sinpi", x)
    ),
    "rcbrt": lambda b, x, y, one: b.mul(b.fconst(-1 / 3, y.type), _sq(b, _sq(b, y))),
    "j0": lambda b, x, y, one: b.neg(_call(b, "j1", x)),
    "j1": lambda b, x, y, one: _over_x(b, _call(b, "j0", x), x, y),
    "y0": lambda b, x, y, one: b.neg(_call(b, "y1", x)),
    "y1": lambda b, x, y, one: b.sub(_call(b, "y0", x), b.div(y, x)),
    "cyl_bessel_i0": lambda b, x, y, one: _call(b, "cyl_bessel_i1", x),
    "cyl_bessel_i1": lambda b, x, y, one: _over_x(
        b, _call(b, "cyl_bessel_i0", x), x, y
    ),
}


def _builtin_adjoint(
    o: tc.BuiltinOp,
    body: _Body,
    g: SSAValue,
    acc: Callable[[SSAValue, SSAValue], None],
    active: set[SSAValue],
    zero: Callable[[], SSAValue],
) -> None:
    """Adjoints of the operands of a `tc.builtin` (`tc.BUILTINS`)."""
    name = o.callee.data
    xs = o.args
    r = o.result
    if name == "erfc":
        x = xs[0]
        e = body.op(math.ExpOp(body.neg(body.mul(x, x))))
        acc(x, body.mul(g, body.mul(body.fconst(-_TWO_OVER_SQRT_PI, x.type), e)))
    elif name == "exp10":
        acc(xs[0], body.mul(g, body.mul(r, body.fconst(_LN10, r.type))))
    elif name in ("hypot", "norm3d", "norm4d"):
        for x in xs:
            if x in active:
                acc(x, body.mul(g, body.div(x, r)))
    elif name in ("rhypot", "rnorm3d", "rnorm4d"):  # -x y^3
        for x in xs:
            if x in active:
                acc(x, body.neg(body.mul(g, body.mul(x, body.mul(r, _sq(body, r))))))
    elif name in _UNARY_BUILTIN:
        one = lambda: body.fconst(1.0, r.type)  # noqa: E731
        acc(xs[0], body.mul(g, _UNARY_BUILTIN[name](body, xs[0], r, one)))
    elif name == "nextafter":
        acc(xs[0], g)
    elif name == "remainder":  # a - n b, n = a / b rounded to even
        a, b = xs
        acc(a, g)
        if b in active:
            n = body.op(math.RoundEvenOp(body.div(a, b)))
            acc(b, body.neg(body.mul(g, n)))
    elif name == "fdim":
        a, b = xs
        pos = body.cmpf(a, b, "ogt")
        if a in active:
            acc(a, body.select(pos, g, zero()))
        if b in active:
            acc(b, body.select(pos, body.neg(g), zero()))
    elif name == "fmod":
        a, b = xs
        acc(a, g)
        if b in active:
            q = body.op(math.TruncOp(body.div(a, b)))
            acc(b, body.neg(body.mul(g, q)))
    else:  # pragma: no cover - tc.BUILTINS is closed
        raise AssertionError(name)
