"""`affine-gpu-promote{shared=true private=true max-shared-memory=49152 only-streams=false shared-depth=3 private-depth=6 dynamic-shared=false}`: memory promotion for the GPU.

An affine → affine pass on the output of `affine-gpu-map` (mapped loops are
one-dimensional `affine.parallel`s with `tc.gpu_processor` and
`tc.gpu_size`), before `convert-affine-to-scf`: TC's steps 11 and 12
(anchor-tc.md §3) with PPCG's rectangular boxes (anchor-gpu.md §4). The
result computes what the input computed. A *kernel* is a top-level op
holding thread loops (`kernel.py`): what `convert-parallel-loops-to-gpu`
outlines into one `gpu.func`.

Shared memory (`shared`; `shared.py`). A *scope* is a loop body above the
thread loops that holds thread loops as ops of its own (matmul's tile loop
over `r_k`, or the innermost block loop). An array that nothing in the
kernel writes and that the scope's thread nests read only through
`affine.load`s is a candidate when its footprint over the loops inside the
scope is a box of static size (the offsets may be any linear form of the
loops outside and the sizes; bounds clamped by `min`/`max` are fine), of
more than one element, that is reused (more loads than elements) or read
uncoalesced (thread x steps another subscript than the last, or with a
stride). The budget `max-shared-memory` (bytes per kernel) goes to the
largest reuse first; the others stay in global memory. With
`only-streams` (`CudaOptions.use_shared_memory=None`, the default), only
scopes that are `affine.for` loops that may run more than once and tile a
loop the threads run in order (`shared.streams`: matmul's tile loop over
`r_k`) are considered: each iteration brings a slice that many threads
read many times; elsewhere the caches serve the reuse without the copies
and barriers. A promoted box is a
`memref.alloca` in memory space 3 at the start of the kernel's nest (the
top-level op's block: a top-level alloca would be a device segment of its
own), its innermost extent padded by one when it is a multiple of 32, or
even and read down a column by the threads along x (an odd row: no bank
conflicts along a column). A copy nest right before the first thread
nest that reads it fills it, mapped onto the kernel's own thread axes and
block sizes, the innermost box dimension on `thread_x` so that the reads
coalesce, and clamped to the array's extents (`memref.dim` for dynamic
ones) where the enclosing loops do not show it in bounds; the loads then
read the buffer at their subscripts minus the box's offset. The barriers
are `convert-parallel-loops-to-gpu`'s: one after each copy nest (it writes,
a later op reads) and one at the end of the scope's loop body (the next
iteration's copy overwrites what this one read).

Temporaries (with `shared`; `temporaries.py`): a temporary that each
iteration of the kernel's block loops uses only on its own slice (its
first subscripts are the block loops' indices: softmax's `e(n, d)` with a
block per row) takes its slice in shared memory instead of going through
global memory, when the slice's size is static and fits; temporaries take
the budget first (they save a write and a read of global memory, where a
promoted box saves reads), in order.

Registers (`private`; `private.py`): inside thread loops along every axis
of the kernel, an element that an `affine.for` reads and writes at one
subscript its iterations do not change, and that belongs to the thread, is
loaded once before the loop, carried in `iter_args` and stored once after
it (loaded once, when only read), under an `affine.if` that the loop runs
when that is not known.

Example, `C(m, n) +=! A(m, r_k) * B(r_k, n)` at 64x64x64 with
`affine-gpu-map{tile=32,32,32}` (32x8 threads)::

    affine.parallel %c0 = 0 to 2 {                                  // block_y
      %A_shared = memref.alloca() : memref<32x33xf32, 3 : i32>
      %B_shared = memref.alloca() : memref<32x33xf32, 3 : i32>
      affine.parallel %c1 = 0 to 2 {                                // block_x
        affine.for %c2 = 0 to 2 {
          affine.parallel %i0 = 0 to 32 {                           // thread_y, 8
            affine.parallel %i1 = 0 to 32 {                         // thread_x, 32
              %0 = affine.load %A[%c0 * 32 + %i0, %c2 * 32 + %i1]
              affine.store %0, %A_shared[%i0, %i1]
          ... the same for %B_shared ...
          affine.parallel %m = %c0 * 32 to %c0 * 32 + 32 {          // thread_y
            affine.parallel %n = %c1 * 32 to %c1 * 32 + 32 {        // thread_x
              affine.if (%c2 == 0) { affine.store %zero, %C[%m, %n] }
              %3 = affine.load %C[%m, %n]
              %4 = affine.for %r_k = %c2 * 32 to %c2 * 32 + 32 iter_args(%5 = %3) {
                %6 = affine.load %A_shared[%m + %c0 * -32, %r_k + %c2 * -32]
                %7 = affine.load %B_shared[%r_k + %c2 * -32, %n + %c1 * -32]
                ...
                affine.yield %9 : f32
              }
              affine.store %4, %C[%m, %n]

Depths (TC's `sharedDepth`, `privateDepth`, counted in loops rather than
schedule-tree members): `shared-depth=d` promotes to shared memory only in
scopes whose body `d` loops enclose (block, tile and thread loops counted
from the kernel's outermost, the scope's own included: 3 for the matmul
above, whose `%c2` body is the scope); `private-depth=d` scalar-replaces
only in loops at depth `d` or deeper (6 for the `r_k` loop above; 7 leaves
`C[m, n]` in memory). Unset, every scope and every loop qualify. (The copies'
unrolling, TC's `unrollCopyShared`, is `unroll-inner-loops{copies}`.)

Dynamic shared memory (`dynamic-shared`; `dynamic.py`). At generic sizes a
box may have a size that is a run-time value: a member left untiled, its
loop running over `[0, K)`. With `dynamic-shared` (`CudaOptions`'
`use_shared_memory=True`; off in the pass by default and with `None`),
such a box (its extents sums of sizes, the same in every block) is a
candidate too, its reuse estimated with each size taken as 1024. The
static boxes take the budget first; the kernel's dynamic ones are promoted
at the sizes where they fit in what is left, which the kernel computes at
its start from the sizes (`%fits`): their buffers are `memref.alloca`s in
memory space 3 with dynamic extents (0 where they do not fit; the
innermost extent of a box of more than one dimension rounded up to an odd
number against bank conflicts), their copies run under `scf.if %fits`,
and the nests that read them are versioned on it, the `else` reading
global memory as before. `convert-parallel-loops-to-gpu` passes the
buffers' bytes as the launch's `dynamic_shared_memory_size` (docs/gpu.md).
Matmul with `affine-gpu-map{tile=32,32,0}`::

    affine.parallel %c0 = 0 to (%M - 1) floordiv 32 + 1 {           // block_y
      %0 = affine.apply affine_map<()[s0] -> ((s0 floordiv 2) * 2 + 1)> ()[%K]
      ... %fits = (128 * %0 + 15) / 16 * 16 + (132 * %K + 15) / 16 * 16 <= 49152
      %A_shared = memref.alloca(%a) : memref<32x?xf32, 3 : i32>   // %0 or 0
      %B_shared = memref.alloca(%b) : memref<?x33xf32, 3 : i32>   // %K or 0
      affine.parallel %c1 = ... {                                   // block_x
        scf.if %fits { <copy of A's box> }
        scf.if %fits { <copy of B's box> }
        scf.if %fits {
          ... affine.for %r_k = 0 to %K iter_args(...) {
                %6 = affine.load %A_shared[%m + %c0 * -32, %r_k]
        } else {
          ... affine.for %r_k = 0 to %K iter_args(...) {
                %6 = affine.load %A[%m, %r_k]

Not done: arrays the kernel writes (copy-out), and register arrays for
elements that a thread reuses across loops above the thread mapping (C
across `%c2`).
Distinct memref values are assumed not to alias (TC's tensors are distinct).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tcdialect.backend.base import TargetInfo
from tcdialect.backend.cuda.options import CudaOptions
from tcdialect.diagnostics import TCError
from tcdialect.transforms.affine_gpu_promote.dynamic import promote_dynamic
from tcdialect.transforms.affine_gpu_promote.kernel import kernels, loop_depth
from tcdialect.transforms.affine_gpu_promote.private import promote_private
from tcdialect.transforms.affine_gpu_promote.shared import (
    Candidate,
    candidates,
    promote,
    scopes,
    select,
    streams,
)
from tcdialect.transforms.affine_gpu_promote.temporaries import (
    localize,
    temporaries,
)

#: The default budget: the shared memory every CUDA device gives a block.
MAX_SHARED_MEMORY = 48 * 1024


@dataclass(frozen=True)
class AffineGpuPromotePass(ModulePass):
    name = "affine-gpu-promote"

    shared: bool = True
    private: bool = True
    #: bytes of shared memory per kernel
    max_shared_memory: int = MAX_SHARED_MEMORY
    #: promote only in scopes that are sequential tile loops running more
    #: than once (a block streaming a reduction through shared memory)
    only_streams: bool = False
    #: promote to shared memory only in scopes at this loop depth
    shared_depth: int | None = None
    #: scalar-replace only in loops at this loop depth or deeper
    private_depth: int | None = None
    #: promote boxes whose size is a run-time value too, in dynamic shared
    #: memory, at the sizes where they fit the budget
    dynamic_shared: bool = False

    @classmethod
    def from_options(
        cls, options: CudaOptions, info: TargetInfo
    ) -> AffineGpuPromotePass:
        budget = options.max_shared_memory
        if budget is None:
            budget = info.limits.get("max_shared_memory", MAX_SHARED_MEMORY)
        shared = options.use_shared_memory
        return cls(
            shared=shared is not False,
            private=options.use_private_memory,
            max_shared_memory=budget,
            only_streams=shared is None,
            shared_depth=options.shared_depth,
            private_depth=options.private_depth,
            dynamic_shared=shared is True,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_shared_memory < 0:
            raise TCError(
                "affine-gpu-promote: max-shared-memory must be >= 0, not "
                f"{self.max_shared_memory}"
            )
        for name in ("shared_depth", "private_depth"):
            depth = getattr(self, name)
            if depth is not None and depth < 1:
                raise TCError(
                    f"affine-gpu-promote: {name.replace('_', '-')} must be >= 1, "
                    f"not {depth}"
                )
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            for k in kernels(fn):
                budget = self.max_shared_memory
                if self.shared:
                    for t in temporaries(fn, k):
                        if t.bytes <= budget:
                            localize(t)
                            budget -= t.bytes
                    found: list[Candidate] = []
                    for scope in scopes(k):
                        loop = scope.parent_op()
                        assert loop is not None
                        if (not self.only_streams or streams(scope)) and (
                            self.shared_depth is None
                            or loop_depth(loop, k) == self.shared_depth
                        ):
                            found += candidates(k, scope, self.dynamic_shared)
                    chosen = select(found, budget)
                    static = [c for c in chosen if not c.dynamic]
                    for c in static:
                        promote(c)
                    if dynamic := [c for c in chosen if c.dynamic]:
                        left = budget - sum(c.bytes for c in static)
                        promote_dynamic(dynamic, left)
                if self.private:
                    promote_private(k, self.private_depth)


__all__ = ["AffineGpuPromotePass"]
