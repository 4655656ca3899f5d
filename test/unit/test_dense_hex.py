"""`DenseHexParser` reads hexadecimal dense float elements as bit patterns,
and loading tcdialect's dialects leaves xDSL's own `Parser` as it was."""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.parser import Parser

from tcdialect.dialects.dense_hex import DenseHexParser
from tcdialect.pipeline import make_context

TEXT = "%0 = arith.constant dense<[0xff800000, 0x7fc00000, 1.5]> : vector<3xf32>"


def _values(parser: type[Parser]) -> list[float]:
    module = parser(make_context(), TEXT).parse_module()
    op = next(iter(module.body.block.ops))
    assert isinstance(op, arith.ConstantOp)
    assert isinstance(op.value, DenseIntOrFPElementsAttr)
    return [float(v) for v in op.value.get_values()]


def test_hex_elements_are_bit_patterns():
    ninf, nan, x = _values(DenseHexParser)
    assert ninf == -math.inf and math.isnan(nan) and x == 1.5


def test_xdsl_parser_is_not_patched():
    # xDSL 0.74 reads the hexadecimal elements as integers converted to float.
    assert _values(Parser) == [4286578688.0, 2143289344.0, 1.5]
