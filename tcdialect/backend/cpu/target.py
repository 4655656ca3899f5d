"""`CpuBackend`: the `cpu` target, host machine code through llvmlite's MCJIT.

From `scheduled` down it runs::

    loops: contract-temporaries, register-tile{vector-width rows vectors},
           fuse-sibling-loops,
           convert-affine-to-scf, prefetch-next-slice{max-bytes nta-bytes},
           outline-parallel-loops, nontemporal-stores{vector-width min-bytes},
           expand-math-polynomials{native-ldexp}, dce
    llvm:  convert-scf-to-cf, convert-to-llvm

with the vector width, cache-derived sizes (`CpuOptions.limits`) and `ldexp`
support taken from the options and the `TargetInfo` it is given (the host's in the library, a fixed one in `tc-opt`), and the isl
scheduler's threads and tile policy from the options and that `TargetInfo`.
Text stages: `llvm-ir` (LLVM IR before optimisation) and `asm` (host assembly
after O3). `compile` JIT-compiles the `llvm` stage and returns a
`CpuLauncher` whose plans call through ctypes or a compiled call stub.
`save` gives its object code and a shared library of it (`CpuModule.payload`,
`tcdialect.backend.cpu.payload`), `load` loads the library with `ctypes`, or
links the object code into MCJIT (`load_cpu`), without compiling, for the
compilation cache.

Importing this module imports neither llvmlite nor the passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from tcdialect.backend.base import Backend, Launcher, TargetInfo
from tcdialect.backend.cpu.options import CpuOptions
from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from tcdialect.poly.schedule import ScheduleOptions
    from tcdialect.runtime.cpu import CpuLauncher
    from tcdialect.signature import Signature

#: What `tc-opt` and the named pipelines assume when not told otherwise:
#: x86-64 with 256-bit vectors (AVX2) and `llvm.ldexp` as a library call, so
#: that the IR they print is the same on every machine.
GENERIC_CPU = TargetInfo(name="x86-64-v3", triple="x86_64-unknown-linux-gnu")


def _call_stub(*args: Any) -> Any:
    """`compile_call_stub`, imported when a plan first needs a stub."""
    from tcdialect.backend.cpu.call_stub import compile_call_stub

    return compile_call_stub(*args)


class CpuBackend(Backend):
    """The host CPU (see the module docstring)."""

    name = "cpu"
    options_class: ClassVar[type[Any]] = CpuOptions
    ir_stages = ("loops", "llvm")
    text_stages = ("llvm-ir", "asm")

    def info(self) -> TargetInfo:
        from tcdialect.backend.cpu.host import host_info

        return host_info()

    def generic_info(self) -> TargetInfo:
        return GENERIC_CPU

    def quick_identity(self) -> str | None:
        from tcdialect.backend.cpu.host import host_identity

        return host_identity()

    def threads(self, options: CpuOptions, info: TargetInfo) -> int:
        """Worker threads of parallel loops: the option, else every core."""
        return options.threads if options.threads is not None else info.cores

    def schedule_options(
        self, options: CpuOptions, info: TargetInfo
    ) -> ScheduleOptions | bool:
        from tcdialect.poly.schedule import ScheduleOptions

        if not options.schedule:
            return False
        return ScheduleOptions(
            options.fusion,
            options.tile,
            parallel_depth=options.parallel_depth,
            threads=self.threads(options, info),
        )

    def stage_passes(
        self, stage: str, options: CpuOptions, info: TargetInfo
    ) -> list[ModulePass]:
        if stage == "loops":
            from xdsl.transforms.dead_code_elimination import DeadCodeElimination

            from tcdialect.conversion.convert_affine_to_scf import (
                ConvertAffineToScfPass,
            )
            from tcdialect.transforms.contract_temporaries import (
                ContractTemporariesPass,
            )
            from tcdialect.transforms.expand_math_polynomials import (
                ExpandMathPolynomialsPass,
            )
            from tcdialect.transforms.fuse_sibling_loops import FuseSiblingLoopsPass
            from tcdialect.transforms.nontemporal_stores import NontemporalStoresPass
            from tcdialect.transforms.outline_parallel_loops import (
                OutlineParallelLoopsPass,
            )
            from tcdialect.transforms.prefetch_next_slice import (
                NTA_BYTES,
                PrefetchNextSlicePass,
            )
            from tcdialect.transforms.register_tile import RegisterTilePass

            limits = options.limits(info)
            lanes = max(1, limits.vector_bits // 32)
            register_tile = (
                [
                    RegisterTilePass(
                        vector_width=lanes,
                        rows=options.register_rows,
                        vectors=options.register_vectors,
                        fma16=options.fma16,
                    )
                ]
                if options.register_tile
                else []
            )
            l1 = info.cache_bytes[0] if info.cache_bytes else 0
            prefetch = (
                [
                    PrefetchNextSlicePass(
                        max_bytes=max(limits.prefetch_max_bytes, 4 << 10),
                        # slices up to a third of L1 are fetched non-temporally
                        nta_bytes=l1 // 3 if l1 else NTA_BYTES,
                        distance=options.prefetch_distance,
                    )
                ]
                if options.prefetch
                else []
            )
            nontemporal = (
                [
                    NontemporalStoresPass(
                        vector_width=lanes, min_bytes=limits.nontemporal_min_bytes
                    )
                ]
                if options.nontemporal
                else []
            )
            return [
                ContractTemporariesPass(),
                *register_tile,
                FuseSiblingLoopsPass(),
                ConvertAffineToScfPass(),
                *prefetch,
                OutlineParallelLoopsPass(),
                *nontemporal,
                ExpandMathPolynomialsPass(native_ldexp=info.native_ldexp),
                DeadCodeElimination(),
            ]
        if stage == "llvm":
            from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf

            from tcdialect.conversion.convert_to_llvm import ConvertToLlvmPass

            # convert-to-llvm consumes unrealized casts itself and makes none,
            # so xDSL's reconcile-unrealized-casts would have nothing to do.
            return [ConvertScfToCf(), ConvertToLlvmPass()]
        raise TCError(f"target 'cpu' has no IR stage '{stage}'")

    def emit(self, stage: str, module: ModuleOp, options: CpuOptions) -> str:
        if stage == "llvm-ir":
            from tcdialect.backend.cpu.jit import llvm_ir_text

            return llvm_ir_text(module)
        if stage == "asm":
            from tcdialect.backend.cpu.jit import host_asm

            return host_asm(module)
        return super().emit(stage, module, options)

    def compile(
        self, module: ModuleOp, entry: str, signature: Signature, options: CpuOptions
    ) -> CpuLauncher:
        from tcdialect.backend.cpu.call_stub import compile_call_stub
        from tcdialect.backend.cpu.jit import compile_cpu
        from tcdialect.runtime.cpu import CpuLauncher

        cpu = compile_cpu(module)
        cpu.set_num_threads(self.threads(options, self.info()))
        return CpuLauncher(
            cpu.address(entry), signature, owner=cpu, make_stub=compile_call_stub
        )

    def save(self, launcher: Launcher) -> bytes | None:
        from tcdialect.backend.cpu.jit import CpuModule
        from tcdialect.backend.cpu.payload import SharedModule
        from tcdialect.runtime.cpu import CpuLauncher

        if not isinstance(launcher, CpuLauncher):
            return None
        owner = launcher.owner
        return owner.payload() if isinstance(owner, CpuModule | SharedModule) else None

    def load(
        self, payload: bytes, entry: str, signature: Signature, options: CpuOptions
    ) -> CpuLauncher | None:
        from tcdialect.backend.cpu.host import cores
        from tcdialect.backend.cpu.payload import load_shared
        from tcdialect.runtime.cpu import CpuLauncher

        cpu = load_shared(payload)  # (without loading LLVM)
        if cpu is None:
            from tcdialect.backend.cpu.jit import load_cpu

            cpu = load_cpu(payload)
        if cpu is None or entry not in cpu.functions:
            return None
        address = cpu.address(entry)
        if not address:
            return None
        # (`info().cores` without `info()`, which a kernel loaded from the
        # cache's quick-start records does not need otherwise)
        cpu.set_num_threads(options.threads if options.threads is not None else cores())
        return CpuLauncher(address, signature, owner=cpu, make_stub=_call_stub)

    def cache_versions(self) -> dict[str, str]:
        import llvmlite
        from llvmlite import binding

        return {
            "llvmlite": llvmlite.__version__,
            "llvm": ".".join(str(n) for n in binding.llvm_version_info),
        }
