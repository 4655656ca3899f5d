"""Fuzz tests for the whole TC frontend: parse, sema, range inference, IR gen.

Property, for every input text: `parse_tc` either returns a module that
verifies and round-trips through its custom textual form (printed, parsed
back with a Context holding the builtin, arith, math and tc dialects, and
printed again to the same text), or raises `TCError` whose diagnostics all
render with a ``file:line:col`` location. Any other exception is a bug.

Inputs are (a) token-level mutations of a corpus of valid programs covering
the language, and (b) random well-formed programs from a generator. Runs
are derandomized, so failures reproduce; each test checks that enough inputs
were tried (`COUNTS` holds the totals).
"""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.math import Math
from xdsl.parser import Parser

from tcdialect.diagnostics import DiagnosticEngine, Source, TCError
from tcdialect.dialects.tc import TC
from tcdialect.frontend import parse_tc
from tcdialect.frontend.lexer import tokenize

FILENAME = "fuzz.tc"

#: Inputs tried and how they ended, over the whole module.
COUNTS: Counter[str] = Counter()

_HEADER = re.compile(r"^fuzz\.tc:(\d+):(\d+): (error|warning|note): ")


def _context() -> Context:
    ctx = Context()
    for dialect in (Builtin, Arith, Math, TC):
        ctx.load_dialect(dialect)
    return ctx


_CTX = _context()


def check_frontend(text: str) -> ModuleOp | None:
    """The property for one input; returns the module when there is one."""
    COUNTS["inputs"] += 1
    try:
        module = parse_tc(text, FILENAME)
    except TCError as err:
        COUNTS["rejected"] += 1
        assert err.errors, "a TCError must carry at least one error"
        for diag in err.diagnostics:
            assert diag.span is not None, f"unlocated diagnostic: {diag.render()}"
            line, col = diag.span.source.line_col(diag.span.start)
            rendered = diag.render().split("\n")
            m = _HEADER.match(rendered[0])
            assert m is not None, rendered[0]
            assert (int(m.group(1)), int(m.group(2))) == (line, col)
            assert "^" in rendered[2]
        return None
    COUNTS["accepted"] += 1
    module.verify()
    printed = str(module)
    reparsed = Parser(_CTX, printed, "printed.mlir").parse_module()
    reparsed.verify()
    assert str(reparsed) == printed
    return module


# ------------------------------------------------------------------ corpus

CORPUS = (
    """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
    C(m, n) +=! A(m, r_k) * B(r_k, n)
}
""",
    """
# Row-wise softmax with temporaries.
def softmax(float(N, D) I) -> (O) {
    maxVal(n) max=! I(n, d)
    shifted(n, d) = exp(I(n, d) - maxVal(n))
    expsum(n) +=! shifted(n, r_d)
    O(n, d) = shifted(n, d) / expsum(n)
}
""",
    """
def clamp_mask(float(N) X, float lo, float hi) -> (Y) {
    Y(n) = (X(n) >= lo && X(n) <= hi) ? X(n) : 0.0
}
""",
    """
def rownorm(float(R, C) X) -> (Y, ss) {
    ss(r)   +=! X(r, r_c) * X(r, r_c)
    Y(r, c)  =  X(r, c) * rsqrt(ss(r) + 1e-6)
}
""",
    """
def pool3(float(B, H, W) X) -> (Y) {
    Y(b, h, w) max=! X(b, 3 * h + r_i, 3 * w + r_j) where r_i in 0:3, r_j in 0:3
}
""",
    """
def take_rows(float(V, D) E, int32(K) Idx) -> (O) {
    O(k, d) = E(max(min(Idx(k), V - 1), 0), d)
}
""",
    """
def ones_like(float(M, N) X) -> (O) {
    O(m, n) = 1.0 where exists X(m, n)
}
""",
    """
def sqdiff(float(N) A, float(N) B) -> (O) {
    O(n) = d * d where d = A(n) - B(n)
}
""",
    """
def count_pos(float(N) X) -> (int32 cnt) {
    cnt +=! int32(X(r_n) > 0.0)
}
""",
    """
def affine3(float(M, 3) A, float(3, N) B, float(N) bias) -> (C) {
    C(m, n)  = bias(n) where m in 0:M
    C(m, n) += A(m, r_k) * B(r_k, n)
}
""",
    """
def iota_fill(float v) -> (O) {
    O(i) = v + float(i) where i in 0:16
}
""",
    """
def conv2d(float(N, C, H, W) I, float(F, C, KH, KW) W1, float(F) b) -> (O) {
    O(n, f, h, w) +=! I(n, r_c, 2 * h + r_kh, 2 * w + r_kw) * W1(f, r_c, r_kh, r_kw)
    O(n, f, h, w) = O(n, f, h, w) + b(f)
}
""",
    """
def ints(int8(N) a, uint8(N) b, uint16(N) c, int64 s) -> (x, y, z, int32 w) {
    x(i) = a(i) / 3 + b(i) % 5
    y(i) = b(i) * c(i) - s
    z(i) = min(a(i), b(i)) + max(c(i), 2)
    w(i) = int32(a(i) == 0 || !(b(i) > 1))
}
""",
    """
def maths(double(N) X, float(N) Y) -> (O, P) {
    O(n) = fma(X(n), 2.0, pow(X(n), 3)) + atan2(Y(n), 1.5) + fmax(X(n), .5)
    P(n) *=! tanh(Y(n)) where r in 0:4
}
def flip(float(N) X) -> (A, S, M) {
    A(i) = X(i)
    A(i) = A(N - 1 - i) + 3E-5
    S() +=! A(r)
    M min=! X(r) * 2e10
}
""",
    """
def gather_sum(float(V, D) E, int32(K, L) Idx, bool(K) mask) -> (O) {
    O(k, d) +=! mask(k) ? E(max(min(Idx(k, r_l), V - 1), 0), d) : 0.0
}
""",
)


