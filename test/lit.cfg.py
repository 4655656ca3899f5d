"""lit configuration for tcdialect's FileCheck tests (test/filecheck/**).

Tools resolve through PATH, with the project venv's bin directory first, so a
RUN line's `tc-opt` and `filecheck` are the ones `make venv` installed.

Substitutions:
  TC_ROUNDTRIP          print generic, reparse, print custom, check `CHECK:`
  TC_GENERIC_ROUNDTRIP  print generic, check `CHECK-GENERIC:`
"""

import os
import shutil
import sys

import lit.formats

test_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(test_root)

config.name = "tcdialect"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".tc", ".test"]
# Rooted at test/ so that both `lit test` and `lit test/filecheck/x.mlir` work;
# only test/filecheck holds lit tests, pytest owns the other folders.
config.test_source_root = test_root
config.excludes = ["unit", "e2e", "Output", "Inputs", "lit.cfg.py"]

tool_dirs = [os.path.join(repo_root, ".venv", "bin"), os.path.dirname(sys.executable)]
config.environment["PATH"] = os.pathsep.join(
    [*tool_dirs, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
for var in ("TCDIALECT_DEBUG",):
    if var in os.environ:
        config.environment[var] = os.environ[var]

for tool in ("tc-opt", "filecheck"):
    if shutil.which(tool, path=config.environment["PATH"]) is None:
        lit_config.fatal(f"'{tool}' not found on PATH; run `make venv` first")

config.substitutions.append(
    (
        "TC_ROUNDTRIP",
        "tc-opt %s --print-op-generic --split-input-file"
        " | tc-opt --split-input-file | filecheck %s",
    )
)
config.substitutions.append(
    (
        "TC_GENERIC_ROUNDTRIP",
        "tc-opt %s --print-op-generic --split-input-file"
        " | filecheck %s --check-prefix=CHECK-GENERIC",
    )
)

# Let `PYTHONPATH=<checkout> lit test` test another checkout with this venv.
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
