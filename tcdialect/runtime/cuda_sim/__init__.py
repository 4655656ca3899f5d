"""The GPU simulator: the `gpu` stage run on the CPU with a GPU's semantics.

The `cuda-sim` target (`define(src, target="cuda-sim")`, or `target="cuda"`
with `TCDIALECT_CUDA_SIM=1`) compiles down to the `gpu` stage (docs/gpu.md)
and runs it here instead of on a device, returning what the device would:

- `gpu_host.HostProgram` runs the host function: sizes, temporaries,
  launches in order;
- `device.SimDevice` runs each launch: the grid in chunks of whole blocks in
  a seeded shuffled order, each chunk's threads in lockstep;
- `interpreter` executes a kernel over a chunk's lanes with NumPy (every
  value an array over lanes, control flow under an active mask), with the
  reference interpreter's semantics for `arith` and `math` (float32 stays
  float32, float16 is NumPy float16, a bf16 value is a float32 rounded to
  bfloat16 after every op and a bf16 buffer holds bit patterns);
- `memory` bounds-checks every access and race-checks global and shared
  memory.

Beyond computing results, it reports, each as a `TCError` naming the kernel
and the memory (or op):

- a race: a global or shared element written by two threads, read after
  another thread wrote it (when the value read is used), or overwritten
  after another thread read it (in shared memory, or by another block),
  with no barrier between them (threads of different blocks never
  synchronise within a launch), e.g. a missing `gpu.barrier` between the
  stores into a shared tile and the loads from it, or one too few when a
  shared buffer is reused in a loop;
- a `gpu.barrier` not reached by all threads of a block (one in divergent
  control flow), and a `gpu.shuffle` without the lanes it reads;
- an out-of-bounds access to global, shared or private memory;
- an op it does not know, when the kernel is compiled.

Example::

    mm = tcdialect.define(src, target="cuda-sim")
    C = mm(A, B)                    # simulated: the same C as on a GPU
"""

from tcdialect.runtime.cuda_sim.device import SimDevice
from tcdialect.runtime.cuda_sim.launcher import SimLauncher, SimPlan

__all__ = ["SimDevice", "SimLauncher", "SimPlan"]
