"""Lint one file: prefilter, parse once, one batched traversal, findings and facts.

Order of work, cheapest first: the ``skip-file`` directive, decoding, the
byte prefilter of every enabled checker, searched in the file minus its
leading comment block (no match: the file is never parsed and libcst is not
even imported; only CL001 matches: CPython's parser checks the syntax),
parsing, one batched traversal (``traverse.walk``) over all checkers that
matched, positions only if something was reported or a fact needs one,
``# noqa`` only if the file mentions it.  ``triage`` is the part without
libcst, ``analyze`` the rest: the runner looks up the cache in between and
sends only ``analyze`` to worker processes.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from functools import lru_cache

from ..config.settings import Settings
from ..core.model import DEFERRED_FINDING, FileResult, Finding
from .noqa import file_noqa, is_suppressed, silences
from .prefilter import prefilter
from ..registry import Entry
from ..core.source import DecodeError, LineIndex, decode

SKIP_FILE = re.compile(rb"^[ \t]*#[ \t]*celerylint:[ \t]*skip-file[ \t]*$", re.MULTILINE)
UNPARSABLE = ("CL001", "unparsable-file")


# Reasons that are limits of celerylint (and libcst), not errors in the file.
BEYOND_ANALYSIS = ("too large to analyse", "nested too deeply to analyse", "celerylint cannot analyse this file")


def unparsable(path: str, reason: str, line: int = 1, col: int = 0) -> Finding:
    if reason.startswith(BEYOND_ANALYSIS):
        hint = ("a limit of celerylint, not necessarily an error in the file: exclude the file if it is "
                "generated, or simplify or split it")
    else:
        hint = "celerylint could not read this file; fix the syntax or encoding (it is never fixed automatically)"
    return Finding(
        code=UNPARSABLE[0], name=UNPARSABLE[1], message=reason, path=path,
        line=line, col=col, end_line=line, end_col=col, severity="error", hint=hint,
    )


# The comment block a file starts with (licence header, shebang, coding
# cookie).  No string can be open there and a comment ends at the line end,
# so a needle that occurs only in it cannot be in the code: "you can
# redistribute it" must not make every file of a project mention "redis".
_HEADER = re.compile(rb"(?:[ \t\f]*(?:#[^\r\n]*)?(?:\r\n|\r|\n))*")


def code_bytes(data: bytes) -> bytes:
    """``data`` without its leading comment block: what needles search."""
    end = _HEADER.match(data).end()
    return data[end:] if end else data


def wanted(entries: Sequence[Entry], data: bytes, path: str = "") -> list[Entry]:
    return prefilter(entries)(code_bytes(data), path)


def triage(path: str, data: bytes, entries: Sequence[Entry]) -> tuple[FileResult, str | None, list[Entry]]:
    """The cheap part of linting one file, without libcst: ``skip-file``,
    decoding, prefilters.  Returns the result so far, and the decoded text and
    the checkers to run when the file must be parsed (else None and [])."""
    result = FileResult(path=path)
    if b"celerylint" in data and SKIP_FILE.search(data):
        return result, None, []
    active = wanted(entries, data, path)
    if not active and _decodes(data):
        return result, None, []
    try:
        source = decode(data)
    except DecodeError as exc:
        if any(e.code == UNPARSABLE[0] for e in entries):
            result.findings.append(unparsable(path, exc.reason, exc.line, exc.col))
        return result, None, []
    if active and all(e.code == UNPARSABLE[0] for e in active) and _valid(source.text):
        # CL001 is the only checker that wants the file (it mentions Celery
        # but nothing any rule looks at): CPython's parser says it is valid,
        # ten times faster than libcst, which is asked only to word the
        # error of a file CPython rejects.
        return result, None, []
    return result, (source.text if active else None), active


def split_syntax(text: str, active: list[Entry]):
    """The file's CPython ``ast`` (None when not needed or not readable), the
    ``ast`` collectors among ``active``, and the checkers left for libcst:
    without those whose ``GATE`` says the file holds nothing for them, and
    none when only CL001 is left and CPython reads the file."""
    syntax = [e for e in active if e.kind == "syntax"]
    gated = [e for e in active if e.gate]
    if not syntax and (not gated or any(not e.gate and e.code != UNPARSABLE[0] for e in active)):
        # libcst parses the file whatever the gates say: no ``ast`` just for them
        return None, [], active
    from .syntax_pass import gate, parse

    from .guard import refuse

    tree = parse(text)
    rest = [e for e in active if e.kind != "syntax" and not (e.gate and tree is not None and not gate(e.gate, tree, text))]
    if rest and all(e.code == UNPARSABLE[0] for e in rest) and tree is not None and refuse(text) is None:
        rest = []  # CPython parsed it, and it is within the guard's limits: what ``_valid`` asks
    return tree, syntax, rest


def _decodes(data: bytes) -> bool:
    """True when ``decode(data)`` certainly succeeds, found without decoding:
    ASCII without NUL bytes and without a coding cookie in its first two
    lines (one could name a codec that cannot read it)."""
    if not data.isascii() or b"\x00" in data:
        return False
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first != -1 else -1
    return b"coding" not in (data if second == -1 else data[:second])


def analyze(path: str, text: str, data: bytes, settings: Settings, entries: Sequence[Entry],
            active: list[Entry], module_name: str | None = None, client_index: dict | None = None) -> FileResult:
    """The expensive part: parse ``text`` and run the ``active`` checkers.

    The cyclic garbage collector is paused meanwhile: libcst makes a few
    hundred thousand objects per thousand lines, all freed by reference
    counting when the file is done, and the collections they would trigger
    (each walking every live object) cost about 6% of the analysis."""
    report_unparsable = any(e.code == UNPARSABLE[0] for e in entries)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _analyze(FileResult(path=path), text, data, settings, active, module_name, report_unparsable,
                        client_index or {})
    except RecursionError:  # a deep tree outlived the traversal but not the position or fix pass
        result = FileResult(path=path)
        if report_unparsable:
            result.findings.append(unparsable(path, "nested too deeply to analyse"))
        return result
    finally:
        if collecting:
            gc.enable()


def lint_source(
    path: str, data: bytes, settings: Settings, entries: Sequence[Entry], module_name: str | None = None,
) -> FileResult:
    """Lint the bytes of one file; ``entries`` are the checkers enabled for it."""
    result, text, active = triage(path, data, entries)
    if text is None:
        return result
    tree, syntax, active = split_syntax(text, active)
    if syntax:
        from .syntax_pass import collect

        result.facts.extend(collect(path, text, module_name, settings, syntax, tree))
    if not active:
        return result
    analysed = analyze(path, text, data, settings, entries, active, module_name)
    analysed.facts[:0] = result.facts
    return analysed


def parse(text: str):
    """Parse with libcst; return (module, None) or (None, (reason, line, col)).

    A text with form feeds in its indentation is parsed without them
    (``formfeed.py``); ``_form_feed_shifts`` then maps the module's positions
    back to the text's."""
    import libcst as cst

    from .guard import jinja_template, refuse
    from ..api.libcst_internals import parse_unvalidated

    problem = refuse(text)  # would crash or stall libcst
    if problem is not None:
        return None, problem
    stripped = _without_form_feeds(text) if "\f" in text else None
    try:
        return parse_unvalidated(text if stripped is None else stripped[0]), None
    except cst.ParserSyntaxError as exc:
        template = jinja_template(text)
        if template is not None:
            return None, template
        message = _first_line(exc.message)
        if _compiles(text):  # valid Python that libcst cannot read: say so, do not call it an error
            return None, (f"celerylint cannot analyse this file: its parser (libcst) rejects this valid "
                          f"Python: {message}", exc.raw_line, exc.raw_column)
        cpython = _cpython_error(text)
        if cpython is not None:  # CPython's line and words, not the parser's token list
            return None, cpython
        return None, (f"syntax error: {message}", exc.raw_line, exc.raw_column)
    except RecursionError:
        return None, ("nested too deeply to analyse", 1, 0)
    except Exception as exc:  # libcst raises a few other errors on odd input
        message = f"{type(exc).__name__}: {_first_line(str(exc))}"
        if _compiles(text):
            return None, (f"celerylint cannot analyse this file: its parser (libcst) fails on it: {message}", 1, 0)
        return None, (f"cannot parse: {message}", 1, 0)