def test_corpus_is_valid() -> None:
    for program in CORPUS:
        assert check_frontend(program) is not None


# ----------------------------------------------------- token-level mutations


def _tokens(text: str) -> list[tuple[str, str, str]]:
    """(kind, text, whitespace before) for each token of a valid program."""
    diag = DiagnosticEngine()
    toks = tokenize(Source(text, FILENAME), diag)
    assert not diag.has_errors
    out: list[tuple[str, str, str]] = []
    pos = 0
    for t in toks[:-1]:
        out.append((t.kind, t.text, text[pos : t.span.start]))
        pos = t.span.end
    return out


_CORPUS_TOKENS = [_tokens(p) for p in CORPUS]
_ASSIGN = ["=", "+=", "+=!", "*=", "*=!", "min=", "min=!", "max=", "max=!"]
_OPERATORS = ["+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=", "&&", "||"]
_OTHER = ["(", ")", ",", ":", "?", "!", "where", "in", "exists", "min", "max", "->"]
_NUMBERS = [
    "0",
    "1",
    "2",
    "3",
    "7",
    "16",
    "2147483647",
    "2147483648",
    "0.0",
    "1e38",
    "1e39",
    "1e-45",
]
_RANDOM_NAMES = [
    "x",
    "N",
    "M",
    "r_q",
    "exp",
    "fma",
    "lgamma",
    "mod",
    "floordiv",
    "float",
    "int8",
    "bool",
    "Bt",
]
_TYPES = [
    "float",
    "double",
    "int8",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "bool",
    "float16",
]

_MUTATION_KINDS = [
    "swap_ident",
    "random_name",
    "operator",
    "assign",
    "number",
    "duplicate",
    "delete",
    "type",
    "insert",
]


def mutate(
    tokens: list[tuple[str, str, str]], edits: list[tuple[str, int, int]]
) -> str:
    toks = list(tokens)
    idents = sorted({t for k, t, _ in toks if k == "IDENT"})
    for kind, where, pick in edits:
        if not toks:
            break
        i = where % len(toks)
        k, text, _ = toks[i]

        def choose(options: list[str]) -> str:
            return options[pick % len(options)]

        def at(pred: object) -> int | None:  # the next token matching pred
            for off in range(len(toks)):
                j = (i + off) % len(toks)
                if pred(toks[j]):  # type: ignore[operator]
                    return j
            return None

        if kind == "swap_ident":
            j = at(lambda t: t[0] == "IDENT")
            if j is not None and idents:
                toks[j] = ("IDENT", choose(idents), toks[j][2])
        elif kind == "random_name":
            j = at(lambda t: t[0] == "IDENT")
            if j is not None:
                toks[j] = ("IDENT", choose(_RANDOM_NAMES), toks[j][2])
        elif kind == "operator":
            j = at(lambda t: t[1] in _OPERATORS)
            if j is not None:
                toks[j] = ("OP", choose(_OPERATORS), toks[j][2])
        elif kind == "assign":
            j = at(lambda t: t[1] in _ASSIGN)
            if j is not None:
                toks[j] = ("OP", choose(_ASSIGN), toks[j][2])
        elif kind == "number":
            j = at(lambda t: t[0] in ("INT", "FLOAT"))
            if j is not None:
                toks[j] = ("INT", choose(_NUMBERS), toks[j][2])
        elif kind == "type":
            j = at(lambda t: t[0] == "TYPE")
            if j is not None:
                toks[j] = ("TYPE", choose(_TYPES), toks[j][2])
        elif kind == "duplicate":
            toks.insert(i, (k, text, " "))
        elif kind == "delete":
            del toks[i]
        else:  # insert a random token
            vocab = _OPERATORS + _OTHER + _NUMBERS + idents
            toks.insert(i, ("?", choose(vocab), " "))
    return "".join(
        ws + (" " if ws == "" and n else "") + t for n, (_, t, ws) in enumerate(toks)
    )


