"""A seeded random TC program generator, a differential checker and a reducer.

`generate(seed)` builds a `Program`: one TC definition (source text, entry
name), its size parameters with concrete values, and a recipe for its input
arrays (NumPy, deterministic from the seed). `check(program, options)` runs
the NumPy reference interpreter (`tcdialect.reference.run`) and the kernel
compiled with ``tcdialect.CpuOptions(**options)`` on those inputs and returns
a `Failure` or None. `reduce(program, still_fails)` shrinks a failing program
while the failure persists. `save`/`load` write and read reproducers (a
``.tc`` file whose ``# tcgen:`` header line holds the sizes and input recipe).
``python -m tcdialect.testing.tcgen`` is the command line (`tcgen.cli`).

Modules: `model` (the program: expression trees, statements, `Program`,
reproducer files), `extents` (what the generator tracks: extents, value
intervals), `generator` (sizes, inputs, the statement sequence, outputs),
`statement` (indices, ranges and subscripts of one statement),
`expressions` (typed right-hand sides), `checker`, `reducer` and `cli`.

Generated constructs (every program is meant to be accepted by the frontend;
a rejection is a generator bug or a frontend bug, and `check` reports it):

* 1-3 size parameters (values 0..13, some forced >= 1), inputs of rank 0-3
  with size-parameter and literal extents; float32 (sometimes float64) and
  int32 (sometimes int64) element types; int32 index tensors for gathers.
* 2-5 statements per definition, writing outputs and temporaries (tensors
  neither input nor output, TC-LANGUAGE.md §4.2 ext); rank-0 targets.
* reductions ``+=! *=! max=! min=!`` over 1-2 reduction indices, including
  ranges that may be empty (identities) and ``where r in 1:N`` ranges;
* in-place updates: ``op=`` without ``!`` (``+= *= max= min=``) onto a tensor
  an earlier statement wrote; ``=`` and ``op=!`` rewriting a tensor while
  reading it at the same position, reversed (``T(N - 1 - i)``), at wrapped or
  clamped shifts (``T((i + 1) % N)``, ``T(min(i + 1, N - 1))``) or over a
  reduction index (every read sees the tensor as it was before);
* subscripts: plain, shifted (``A(i + 2)`` with the output sized ``N - 2``),
  strided (``A(2 * i)``, ``A(2 * i + 1)``, ``A(2 * i + q)``), convolution-like
  (``A(i + r)`` with ``W(r)``), reversed, constant, ``i - 1`` on ranges
  starting at 1, non-affine (run-time checked: ``%``, ``/``, ``min``, ``max``)
  and data-dependent (``A(G(i))``);
* output ranges either inferred from the accesses or given by ``where i in
  0:E`` (E a size expression such as ``(N + 1) / 2`` or ``N - K + 1``);
  ``where`` lets (``x = expr``) and ``exists`` clauses;
* expressions: ``+ - * / %``, unary ``-``, the ``min``/``max`` operators,
  comparisons, ``&& || !``, ``?:``, casts (``float32(i)``, ``int32(x)``), index
  variables and sizes as values, and the builtins of TC-LANGUAGE.md §4.4
  (``exp tanh log sqrt fmax fmin fmod pow atan2 hypot copysign fdim fma``
  ...), with domains kept valid; rarely NaN (``sqrt`` of a negative) to check
  NaN propagation; mixed int/float promotion; bool and int outputs.

Values are kept finite and comparisons exact: magnitudes are tracked with
interval arithmetic (large values are scaled by powers of two, ints wrapped
with ``%``), product reductions multiply factors near 1, and discontinuous
operations (comparisons, casts to int, ``floor``, ``fmod`` ...) only see
values that the compiled code and the reference compute bit-identically
(no reordered reductions, no transcendental functions).
"""

from tcdialect.testing.tcgen.checker import (
    Failure,
    check,
    compare,
    cpu_options,
    target_options,
    tolerance,
)
from tcdialect.testing.tcgen.cli import main
from tcdialect.testing.tcgen.generator import generate
from tcdialect.testing.tcgen.model import InputSpec, Program, load, save
from tcdialect.testing.tcgen.reducer import failure_predicate, reduce

__all__ = [
    "Failure",
    "InputSpec",
    "Program",
    "check",
    "compare",
    "cpu_options",
    "failure_predicate",
    "generate",
    "load",
    "main",
    "reduce",
    "save",
    "target_options",
    "tolerance",
]
