"""The passes tcdialect defines, registered lazily by name.

`get_all_passes()` maps a pass name (as used in `tc-opt -p`) to a factory that
imports the pass class only when it is first needed, like
`xdsl.transforms.get_all_passes`. Each pass lives in its own module, named like
the pass with underscores (`convert-tc-to-affine` in `convert_tc_to_affine.py`).

No passes exist yet: they arrive with the lowering stages (tc → affine →
scheduled → loops → llvm), each adding one entry here.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Return a mapping from pass name to a factory returning the pass class."""
    return {}
