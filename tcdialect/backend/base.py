"""The interface of a compilation target: `TargetInfo` and `Backend`.

A target (`cpu` today; `cuda` and `cuda-sim` next) is a `Backend` object in
the registry of `tcdialect.backend.registry`. The layers above it know only
this interface: `tcdialect.kernel` compiles and launches through it,
`tcdialect.pipeline` asks it for the passes after the `scheduled` stage,
and `tc-opt`'s named pipelines take its options.

What a backend says, in the style of Triton's `BaseBackend` and TVM's BYOC:

- `name`, `options_class` (a frozen, hashable dataclass: part of every cache
  key) and `stages`, the stages it adds after `scheduled` (IR stages first,
  then text ones such as `llvm-ir` or `asm`);
- `info()`: the `TargetInfo` of the machine it compiles for, read once;
- `schedule_options` and `stage_passes`: the passes from `scheduled` down,
  built from the options and a `TargetInfo` given explicitly, so that a
  pass never asks the machine it runs on (`tc-opt` passes a fixed
  `TargetInfo`; the library passes `info()`);
- `emit`: a text stage of a module at the last IR stage;
- `compile`: a module at the last IR stage to a `Launcher`, whose plans
  make calls;
- `save`, `load` and `cache_versions`: the compilation cache's view of a
  target (`tcdialect.cache`): a launcher's code as bytes, bytes back to a
  launcher in another process, and the versions of the tools that generate
  the code. By default a target's code is not cached.

Importing this module imports no code generator.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from tcdialect.diagnostics import TCError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass

    from tcdialect.poly.schedule import ScheduleOptions
    from tcdialect.signature import Signature


@dataclass(frozen=True)
class TargetInfo:
    """What code generation may assume about the machine it compiles for.

    A value, not a query: passes and pipelines get one explicitly. A backend
    reads its machine's once (`Backend.info()`); `tc-opt` and the tests use
    fixed ones, so the IR they print does not depend on where they run.

    name: the processor (LLVM's CPU name; later the GPU's name).
    triple: the LLVM target triple ("" for the host's).
    features: LLVM feature flags (`+avx2`, ...), for the cache key.
    vector_bits: width of one vector register in bits.
    cores: hardware threads this process may use.
    cache_bytes: data cache sizes per level (L1 first), 0 where unknown.
    native_ldexp: whether `llvm.ldexp` on vectors is one instruction.
    limits: further target-specific limits by name (a GPU's shared memory,
        threads per block, ...).
    """

    name: str = "generic"
    triple: str = ""
    features: tuple[str, ...] = ()
    vector_bits: int = 256
    cores: int = 1
    cache_bytes: tuple[int, ...] = ()
    native_ldexp: bool = False
    limits: Mapping[str, int] = field(default_factory=dict[str, int])

    def __post_init__(self) -> None:
        bits = self.vector_bits
        if not isinstance(bits, int) or bits < 8 or bits & (bits - 1):
            raise TCError(
                f"TargetInfo.vector_bits must be a power of two >= 8, not {bits!r}"
            )
        if not isinstance(self.cores, int) or self.cores < 1:
            raise TCError(
                f"TargetInfo.cores must be a positive int, not {self.cores!r}"
            )

    def __hash__(self) -> int:
        return hash(
            (
                self.name,
                self.triple,
                self.features,
                self.vector_bits,
                self.cores,
                self.cache_bytes,
                self.native_ldexp,
                tuple(sorted(self.limits.items())),
            )
        )

    def vector_width(self, elem_bits: int = 32) -> int:
        """Lanes of `elem_bits`-bit elements in one vector register (>= 1)."""
        if elem_bits <= 0:
            raise ValueError(f"elem_bits must be positive, got {elem_bits}")
        return max(1, self.vector_bits // elem_bits)

    def with_(self, **changes: Any) -> TargetInfo:
        """A copy with `changes` (dataclasses.replace, validated again)."""
        return replace(self, **changes)


class CallPlan(Protocol):
    """A compiled kernel's call for one shape key (made by `Launcher.plan`).

    `run(inputs, outputs)` calls it on checked arrays. `call(inputs, out)`
    is the fast path of `Kernel.__call__`: it checks what the general path
    checks for this key's shapes and dtypes and returns the outputs, or None
    when anything does not match (the general path then raises the precise
    error). `stream` is the caller's `stream=` (None for targets without
    `Backend.device_arrays`). `stub`, when not None, does the same checks and the call in
    compiled code: `stub(*inputs, *outputs)` returns 0 when it made the
    call. `ran()` counts a run (a backend may make the stub then).
    """

    @property
    def out_shapes(self) -> tuple[tuple[int, ...], ...]: ...

    @property
    def out_dtypes(self) -> tuple[Any, ...]: ...

    @property
    def in_count(self) -> int: ...

    @property
    def stub(self) -> Any: ...

    def run(
        self, inputs: Sequence[Any], outputs: Sequence[Any], stream: Any = None
    ) -> None: ...

    def call(
        self, inputs: Sequence[Any], out: Any, stream: Any = None
    ) -> list[Any] | None: ...

    def ran(self) -> None: ...


class Launcher(Protocol):
    """Compiled code of one definition for one shape key (or generic)."""

    def plan(
        self,
        inputs: Sequence[Any],
        out_shapes: Sequence[tuple[int, ...]],
        out_dtypes: Sequence[Any],
        sizes: Mapping[str, int],
    ) -> CallPlan: ...


class Backend(ABC):
    """A compilation target (see the module docstring)."""

    #: The target's name, as in `define(target=...)` and the registry.
    name: ClassVar[str]
    #: The options class: frozen, hashable, validated on construction.
    options_class: ClassVar[type[Any]]
    #: The IR stages this target adds after `scheduled`, in order.
    ir_stages: ClassVar[tuple[str, ...]]
    #: The text stages it can emit from its last IR stage.
    text_stages: ClassVar[tuple[str, ...]] = ()
    #: Whether calls take arrays in CUDA memory (`tcdialect.arrays`) and a
    #: `stream=`; a target without it refuses both with the reason.
    device_arrays: ClassVar[bool] = False

    @property
    def stages(self) -> tuple[str, ...]:
        return (*self.ir_stages, *self.text_stages)

    @abstractmethod
    def info(self) -> TargetInfo:
        """The `TargetInfo` of the machine this backend compiles for."""

    @abstractmethod
    def generic_info(self) -> TargetInfo:
        """A fixed `TargetInfo` of this target, the same on every machine
        (what `tc-opt` assumes unless told otherwise)."""

    def default_options(self) -> Any:
        """The options a user who passes none gets."""
        return self.options_class()

    def check_options(self, options: Any) -> Any:
        """`options`, or the defaults for None; a `TCError` for a wrong type."""
        if options is None:
            return self.default_options()
        if not isinstance(options, self.options_class):
            raise TCError(
                f"options for target '{self.name}' must be a "
                f"tcdialect.{self.options_class.__name__}, not "
                f"{type(options).__name__}"
            )
        return options

    def specialize(self, options: Any) -> bool:
        """Whether sizes are compiled in as constants (one compile per shape)."""
        return bool(getattr(options, "specialize", True))

    @abstractmethod
    def schedule_options(
        self, options: Any, info: TargetInfo
    ) -> ScheduleOptions | bool:
        """What the `scheduled` stage runs with (False: no rescheduling)."""

    @abstractmethod
    def stage_passes(
        self, stage: str, options: Any, info: TargetInfo
    ) -> list[ModulePass]:
        """The passes from the stage before `stage` (one of `ir_stages`)."""

    def emit(self, stage: str, module: ModuleOp, options: Any) -> str:
        """Text stage `stage` of `module`, which is at the last IR stage."""
        raise TCError(f"target '{self.name}' has no stage '{stage}'")

    @abstractmethod
    def compile(
        self, module: ModuleOp, entry: str, signature: Signature, options: Any
    ) -> Launcher:
        """Compile `module` (at the last IR stage) and return a launcher of `entry`."""

    def save(self, launcher: Launcher) -> bytes | None:
        """The code of `launcher` (made by this backend's `compile`) as bytes
        that `load` turns back into an equivalent launcher in any process
        whose cache key matches (same target, `TargetInfo`, options and
        `cache_versions`); None when this target's code is not cached (the
        default). It must not raise: on any doubt, None."""
        return None

    def load(
        self, payload: bytes, entry: str, signature: Signature, options: Any
    ) -> Launcher | None:
        """The launcher of `entry` (with the calling convention `signature`,
        run with `options`) from `save`'s `payload`, without compiling; None
        when the payload cannot be used here (the caller then compiles).
        The payload's integrity is checked by the cache; `load` must not
        raise for a payload it does not accept, and must never return a
        launcher that computes something other than what `compile` made."""
        return None

    def cache_versions(self) -> dict[str, str]:
        """Versions of this target's code generators (LLVM, a CUDA
        toolkit, ...), by name: part of every cache key of its code."""
        return {}

    def quick_identity(self) -> str | None:
        """A cheap stand-in for `info()` in the cache's quick-start records
        (`tcdialect.cache.quick`): a string that differs whenever `info()`
        would, made without the code generator; None (the default) leaves
        this target out of quick starts."""
        return None

    def new_outputs(
        self,
        shapes: Sequence[tuple[int, ...]],
        dtypes: Sequence[Any],
        inputs: Sequence[Any],
        bfloat16: Sequence[bool] = (),
    ) -> list[Any]:
        """Outputs of a call that passed no `out=`: NumPy arrays here; a
        target with `device_arrays` makes arrays of the inputs' kind
        (`bfloat16`: which outputs are bfloat16, for libraries that have
        the type)."""
        import numpy as np

        return [np.empty(shape, dtype=dt) for shape, dt in zip(shapes, dtypes)]
