"""Refuse, before libcst sees it, source that would crash or stall its parser.

libcst's native parser recurses on the machine stack: a few thousand nested
brackets or a few thousand chained prefix operators (``- - - 1``,
``lambda: lambda: ...``) overflow it and kill the process with SIGSEGV, where
no ``except`` can help.  Left-recursive chains (``a + b + c ...``,
``a.b.c ...``, ``f()()()...``) cost it quadratic time: 4,000 links take half
a minute.  Memory grows with the number of tokens, up to 3 kB each.

CPython's own parser is linear and guards its stack, so it measures the file
first: the size, its nesting limits (200 brackets, 100 indentation levels) and
the depth of the syntax tree.  The depth limit is far above real code (large
public Celery projects stay under 30) and below what libcst's recursive visitors
survive, so nothing analysable is refused.  The size comes before CPython's
parser too (``too_large``), whose tree costs memory per token as libcst's
does; a file CPython cannot parse is measured by its longest chain, in one
pass over its tokens.  Every measure is linear in the text.
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache

from ..core.source import MAX_PARSE_CHARS
# libcst's tree costs up to about 3 kB per word or symbol of the source
# (``x = [a[:], a[:], ...]``, the worst shape measured; real code, with its
# comments and docstrings, 1 to 2 kB): 70,000 of them keep a process under
# 300 MB (about 250 MB at the limit); the largest Celery-related files of large
# public projects have about 50,000.
MAX_PARSE_TOKENS = 70_000
# CPython's tree alone, about 600 bytes per word or symbol: under 200 MB.
# Enough to tell whether a larger file that only CL001 reads is valid
# (``engine/analysis.py``: such a file is not reported for its size).
MAX_CPYTHON_TOKENS = 300_000
_TOKEN = re.compile(r"\w+|[^\w\s]|\r\n?|\n")  # a word, a symbol, a line end: what memory grows with
MAX_DEPTH = 200  # syntax-tree depth; libcst visitors hit Python's recursion limit near 300
MAX_BRACKETS = 200  # CPython's limit; libcst crashes somewhere past 1,500
# Below these, no statement can nest or chain deeply enough to matter (every
# level costs at least one character) and CPython need not measure the file.
PLAIN_BRACKETS = 100
PLAIN_STATEMENT = 2_000  # characters of one logical line
PLAIN_ELIFS = 100  # libcst nests each ``elif`` in the one before; 10,000 overflow its stack
# A file CPython cannot parse is measured by its statements' length only.
MAX_STATEMENT = 4_000  # libcst: a 2,000-link chain costs seconds; 7,000 prefix operators overflow its stack

_SCAN = re.compile(r"[][(){}]|\\\r?\n|\r\n?|\n")
# Links of one chain (``a + b + ...``, ``a.b.c...``, ``f()()...``,
# ``"a" + "a"``, ``x[0] + x[0]``): what makes libcst's tree deep; a long list
# or dict literal is long but shallow.  ``_chain`` counts them.
MAX_CHAIN = 500
# One token of that count.  Each alternative is a fixed string or a run that
# cannot fail once started, so a search never backtracks.
_LINK_TOKEN = re.compile(r"""\w+|\*\*|//|<<|>>|[=!<>]=|->|:=|'''|\"\"\"|\\\r?\n|\r\n?|\n|[^\w\s]""")
# The rest of a string literal after its opening quote: to its end or, not
# closed, to the end of its line (of the file, for triple quotes).  Cannot
# fail, so cannot backtrack.
_STRING_REST = {
    "'": re.compile(r"[^'\\\r\n]*(?:\\[\s\S][^'\\\r\n]*)*'?"),
    '"': re.compile(r'[^"\\\r\n]*(?:\\[\s\S][^"\\\r\n]*)*"?'),
    "'''": re.compile(r"[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:''')?"),
    '"""': re.compile(r'[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:""")?'),
}
_LINE_REST = re.compile(r"[^\r\n]*")  # a comment
_LINKS = frozenset(("**", "//", "<<", ">>", "-", "+", "*", "/", "%", "&", "|", "^", "@", "~", ".", "and", "or"))
_RESETS = frozenset((",", ":", ";", "=", ":="))
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
_NESTING_ERRORS = ("too many nested parentheses", "too many levels of indentation", "too complex", "too many statically nested")
# (a filter's text runs to the braces, its blanks included: blanks after it
# are not a second run that could split them)
_JINJA_EXPRESSION = re.compile(r"\{\{-?[ \t]*[A-Za-z_][\w.]*(?:[ \t]*\|[^{}\n]*|[ \t]*-?)\}\}")
_JINJA_TAG = re.compile(r"^[ \t]*\{%-?[ \t]*(\w+)", re.MULTILINE)


def refuse(text: str, tokens: int = MAX_PARSE_TOKENS) -> tuple[str, int, int] | None:
    """Why ``text`` must not be handed to libcst, as (reason, line, col), or
    None; ``tokens``: the size bound (``MAX_CPYTHON_TOKENS`` when only
    CPython is to parse it)."""
    problem = too_large(text, tokens)
    if problem is not None:
        return problem
    brackets, statement = _scan(text)
    if brackets <= PLAIN_BRACKETS and statement <= PLAIN_STATEMENT and text.count("elif") <= PLAIN_ELIFS:
        return None
    try:
        tree = compile_quietly(text)
    except (RecursionError, MemoryError):
        return ("nested too deeply to analyse", 1, 0)
    except SyntaxError as exc:
        message = str(exc.msg or "invalid syntax")
        line, col = exc.lineno or 1, max((exc.offset or 1) - 1, 0)
        if any(marker in message for marker in _NESTING_ERRORS):
            return (f"nested too deeply to analyse: {message}", line, col)
        if brackets > MAX_BRACKETS:
            return (f"nested too deeply to analyse (more than {MAX_BRACKETS} brackets)", 1, 0)
        if statement > MAX_STATEMENT and _chain(text) > MAX_CHAIN:  # too deep for libcst; CPython's message will do
            return (f"syntax error: {message}", line, col)
        return None  # libcst reports it (and accepts syntax newer than this interpreter)
    except ValueError:  # NUL bytes: decode() rejects them earlier
        return None
    return _tree_depth(tree)


