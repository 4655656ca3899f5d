"""The split of `convert-to-llvm` by dialect: modules importable on their own,
handler tables that compose without overriding each other.

A device lowering will reuse the arith, math, memref, vector and func/cf
handlers with its own runtime part, so none of those may pull in the CPU
runtime lowering (`cpu_runtime`).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from tcdialect.conversion.convert_to_llvm import cpu_handlers
from tcdialect.conversion.convert_to_llvm.arith import populate_arith_to_llvm
from tcdialect.conversion.convert_to_llvm.cpu_runtime import (
    populate_cpu_runtime_to_llvm,
)
from tcdialect.conversion.convert_to_llvm.func_cf import populate_func_cf_to_llvm
from tcdialect.conversion.convert_to_llvm.lowering import Handler
from tcdialect.conversion.convert_to_llvm.math import populate_math_to_llvm
from tcdialect.conversion.convert_to_llvm.memref import populate_memref_to_llvm
from tcdialect.conversion.convert_to_llvm.vector import populate_vector_to_llvm

PACKAGE = "tcdialect.conversion.convert_to_llvm"
RUNTIME = f"{PACKAGE}.cpu_runtime"

SHARED_MODULES = [
    "type_converter",
    "memref_abi",
    "lowering",
    "arith",
    "math",
    "memref",
    "vector",
    "func_cf",
]

POPULATE = {
    "arith": populate_arith_to_llvm,
    "math": populate_math_to_llvm,
    "memref": populate_memref_to_llvm,
    "vector": populate_vector_to_llvm,
    "func_cf": populate_func_cf_to_llvm,
    "cpu_runtime": populate_cpu_runtime_to_llvm,
}


@pytest.mark.parametrize("module", ["", *SHARED_MODULES])
def test_shared_modules_do_not_import_the_cpu_runtime(module: str):
    name = f"{PACKAGE}.{module}" if module else PACKAGE
    code = (
        "import sys, importlib\n"
        f"importlib.import_module({name!r})\n"
        f"assert {RUNTIME!r} not in sys.modules\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def _table(populate: Callable[[dict[str, Handler]], None]) -> dict[str, Handler]:
    table: dict[str, Handler] = {}
    populate(table)
    return table


def test_each_op_has_one_handler_across_the_tables():
    seen: dict[str, str] = {}
    for module, populate in POPULATE.items():
        for op in _table(populate):
            assert op not in seen, f"{op} in both {seen[op]} and {module}"
            seen[op] = module
    assert set(cpu_handlers()) == set(seen)


def test_tables_cover_their_own_dialect():
    prefixes = {
        "arith": ("arith.",),
        "math": ("math.",),
        "memref": ("memref.",),
        "vector": ("vector.",),
        "func_cf": ("func.", "cf."),
    }
    for module, allowed in prefixes.items():
        ops = _table(POPULATE[module])
        assert ops and all(op.startswith(allowed) for op in ops), (module, ops)


def test_the_runtime_part_holds_exactly_the_calls_into_the_host():
    ops = set(_table(populate_cpu_runtime_to_llvm))
    assert {"tcrt.parallel_for", "memref.alloc", "memref.dealloc"} <= ops
    others = ops - {"tcrt.parallel_for", "memref.alloc", "memref.dealloc"}
    # the rest are math ops lowered to C library calls
    assert others and all(op.startswith("math.") for op in others)
    assert not ops & set(_table(populate_memref_to_llvm))
    assert not ops & set(_table(populate_math_to_llvm))