_edits = st.lists(
    st.tuples(
        st.sampled_from(_MUTATION_KINDS),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=3,
)

MUTATION_EXAMPLES = 700


@settings(
    max_examples=MUTATION_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(0, len(CORPUS) - 1), _edits)
def _fuzz_mutations(index: int, edits: list[tuple[str, int, int]]) -> None:
    check_frontend(mutate(_CORPUS_TOKENS[index], edits))


def test_mutated_programs() -> None:
    before = COUNTS["inputs"]
    _fuzz_mutations()
    assert COUNTS["inputs"] - before >= MUTATION_EXAMPLES * 0.9


# ------------------------------------------------- random well-formed programs

_SIZES = ["N", "M", "K"]
_ELEM = ["float", "float", "double", "int32", "int8", "uint8", "int64", "bool"]
_UNARY_BUILTINS = ["exp", "log", "sqrt", "tanh", "fabs", "floor", "erf", "rsqrt"]
_BINARY_BUILTINS = ["pow", "fmax", "fmin", "atan2", "fmod", "hypot", "copysign"]


class _Gen:
    """Draws one random definition; tensors are (name, elem, rank)."""

    def __init__(self, draw: st.DrawFn, n_def: int):
        self.draw = draw
        self.n_def = n_def

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.draw(st.sampled_from(list(options)))

    def chance(self, p: float) -> bool:
        return self.draw(st.integers(0, 99)) < p * 100

    def definition(self) -> str:
        draw = self.draw
        n_in = draw(st.integers(1, 3))
        self.tensors: list[tuple[str, str, int]] = []
        self.sizes: list[str] = []
        params = []
        for k in range(n_in):
            name, elem, rank = f"I{k}", self.pick(_ELEM), draw(st.integers(0, 3))
            dims = [self.pick(_SIZES + ["3"]) for _ in range(rank)]
            self.sizes += [d for d in dims if d in _SIZES and d not in self.sizes]
            params.append(
                f"{elem}({', '.join(dims)}) {name}" if rank else f"{elem} {name}"
            )
            self.tensors.append((name, elem, rank))
        n_out = draw(st.integers(1, 2))
        outs, body = [], []
        temp = self.chance(0.3)
        if temp:  # a temporary, read by a last statement
            body.append(self.statement("T", None, first=True))
        for k in range(n_out):
            name = f"O{k}"
            annotation = self.pick(["", "", "", "float ", "double ", "int32 "])
            outs.append(annotation + name)
            body.append(self.statement(name, annotation.strip() or None, first=True))
            if self.chance(0.3):
                body.append(
                    self.statement(name, annotation.strip() or None, first=False)
                )
        if temp:
            body.append(self.statement("O0", None, first=False, must_read="T"))
        return (
            f"def f{self.n_def}({', '.join(params)}) -> ({', '.join(outs)}) {{\n"
            + "".join(f"    {s}\n" for s in body)
            + "}\n"
        )

    def statement(
        self,
        target: str,
        annotation: str | None,
        first: bool,
        must_read: str | None = None,
    ) -> str:
        draw = self.draw
        prev = [t for t in self.tensors if t[0] == target]
        rank = prev[0][2] if prev else draw(st.integers(0, 2))
        self.out_idx = ["i", "j"][:rank]
        self.red_idx = ["r_a", "r_b"][: draw(st.integers(0, 2))]
        self.used: set[str] = set()
        rhs = self.expr(3, want="num")
        if must_read is not None:
            rhs = f"{rhs} + {self.read(must_read)}"
        if annotation is not None and self.chance(0.8):
            rhs = f"{annotation}({rhs})"
        where = []
        for v in self.out_idx + self.red_idx:
            if v not in self.used or self.chance(0.1):
                where.append(f"{v} in 0:{self.pick(self.sizes + ['4'])}")
        if self.chance(0.15):
            ins = [t for t in self.tensors if t[2] == len(self.out_idx)]
            if ins:
                where.append(f"exists {ins[0][0]}({', '.join(self.out_idx)})")
        if first:
            op = (
                "=" if not self.red_idx else self.pick(["+=!", "*=!", "min=!", "max=!"])
            )
        else:
            op = self.pick(
                ["=", "+=", "max="] if not self.red_idx else ["+=", "min=", "+=!"]
            )
        lhs = (
            f"{target}({', '.join(self.out_idx)})"
            if self.out_idx or self.chance(0.5)
            else target
        )
        if first and not prev:
            self.tensors.append((target, annotation or "float", len(self.out_idx)))
        text = f"{lhs} {op} {rhs}"
        return text + (f" where {', '.join(where)}" if where else "")

    def subscript(self) -> str:
        idx = self.out_idx + self.red_idx
        kind = self.draw(st.integers(0, 9))
        if not idx or kind == 0:
            return self.pick(["0", "1"])
        v = self.pick(idx)
        self.used.add(v)
        if kind <= 5:
            return v
        if kind == 6:
            return f"{v} + {self.pick(idx + ['1'])}"
        if kind == 7:
            return f"2 * {v}"
        if kind == 8:
            return f"{v} - 1"
        ints = [
            t for t in self.tensors if t[1].startswith(("int", "uint")) and t[2] == 1
        ]
        if ints:  # data-dependent, clamped
            return (
                f"max(min({ints[0][0]}({v}), {self.pick(self.sizes + ['3'])} - 1), 0)"
            )
        return f"{v} + 1"

    def read(self, name: str | None = None) -> str:
        if name is None:
            name, _, rank = self.draw(st.sampled_from(self.tensors))
        else:
            rank = next(t[2] for t in self.tensors if t[0] == name)
        if rank == 0:
            return name if self.chance(0.7) else f"{name}()"
        return f"{name}({', '.join(self.subscript() for _ in range(rank))})"

    def expr(self, depth: int, want: str) -> str:
        draw = self.draw
        if want == "bool":
            kind = draw(st.integers(0, 3 if depth > 0 else 0))
            if kind == 0:
                op = self.pick(["<", ">", "<=", ">=", "==", "!="])
                return (
                    f"{self.expr(depth - 1, 'num')} {op} {self.expr(depth - 1, 'num')}"
                )
            if kind == 1:
                return f"!({self.expr(depth - 1, 'bool')})"
            op = self.pick(["&&", "||"])
            return (
                f"({self.expr(depth - 1, 'bool')} {op} {self.expr(depth - 1, 'bool')})"
            )
        kind = draw(st.integers(0, 11 if depth > 0 else 3))
        if kind == 0:
            return self.pick(["0", "1", "2", "1.5", ".5", "3E-5", "1e3"])
        if kind <= 2:
            return self.read()
        if kind == 3:
            idx = self.out_idx + self.red_idx
            if idx and self.chance(0.5):
                v = self.pick(idx)
                return v if self.chance(0.5) else f"float({v})"
            return self.pick(self.sizes + ["3"])
        if kind <= 6:
            op = self.pick(["+", "-", "*", "/", "%"])
            return f"({self.expr(depth - 1, 'num')} {op} {self.expr(depth - 1, 'num')})"
        if kind == 7:
            return f"-{self.expr(depth - 1, 'num')}"
        if kind == 8:
            c = self.expr(depth - 1, "bool")
            return (
                f"({c} ? {self.expr(depth - 1, 'num')} : {self.expr(depth - 1, 'num')})"
            )
        if kind == 9:
            if self.chance(0.5):
                return f"{self.pick(_UNARY_BUILTINS)}({self.expr(depth - 1, 'num')})"
            a, b = self.expr(depth - 1, "num"), self.expr(depth - 1, "num")
            if self.chance(0.2):
                return f"fma({a}, {b}, {self.expr(depth - 1, 'num')})"
            return f"{self.pick(_BINARY_BUILTINS)}({a}, {b})"
        if kind == 10:
            t = self.pick(["float", "double", "int32", "int8", "uint8", "int64"])
            return f"{t}({self.expr(depth - 1, self.pick(['num', 'num', 'bool']))})"
        op = self.pick(["min", "max"])
        return f"{op}({self.expr(depth - 1, 'num')}, {self.expr(depth - 1, 'num')})"


@st.composite
def programs(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 2))
    return "".join(_Gen(draw, k).definition() for k in range(n))


GENERATED_EXAMPLES = 500


@settings(
    max_examples=GENERATED_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs())
def _fuzz_generated(text: str) -> None:
    if check_frontend(text) is not None:
        COUNTS["generated_accepted"] += 1


def test_generated_programs() -> None:
    before = COUNTS["inputs"]
    accepted = COUNTS["generated_accepted"]
    _fuzz_generated()
    assert COUNTS["inputs"] - before >= GENERATED_EXAMPLES * 0.9
    # The generator must reach IR generation for a good share of programs.
    assert COUNTS["generated_accepted"] - accepted >= GENERATED_EXAMPLES * 0.25
