"""Hexadecimal elements of dense float literals are bit patterns, as in MLIR.

xDSL 0.74 prints a dense float attribute holding a special value as the
value's bit pattern, as MLIR does (`dense<0xff800000> : vector<16xf32>` is a
splat of -inf), but it parses a hexadecimal element of a dense literal as an
integer and converts that to float, so the same text reads back as 4.29e9.
Any printed module with -inf, inf or NaN in a vector constant (the vector
accumulators of softmax's, log_softmax's and every register-tiled max
reduction start from -inf) therefore changed meaning silently when it was
parsed again, by `tc-opt` or by a user.

`install()` makes xDSL's attribute parser read such an element as MLIR does:
the element type's bits, which is what xDSL's own scalar `FloatAttr` parser
already does for `arith.constant 0xff800000 : f32`. It is called by
`tcdialect.dialects.get_all_dialects`, so every context tcdialect builds
(library, `tc-opt`, tests) parses with it; it changes nothing else:

    arith.constant dense<0xff800000> : vector<8xf32>          // -inf, 8 lanes
    arith.constant dense<[0x7fc00000, 1.0]> : vector<2xf32>   // NaN, 1.0
    arith.constant dense<0xff> : vector<4xi8>                 // integers: as before

A hexadecimal element wider than its float type is a parse error (MLIR's
"hexadecimal float constant out of range for type").
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import AnyFloat, ComplexType, IndexType, IntegerType
from xdsl.parser import AttrParser

_Element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]


class _HexElement(_Element):
    """A dense literal element written as a hexadecimal integer."""

    def to_type(
        self,
        parser: AttrParser,
        type: AnyFloat | IntegerType | IndexType | ComplexType,
    ) -> Any:
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        assert isinstance(self.value, int)
        try:
            raw = self.value.to_bytes(type.compile_time_size, "little")
        except OverflowError:
            parser.raise_error(
                f"hexadecimal float constant out of range for type {type}",
                at_position=self.span,
            )
        return next(type.iter_unpack(raw))


_installed = False


def install() -> None:
    """Parse hexadecimal dense float elements as bit patterns (idempotent)."""
    global _installed
    if _installed:
        return
    parse_element = AttrParser._parse_tensor_literal_element  # pyright: ignore[reportPrivateUsage]

    def parse_bits_or_element(self: AttrParser) -> _Element:
        hexadecimal = self._current_token.text[:2] in ("0x", "0X")  # pyright: ignore[reportPrivateUsage]
        element = parse_element(self)
        if hexadecimal and type(element.value) is int:
            return _HexElement(element.is_negative, element.value, element.span)
        return element

    AttrParser._parse_tensor_literal_element = parse_bits_or_element  # pyright: ignore[reportPrivateUsage]
    _installed = True
