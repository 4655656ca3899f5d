"""`TcOptMain`: xdsl-opt with the tc dialect, tcdialect's passes and a TC frontend.

`tc-opt` reads `.tc` sources (through `tcdialect.frontend.parse_tc`) and `.mlir`
text, runs the passes given with `-p`, verifies the IR before the first pass and
after every pass (`tcdialect.verifier.verify`: xDSL's verifier plus SSA
dominance) and prints the result on stdout. It keeps xdsl-opt's flags
(`--split-input-file`, `--verify-diagnostics`, `--print-op-generic`,
`--print-between-passes`, `-t`).

Errors never show a Python traceback. Diagnostics go to stderr and the exit
status is 1:

- `TCError` (bad TC source, bad IR, failing passes): its rendered text;
- xDSL parse errors and verifier/pass diagnostics: xDSL's located message;
- bad command lines (unknown pass, missing file): `tc-opt: error: ...`;
- anything else: `tc-opt: internal error: <type>: <message>`, with the
  traceback only when the environment variable `TCDIALECT_DEBUG=1` is set.

Warnings of the TC frontend (e.g. an unused temporary) are printed on stderr
in the same located form; they do not change the output or the exit status.

With `--verify-diagnostics` (or `--parsing-diagnostics` for the frontend) an
error in a chunk is printed on stdout instead and the run goes on with the next
chunk, exiting with status 0, as in xdsl-opt. This is how lit tests check many
diagnostics from one `--split-input-file` source.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, NoReturn, TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, TypeAttribute
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from tcdialect.diagnostics import TCError
from tcdialect.dialects import get_all_dialects
from tcdialect.dialects.dense_hex import DenseHexParser
from tcdialect.transforms import get_all_passes
from tcdialect.verifier import verify

TOOL_NAME = "tc-opt"
DEBUG_ENV_VAR = "TCDIALECT_DEBUG"


class UsageError(Exception):
    """A bad command line that argparse cannot see (unknown pass, unknown input kind)."""


_T = TypeVar("_T")


class LocatingParser(DenseHexParser):
    """xDSL's IR parser, with every failure on bad input located.

    Hexadecimal dense float elements are bit patterns (`DenseHexParser`).

    Besides `ParseError`, xDSL 0.74's parser lets through, without a
    location, what building the IR raises: a `VerifyException` for an
    attribute out of its type's range (`arith.constant 300 : i8`) or an
    unknown predicate (`arith.cmpi foo, ...`), an `OverflowError` for
    `1.0e300 : f32`, a `ValueError` for `llvm.icmp "foo"`, ... Here each
    becomes a `ParseError` spanning the innermost attribute, type or
    operation being read when it was raised (up to the last token read)::

        bad.mlir:2:23
          %0 = arith.constant 300 : i8
                              ^^^^^^^^
                              invalid IR: Integer value 300 is out of range ...

    A diagnostic keeps its message; anything else is shown with its type
    (`invalid IR (OverflowError: float too large to pack with f format)`).
    """

    def _located(self, parse: Callable[[], _T]) -> _T:
        start = self.pos
        try:
            return parse()
        except ParseError:
            raise
        except Exception as err:
            # The span ends at the last token read, not at the next one.
            text, end = self.lexer.input.content, self.pos
            while end > start and text[end - 1 : end].isspace():
                end -= 1
            what = (
                f": {err}"
                if isinstance(err, DiagnosticException)
                else f" ({type(err).__name__}: {err})"
            )
            self.raise_error(f"invalid IR{what}", start, max(end, start + 1))

    def parse_operation(self) -> Operation:
        return self._located(super().parse_operation)

    def parse_optional_attribute(self) -> Attribute | None:
        return self._located(super().parse_optional_attribute)

    def parse_optional_type(self) -> TypeAttribute | None:
        return self._located(super().parse_optional_type)


class TcOptMain(xDSLOptMain):
    """The `tc-opt` driver; subclass it to add dialects, passes or targets."""

    version_format = "tc-opt (tcdialect) built from xdsl version {xdsl_version}"

    def __init__(
        self,
        description: str = "tcdialect optimizer driver: reads TC (.tc) or MLIR "
        "(.mlir) input, runs passes, prints IR",
        args: Sequence[str] | None = None,
    ):
        with report_errors():
            super().__init__(description, args)

    def run(self) -> None:
        with report_errors():
            super().run()

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        # The same name in usage and errors, also under `python -m`.
        arg_parser.prog = TOOL_NAME
        super().register_all_arguments(arg_parser)

    def register_all_dialects(self) -> None:
        # Like super()'s, except that our dialects replace xDSL's of the same
        # name (`affine`: MLIR's syntax for memory accesses).
        from xdsl.universe import Universe

        ours = get_all_dialects()
        for name, factory in Universe.get_multiverse().all_dialects.items():
            if name not in ours:
                self.ctx.register_dialect(name, factory)
        for name, factory in ours.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        # Ours replace xDSL's `llvm`; llvmlite is imported only when emitting.
        from tcdialect.backend.output_targets import get_all_targets

        self.available_targets.update(get_all_targets())

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        self.available_frontends["mlir"] = self.parse_mlir_chunk
        self.available_frontends["tc"] = self.parse_tc_chunk

    def parse_mlir_chunk(self, io: IO[bytes]) -> ModuleOp:
        """xDSL's IR parser, every failure located (`LocatingParser`)."""
        parser = LocatingParser(self.ctx, io.read(), self.get_input_name())
        return parser.parse_module(not self.args.no_implicit_module)

    def parse_tc_chunk(self, io: IO[bytes], line_offset: int = 0) -> ModuleOp:
        """Run the TC frontend on one input chunk.

        The chunk is prefixed with `line_offset` empty lines so that diagnostics
        for later `--split-input-file` chunks point at lines of the whole file.
        """
        from tcdialect.frontend import parse_tc

        filename = self.args.input_file or "<stdin>"
        try:
            text = io.read().decode("utf-8")
        except UnicodeDecodeError as err:
            raise TCError(
                f"input file '{filename}' is not UTF-8 text "
                f"({err.reason} at byte {err.start})"
            ) from None
        return parse_tc(
            "\n" * line_offset + text,
            filename,
            on_warning=lambda w: print(w.render(), file=sys.stderr),
        )

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        if file_extension != "tc":
            return super().parse_chunk(chunk, file_extension, start_offset)
        try:
            return self.parse_tc_chunk(chunk, start_offset)
        except TCError as err:
            if not (self.args.verify_diagnostics or self.args.parsing_diagnostics):
                raise
            print(err)
            return None

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except TCError as err:
            if not self.args.verify_diagnostics:
                raise
            # xDSLOptMain.run prints diagnostic exceptions and goes on.
            raise DiagnosticException(str(err)) from err

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except (ValueError, ArgSpecParseError) as err:
            raise UsageError(str(err)) from None
        if self.args.disable_verify:
            return
        # tcdialect.verifier before xDSL's own check: every verifier failure
        # located, and dominance checked (the verifier module's docstring).
        then = self.pipeline.callback

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            verify(module)
            if then is not None:
                then(previous, module, following)

        self.pipeline = dataclasses.replace(self.pipeline, callback=callback)

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        try:
            return super().prepare_input()
        except ValueError as err:
            kinds = ", ".join(self.available_frontends)
            raise UsageError(f"{err}; choose one with -f ({kinds})") from None


@contextmanager
def report_errors() -> Iterator[None]:
    """Turn every exception into a message on stderr and exit status 1."""
    try:
        yield
    except BrokenPipeError:
        # The reader went away (`tc-opt ... | head`); stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except TCError as err:
        _fail(str(err))
    except ParseError as err:
        _fail(str(err))
    except DiagnosticException as err:
        notes = [str(note) for note in getattr(err, "__notes__", ())]
        _fail("\n".join([str(err), *notes]))
    except (UsageError, OSError) as err:
        _fail(f"{TOOL_NAME}: error: {err}")
    except Exception as err:
        _fail(f"{TOOL_NAME}: internal error: {type(err).__name__}: {err}")


def _fail(message: str) -> NoReturn:
    if os.environ.get(DEBUG_ENV_VAR) == "1":
        traceback.print_exc()
    sys.stdout.flush()
    print(message, file=sys.stderr)
    sys.exit(1)
