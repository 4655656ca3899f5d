"""`DenseHexParser`: xDSL's parser, reading hexadecimal dense float elements as bits.

xDSL 0.74 prints a dense float attribute holding a special value as the
value's bit pattern, as MLIR does (`dense<0xff800000> : vector<16xf32>` is a
splat of -inf), but it parses a hexadecimal element of a dense literal as an
integer and converts that to float, so the same text reads back as 4.29e9.
Any printed module with -inf, inf or NaN in a vector constant (the vector
accumulators of softmax's, log_softmax's and every register-tiled max
reduction start from -inf) would change meaning silently when parsed again.

`DenseHexParser` is `xdsl.parser.Parser` with that one difference: it reads
such an element as MLIR does, as the element type's bits (what xDSL's own
scalar `FloatAttr` parser already does for `arith.constant 0xff800000 :
f32`). Everything else parses as before; xDSL's `Parser` itself is not
changed. Whoever parses IR that tcdialect printed builds this parser (or a
subclass): `tc-opt` (`tc_opt_main.LocatingParser`) and the tests that read
stages back::

    arith.constant dense<0xff800000> : vector<8xf32>          // -inf, 8 lanes
    arith.constant dense<[0x7fc00000, 1.0]> : vector<2xf32>   // NaN, 1.0
    arith.constant dense<0xff> : vector<4xi8>                 // integers: as before

A hexadecimal element wider than its float type is a parse error (MLIR's
"hexadecimal float constant out of range for type").
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import AnyFloat, ComplexType, IndexType, IntegerType
from xdsl.parser import AttrParser, Parser

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


class DenseHexParser(Parser):
    """xDSL's IR parser; hexadecimal dense float elements are bit patterns."""

    def _parse_tensor_literal_element(self) -> _Element:
        hexadecimal = self._current_token.text[:2] in ("0x", "0X")
        element = super()._parse_tensor_literal_element()
        if hexadecimal and type(element.value) is int:
            return _HexElement(element.is_negative, element.value, element.span)
        return element