@lru_cache(maxsize=2)  # asked before CPython's parser and again before libcst's, of the same text
def too_large(text: str, limit: int = MAX_PARSE_TOKENS) -> tuple[str, int, int] | None:
    """Why ``text`` is too large for any parser, as (reason, line, col), or
    None.  CPython's ``ast`` of a file costs about 600 bytes per word or
    symbol (a million of them: 600 MB), so the same bounds hold before it,
    but for ``limit`` words and symbols."""
    if len(text) > MAX_PARSE_CHARS:
        return (f"too large to analyse: {len(text):,} characters (the limit is {MAX_PARSE_CHARS:,}); "
                "exclude generated files", 1, 0)
    if len(text) > limit:  # each is at least one character: a shorter file need not be counted
        tokens = _count_tokens(text)
        if tokens > limit:
            return (f"too large to analyse: {tokens:,} words and symbols (the limit is {limit:,}); "
                    "exclude generated files", 1, 0)
    return None


@lru_cache(maxsize=2)
def _count_tokens(text: str) -> int:
    return _TOKEN.subn("", text)[1]


def _scan(text: str) -> tuple[int, int]:
    """(deepest bracket nesting, longest logical line in characters), strings
    and comments not told apart: brackets in them can only make the file look
    deeper or its statements longer, which costs a closer look, nothing else."""
    depth = deepest = longest = start = 0
    for match in _SCAN.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
        elif token in _CLOSE:
            if depth:
                depth -= 1
        elif token[0] != "\\" and depth == 0:
            if match.start() - start > longest:
                longest = match.start() - start
            start = match.end()
    return deepest, max(longest, len(text) - start)


def _chain(text: str) -> int:
    """The most links of one chain in ``text`` (counting stops past
    ``MAX_CHAIN``): binary operators, ``and``/``or``, attribute dots and
    trailers (a call or subscript right after an operand), between operands
    of any shape, at one bracket depth of one logical line.  A comma, colon,
    semicolon or ``=`` starts a new chain; a bracketed group is one operand
    of the chain around it; strings and comments are skipped.  One pass over
    the tokens: linear in the length of the text, whatever its shape."""
    count = deepest = pos = 0
    operand = False  # the token before ends an operand: a bracket after it is a trailer
    outer: list[int] = []  # the counts of the enclosing bracket depths
    search = _LINK_TOKEN.search
    while deepest <= MAX_CHAIN and (match := search(text, pos)) is not None:
        token, pos = match.group(), match.end()
        if token in _LINKS:
            count, operand = count + 1, False
            deepest = max(deepest, count)
        elif token in _RESETS:
            count, operand = 0, False
        elif token in _STRING_REST:
            pos, operand = _STRING_REST[token].match(text, pos).end(), True
        elif token in _OPEN:
            if operand and token != "{":
                count += 1
                deepest = max(deepest, count)
            outer.append(count)
            count, operand = 0, False
        elif token in _CLOSE:
            count, operand = (outer.pop() if outer else 0), True
        elif token == "#":
            pos = _LINE_REST.match(text, pos).end()
        elif token[0] in "\r\n":
            if not outer:  # the end of a logical line
                count, operand = 0, False
        elif token[0] != "\\":  # not a line continuation
            operand = token[0].isalnum() or token[0] == "_"
    return deepest


def compile_quietly(text: str, bytecode: bool = False):
    """CPython's syntax tree of ``text`` (its code object with ``bytecode``:
    the whole compiler's checks, nothing run), without the SyntaxWarnings
    (invalid escapes, ``is`` with a literal) it would print about the user's code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(text, "<celerylint>", "exec", 0 if bytecode else ast.PyCF_ONLY_AST, dont_inherit=True)


def jinja_template(text: str) -> tuple[str, int, int] | None:
    """The first Jinja tag of a file that does not parse: a block tag
    (``{% if ... %}`` at the start of a line) or an expression
    (``{{ cookiecutter.name }}``).  Project templates are not Python until rendered."""
    match = _JINJA_TAG.search(text)
    if match is not None and "%}" in text[match.end():match.end() + 500]:
        shown = f"{{% {match.group(1)} %}}"
    else:
        match = _JINJA_EXPRESSION.search(text)
        if match is None:
            return None
        shown = match.group()
    line = text.count("\n", 0, match.start()) + 1
    return (f"looks like a Jinja template, not Python ('{shown}'); exclude templates",
            line, match.start() - (text.rfind("\n", 0, match.start()) + 1))


def _tree_depth(tree: ast.AST) -> tuple[str, int, int] | None:
    stack = [(tree, 1)]
    children = ast.iter_child_nodes
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return (f"nested too deeply to analyse (more than {MAX_DEPTH} levels)",
                    getattr(node, "lineno", 1), getattr(node, "col_offset", 0))
        depth += 1
        stack.extend((child, depth) for child in children(node))
    return None