@lru_cache(maxsize=2)  # parse, then _analyze, ask for the same text
def _without_form_feeds(text: str):
    from .formfeed import without_indent_form_feeds

    return without_indent_form_feeds(text)


def _form_feed_shifts(text: str) -> dict[int, int] | None:
    stripped = _without_form_feeds(text) if "\f" in text else None
    return None if stripped is None else stripped[1]


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "invalid syntax"


def _valid(text: str) -> bool:
    """Whether ``text`` is valid Python, for a file only CL001 reads: the
    guard's limits (which do not depend on the Python version: 3.10
    compiles a 20,000-term sum that 3.11 refuses), with CPython's size bound,
    not libcst's (no rule would analyse the file: its size loses nothing),
    and CPython's parser."""
    from .guard import MAX_CPYTHON_TOKENS, refuse

    return refuse(text, MAX_CPYTHON_TOKENS) is None and _compiles(text)


def _cpython_error(text: str) -> tuple[str, int, int] | None:
    """CPython's report of the syntax error in ``text``: ``("syntax error:
    <message>", line, col)``, the line and the message Python itself gives."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<celerylint>", "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
        except SyntaxError as exc:
            line = exc.lineno or 1
            return (f"syntax error: {exc.msg or 'invalid syntax'}", line, max((exc.offset or 1) - 1, 0))
        except Exception:  # ValueError, RecursionError, MemoryError: libcst's report stands
            return None
    return None


def _compiles(text: str) -> bool:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<celerylint>", "exec", flags=0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
        except Exception:  # SyntaxError, ValueError, RecursionError, MemoryError: let libcst judge
            return False
    return True


def _analyze(result: FileResult, text: str, data: bytes, settings: Settings,
             active: list[Entry], module_name: str | None, report_unparsable: bool,
             client_index: dict) -> FileResult:
    from libcst.metadata import MetadataWrapper

    from .batch import Batched, Guard
    from ..api.context import ContextCloser, ContextOpener, FileContext
    from .edits import EditBuilder
    from ..api.traverse import supported, walk

    path = result.path
    module, error = parse(text)
    if module is None:
        if report_unparsable:
            result.findings.append(unparsable(path, *error))
        if any(e.kind == "collector" for e in active):
            # the project phase must know that this file's facts are missing,
            # not that it has none: its settings are unknown, not unset
            result.facts.append({"kind": "unparsable", "path": path})
        return result
    result.parsed = True
    ctx = FileContext(path, text, settings, module_name)
    ctx.client_index = client_index
    checkers = []
    for entry in active:
        if entry.kind == "project":
            continue
        checker = entry.load()(ctx)
        checkers.append(checker)
    guarded = [Guard(c, result) for c in checkers]
    batch = [Batched(ContextOpener(ctx)), *guarded, Batched(ContextCloser(ctx))]
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        methods: dict[str, list] = {}
        for visitor in batch:
            for name, fn in visitor.get_visitors().items():
                methods.setdefault(name, []).append(fn)
        if supported(methods) and not any(c.get_inherited_dependencies() for c in checkers):
            walk(module, methods)
        else:
            wrapper.visit_batched(batch)
    except RecursionError:
        if report_unparsable:
            result.findings.append(unparsable(path, "nested too deeply to analyse"))
        return result
    except Exception:
        import traceback

        result.errors.append(f"{path}: internal error while analysing:\n{traceback.format_exc()}")
        return result
    if ctx.synthetic:
        _anchor_made_nodes(ctx)
    if ctx.client_lookups:  # the cached result holds while the index answers the same
        ctx.fact("client-lookups", None, lookups=ctx.client_lookups)
    if not ctx.reports and not any(node is not None for _, node in ctx.facts):
        result.facts = [fact for fact, _ in ctx.facts]
        return result
    positions = _positions(module, ctx)
    shifts = _form_feed_shifts(text)
    if shifts:
        from .formfeed import ShiftedPositions

        positions = ShiftedPositions(positions, shifts)
    index = LineIndex(text)
    builder = EditBuilder(module, positions, index)
    check_noqa = not settings.ignore_noqa and b"noqa" in data.lower()
    in_file = file_noqa(data) if check_noqa else None
    for i, (rule, node, message, pending, severity) in enumerate(ctx.reports):
        r = positions[node]
        when = ctx.report_conditions.get(i)  # judged in the project phase, noqa comments too
        if when is None and silences(in_file, rule.CODE):
            continue
        if when is None and check_noqa and is_suppressed(index, rule.CODE, r.start.line, r.end.line):
            # what CL002 (unused_noqa.py) needs to know which comments silenced something
            result.facts.append({"kind": "noqa-used", "path": path, "code": rule.CODE,
                                 "line": r.start.line, "end_line": r.end.line})
            continue
        fix = None
        if pending is not None:
            try:
                fix = builder.build(pending)
            except RecursionError:
                raise
            except Exception:
                import traceback

                result.errors.append(f"{path}: building the fix of {rule.CODE} failed:\n{traceback.format_exc()}")
        finding = Finding(
            code=rule.CODE, name=rule.NAME, message=message, path=path,
            line=r.start.line, col=r.start.column, end_line=r.end.line, end_col=r.end.column,
            severity=severity or rule.SEVERITY, fix=fix, hint=None if fix else rule.HINT,
        )
        if when is not None:
            result.facts.append({"kind": DEFERRED_FINDING, "path": path, "finding": finding.to_dict(), "when": when})
        else:
            result.findings.append(finding)
    for fact, node in ctx.facts:
        if node is not None:
            r = positions[node]
            fact.update(line=r.start.line, col=r.start.column, end_line=r.end.line, end_col=r.end.column)
        result.facts.append(fact)
    return result


def _anchor_made_nodes(ctx) -> None:
    """Reports and facts at a node made for an option a project task
    decorator sets (``domain/task_decorators.py``) are located at that
    decorator; a fix that would edit or write such a node is not offered."""
    made = ctx.synthetic

    def anchored(node):
        return made[id(node)][1] if node is not None and id(node) in made else node

    ctx.reports[:] = [(rule, anchored(node), message, None if pending is not None and _writes_made(pending, made)
                       else pending, severity) for rule, node, message, pending, severity in ctx.reports]
    ctx.facts[:] = [(fact, anchored(node)) for fact, node in ctx.facts]


def _writes_made(fix, made: dict) -> bool:
    import libcst as cst

    def inside(node) -> bool:
        return id(node) in made or any(inside(child) for child in node.children)

    for edit in fix.edits:
        nodes = (*edit.nodes, edit.target) if hasattr(edit, "nodes") else (edit.node,)
        if any(id(n) in made for n in nodes):
            return True
        new = getattr(edit, "new", None)
        if isinstance(new, cst.CSTNode) and inside(new):
            return True
    return False


def _positions(module, ctx):
    """The positions the reports and facts need.  A fix may ask for any
    node's, so a file with one gets every node's from libcst's provider
    (run directly: ``MetadataWrapper.resolve`` would add an empty batched
    visit of the whole tree); otherwise only the nodes reported or recorded
    are located (``positions.py``)."""
    if any(pending is not None for _, _, _, pending, _ in ctx.reports):
        from ..api.libcst_internals import all_positions

        return all_positions(module)
    from .positions import positions

    return positions(module, [node for _, node, *_ in ctx.reports] + [n for _, n in ctx.facts if n is not None])
