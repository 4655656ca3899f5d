"""`Emitter`: the arith/math ops of the expansions, for one f32-like type.

The algorithms (`exp_log`, `trig`, `special`) call an `Emitter`'s methods
(`add`, `muladd`, `bits`, `cmp`, `select` ...) on `V` values; each call
inserts one op (or a few, for integer-mask conditions) before the op being
rewritten and returns its result. Python numbers become constants of the
right type, shared by the expansions of one block. Nothing else is rewritten
here.
"""

from __future__ import annotations

import math as pymath
import struct
from typing import Any

from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    VectorType,
    i32,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

# The values the algorithms below compute with: `SSAValue`s made by
# `Emitter` (any object with the same methods can run them, e.g. a NumPy
# emulation of f32 arithmetic, which is how they were developed).
V = Any
Num = V | float | int


def _mangled(t: Attribute) -> str:
    """LLVM's intrinsic suffix for f32, i32 or a 1-D vector of them."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_mangled(t.element_type)}"
    return "f32" if isinstance(t, Float32Type) else "i32"


def f32(v: float) -> float:
    """`v` rounded to the nearest f32."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _s32(v: int) -> int:
    """`v` modulo 2^32 as a signed 32-bit integer."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class Emitter:
    """Inserts ops before the op being rewritten, for float type `ftype`.

    Floats are `ftype`, integers `i32` or a vector of `i32` of the same shape.
    Conditions are `i1` from `arith.cmpf`, combined with `arith.andi/ori` and
    used by `arith.select`. With `masks` (always for vectors: xDSL 0.74's
    `arith.cmpf` and `arith.select` only have `i1` conditions) they are
    integer masks, all ones or zero: a comparison with a constant c is the
    sign of x - c (0 and +-inf have their own tests), one of two values the
    sign of the difference of integer keys ordered like the floats, NaN
    tests the sign of 0x7f800000 - (bits & 0x7fffffff); a select is
    `b ^ ((a ^ b) & mask)` on the bit patterns.

    Arguments that are Python numbers become constants of the right type
    (floats rounded to f32), shared by the expansions of one block.
    """

    def __init__(
        self,
        rewriter: PatternRewriter,
        ftype: Attribute,
        masks: bool,
        consts: dict[tuple[str, float | int], SSAValue] | None = None,
        native_ldexp: bool = False,
    ):
        self.rewriter = rewriter
        self.ftype = ftype
        self.native_ldexp = native_ldexp
        if isinstance(ftype, VectorType):
            self.itype: Attribute = VectorType(
                i32, ftype.get_shape(), ftype.scalable_dims
            )
            self.masks = True
        else:
            self.itype = i32
            self.masks = masks
        # Constants made so far, shared by the expansions in one block.
        self._consts = {} if consts is None else consts
        self._bits: dict[SSAValue, SSAValue] = {}
        self._mags: dict[SSAValue, SSAValue] = {}

    def _emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(op)
        return op.results[0]

    # constants ------------------------------------------------------------
    def f(self, v: float) -> SSAValue:
        v = f32(v)
        key = ("f", struct.unpack("<i", struct.pack("<f", v))[0])
        if key not in self._consts:
            t = self.ftype
            if isinstance(t, VectorType):
                attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, [v])
            else:
                attr = FloatAttr(v, Float32Type())
            self._consts[key] = self._emit(arith.ConstantOp(attr))
        return self._consts[key]

    def i(self, v: int) -> SSAValue:
        v = _s32(v)
        key = ("i", v)
        if key not in self._consts:
            t = self.itype
            if isinstance(t, VectorType):
                attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, [v])
            else:
                attr = IntegerAttr(v, i32)
            self._consts[key] = self._emit(arith.ConstantOp(attr))
        return self._consts[key]

    def _fv(self, a: Num) -> SSAValue:
        return self.f(a) if isinstance(a, float | int) else a

    def _iv(self, a: Num) -> SSAValue:
        if isinstance(a, int):
            return self.i(a)
        assert not isinstance(a, float), "an integer operand given as a float"
        return a

    # float arithmetic -------------------------------------------------------
    def add(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.AddfOp(self._fv(a), self._fv(b)))

    def sub(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.SubfOp(self._fv(a), self._fv(b)))

    def mul(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.MulfOp(self._fv(a), self._fv(b)))

    def muladd(self, a: Num, b: Num, c: Num) -> SSAValue:
        """`a * b + c`, contractible into an FMA."""
        contract = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])
        m = self._emit(arith.MulfOp(self._fv(a), self._fv(b), contract))
        return self._emit(arith.AddfOp(m, self._fv(c), contract))

    def div(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.DivfOp(self._fv(a), self._fv(b)))

    def fmin(self, a: Num, b: Num) -> SSAValue:
        """The smaller of `a` and `b`; a NaN operand gives the other one."""
        return self._emit(arith.MinnumfOp(self._fv(a), self._fv(b)))

    def fmax(self, a: Num, b: Num) -> SSAValue:
        """The larger of `a` and `b`; a NaN operand gives the other one."""
        return self._emit(arith.MaxnumfOp(self._fv(a), self._fv(b)))

    def clamp(self, a: V, lo: float, hi: float) -> SSAValue:
        """`a` limited to [lo, hi]; NaN stays NaN.

        Scalars: `a < lo ? lo : a`, then `> hi ? hi : ...` (x86: one
        min/max instruction each). Masks: minnum/maxnum, then the NaN back.
        """
        if not self.masks:
            a1 = self.select(self.cmp("olt", a, lo), lo, a)
            return self.select(self.cmp("ogt", a1, hi), hi, a1)
        c = self.fmin(self.fmax(a, lo), hi)
        return self.select(self.cmp("uno", a, a), a, c)

    def ldexp(self, a: V, n: V) -> SSAValue:
        """`a * 2^n` rounded once, by LLVM's `llvm.ldexp` intrinsic."""
        name = f"llvm.ldexp.{_mangled(self.ftype)}.{_mangled(self.itype)}"
        return self._emit(
            llvm.CallIntrinsicOp(name, [self._fv(a), self._iv(n)], [self.ftype])
        )

    def abs(self, a: V) -> SSAValue:
        return self._emit(math.AbsFOp(a))

    def copysign(self, a: Num, b: V) -> SSAValue:
        return self._emit(math.CopySignOp(self._fv(a), b))

    def sqrt(self, a: V) -> SSAValue:
        return self._emit(math.SqrtOp(a))

    # bits --------------------------------------------------------------------
    def bits(self, a: V) -> SSAValue:
        """The bit pattern of float `a` as an integer."""
        if a not in self._bits:
            self._bits[a] = self._emit(arith.BitcastOp(a, self.itype))
        return self._bits[a]

    def float(self, a: V) -> SSAValue:
        """The float whose bit pattern is integer `a`."""
        f = self._emit(arith.BitcastOp(a, self.ftype))
        self._bits[f] = a
        return f

    def iadd(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.AddiOp(self._iv(a), self._iv(b)))

    def isub(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.SubiOp(self._iv(a), self._iv(b)))

    def shl(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.ShLIOp(self._iv(a), self._iv(b)))

    def ashr(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.ShRSIOp(self._iv(a), self._iv(b)))

    def iand(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.AndIOp(self._iv(a), self._iv(b)))

    def ior(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.OrIOp(self._iv(a), self._iv(b)))

    def ixor(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.XOrIOp(self._iv(a), self._iv(b)))

    def imin(self, a: Num, b: Num) -> SSAValue:
        return self._emit(arith.MinSIOp(self._iv(a), self._iv(b)))

    # conditions ------------------------------------------------------------
    def cmp(self, pred: str, a: V, b: Num) -> SSAValue:
        """`arith.cmpf` predicate `pred` (`olt`, `uge`, `uno`, ...) of `a`, `b`."""
        if not self.masks:
            return self._emit(arith.CmpfOp(a, self._fv(b), pred))
        return self._mask_cmp(pred, a, b)

    def both(self, c: V, d: V) -> SSAValue:
        if not self.masks:
            return self._emit(arith.AndIOp(c, d))
        return self.iand(c, d)

    def either(self, c: V, d: V) -> SSAValue:
        if not self.masks:
            return self._emit(arith.OrIOp(c, d))
        return self.ior(c, d)

    def select(self, c: V, a: Num, b: Num) -> SSAValue:
        """`a` where condition `c` holds, else `b` (floats)."""
        if not self.masks:
            return self._emit(arith.SelectOp(c, self._fv(a), self._fv(b)))
        ab, bb = self._float_bits(a), self._float_bits(b)
        return self.float(self.ixor(bb, self.iand(self.ixor(ab, bb), c)))

    # integer-mask conditions ---------------------------------------------------
    def _float_bits(self, a: Num) -> SSAValue:
        if isinstance(a, float | int):
            return self.i(struct.unpack("<i", struct.pack("<f", f32(a)))[0])
        return self.bits(a)

    def _mag(self, a: V) -> SSAValue:
        """The bits of |a|."""
        if a not in self._mags:
            self._mags[a] = self.iand(self.bits(a), 0x7FFFFFFF)
        return self._mags[a]

    def _nonzero(self, v: V) -> SSAValue:
        """Mask of integer `v` != 0 (the sign of v | -v)."""
        return self.ashr(self.ior(v, self.isub(0, v)), 31)

    def _isnan_mask(self, a: V) -> SSAValue:
        return self.ashr(self.isub(0x7F800000, self._mag(a)), 31)

    def _key(self, a: V) -> SSAValue:
        """An integer ordered like float `a` (+-0 alike; meaningless for NaN)."""
        b = self.bits(a)
        sign = self.ashr(b, 31)
        return self.isub(self.ixor(self._mag(a), sign), sign)

    def _less(self, ka: V, kb: V) -> SSAValue:
        """Mask of signed `ka < kb` (the sign of `ka - kb`, overflow corrected)."""
        d = self.isub(ka, kb)
        wrong = self.iand(self.ixor(ka, kb), self.ixor(d, ka))
        return self.ashr(self.ixor(d, wrong), 31)

    def _mask_cmp(self, pred: str, a: V, b: Num) -> SSAValue:
        nan = self._isnan_mask(a)
        rel = pred[1:]
        lt: SSAValue | None = None  # a < b, a > b for ordered a (any value for NaN)
        gt: SSAValue | None = None
        if not isinstance(b, float | int):
            if b is not a:
                nan = self.ior(nan, self._isnan_mask(b))
            if pred in ("uno", "ord"):
                return nan if pred == "uno" else self.ixor(nan, -1)
            ka, kb = self._key(a), self._key(b)
            if rel in ("lt", "ge", "eq", "ne"):
                lt = self._less(ka, kb)
            if rel in ("gt", "le", "eq", "ne"):
                gt = self._less(kb, ka)
            return self._mask_relation(pred, lt, gt, nan)
        if pred in ("uno", "ord"):
            return nan if pred == "uno" else self.ixor(nan, -1)
        c = f32(float(b))
        if c == 0:  # the sign, unless +-0
            nz = self._nonzero(self._mag(a))
            neg = self.ashr(self.bits(a), 31)
            if rel in ("lt", "ge", "eq", "ne"):
                lt = self.iand(neg, nz)
            if rel in ("gt", "le", "eq", "ne"):
                gt = self.iand(self.ixor(neg, -1), nz)
        elif pymath.isinf(c):  # a != c is a < +inf or a > -inf
            ne = self._nonzero(self.ixor(self.bits(a), self._float_bits(c)))
            lt, gt = (ne, self.i(0)) if c > 0 else (self.i(0), ne)
        else:  # the sign of a - c: exact, never 0 unless a == c
            if rel in ("lt", "ge", "eq", "ne"):
                lt = self.ashr(self.bits(self.sub(a, c)), 31)
            if rel in ("gt", "le", "eq", "ne"):
                gt = self.ashr(self.bits(self.sub(c, a)), 31)
        return self._mask_relation(pred, lt, gt, nan)

    def _mask_relation(
        self, pred: str, lt: SSAValue | None, gt: SSAValue | None, nan: SSAValue
    ) -> SSAValue:
        """Predicate `pred` from the masks of a < b, a > b and unordered."""
        rel = pred[1:]
        if rel in ("lt", "ge"):
            assert lt is not None
            m = lt
        elif rel in ("gt", "le"):
            assert gt is not None
            m = gt
        else:
            assert lt is not None and gt is not None
            m = self.ior(lt, gt)
        if rel in ("ge", "le", "eq"):
            m = self.ixor(m, -1)
        if pred[0] == "o":  # NaN makes o* false, u* true
            return self.iand(m, self.ixor(nan, -1))
        return self.ior(m, nan)
