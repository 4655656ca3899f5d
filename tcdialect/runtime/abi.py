"""Names shared by generated code and the runtimes that link it, free of xDSL.

`tcrt.parallel_for` (`tcdialect.dialects.tcrt`) lowers to calls of these
symbols and the CPU backend (`tcdialect.backend.cpu.jit`) defines them; a
kernel loaded from the compilation cache is linked against them without
importing the compiler, hence this module.
"""

from __future__ import annotations

import threading

PARALLEL_FOR_SYMBOL = "__tc_parallel_for"
"""`void @__tc_parallel_for(ptr fn, ptr ctx, i64 n)`: what `tcrt.parallel_for`
lowers to. Calls `fn(ctx, begin, end)` (a `void(ptr, i64, i64)`) on disjoint
chunks covering `[0, n)` and returns when all are done; `n <= 0` calls nothing."""

NUM_THREADS_SYMBOL = "__tc_num_threads"
"""`@__tc_num_threads = global i32 1`: the team size of a compiled module's
`__tc_parallel_for` (1: every call runs sequentially on the caller)."""

PARALLEL_TEAM_SYMBOL = "__tc_parallel_team"
"""`void @__tc_parallel_team(ptr fn, ptr ctx, i64 n, i32 threads)`: the
process-wide thread team `__tc_parallel_for` hands chunks to."""

LLVM_LOCK = threading.RLock()
"""One lock for every use of llvmlite's LLVM in this process (the CPU JIT
and PTX emission share LLVM's global context, which is not thread-safe)."""

DEFAULT_GOMP_SPINCOUNT = "300"
"""How long idle libgomp threads spin (in `pause` iterations) before sleeping
on a futex: short, because a spinning thread holds a core that the thread it
waits for, or another library, may need (docs/perf/runtime.md). Set (unless
the user set it, or `OMP_WAIT_POLICY`) before this process loads libgomp."""
