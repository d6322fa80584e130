"""The command line's options for adopting celerylint and for editors
(``--add-noqa``, ``--statistics``, ``--show-settings``, ``--show-files``,
``-`` with ``--stdin-filename``, ``-q``, ``-s``, ``--cache-dir``,
``--exit-non-zero-on-fix``): declared here so that ``cli.main`` stays short;
they reach it as ``**adopt``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..reporters import HUMAN
from .terminal import emit, err, fail, write_stdout

OPTIONS = (
    click.option("--add-noqa", is_flag=True,
                 help="Add `# noqa: CODE` to the line of every finding, then exit; `--add-noqa=REASON` adds ` -- REASON`."),
    click.option("--add-noqa-reason", hidden=True),  # what `--add-noqa=REASON` becomes (cli.overrides.argv)
    click.option("--exit-non-zero-on-fix", is_flag=True, help="With --fix, exit 1 when a file was fixed, even if no finding is left."),
    click.option("--statistics", is_flag=True, help="Print how many findings of each code instead of the findings."),
    click.option("--show-settings", is_flag=True, help="Print the settings resolved for the paths, and exit."),
    click.option("--show-files", is_flag=True, help="Print the files that would be linted, and exit."),
    click.option("--stdin-filename", metavar="PATH", help="The file name of the source read from standard input (PATH `-`)."),
    click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no summary, no notices."),
    click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit status says whether findings remain."),
    click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
                 help="The cache directory (default: $CELERYLINT_CACHE_DIR, cache-dir, .celerylint_cache)."),
)


def adoption_options(command):
    for option in reversed(OPTIONS):
        command = option(command)
    return command


def early_exit(paths: list[Path], roots, adopt: dict) -> None:
    """``--show-settings`` and ``--show-files``: print, exit 0."""
    if adopt["show_settings"]:
        from .show_settings import show_settings

        write_stdout(show_settings(roots, paths).encode("utf-8", "replace"))
        sys.exit(0)
    if adopt["show_files"]:
        from ..run.discovery import discover

        names: list[Path] = []
        for path in paths or [Path(".")]:
            found = discover([path], roots.settings(roots.root_of(path)))
            for skipped, why in found.skipped:
                err(f"celerylint: {skipped}: skipped: {why}")
            names += [*found.python, *found.other]
        names = sorted(set(names), key=lambda p: p.as_posix())
        write_stdout("".join(f"{p}\n" for p in names).encode("utf-8", "surrogateescape"))
        sys.exit(0)


def stdin_run(roots, adopt: dict, *, fix: bool, unsafe: bool, diff: bool, cache: bool = False,
              jobs: int | None = None):
    """``-``: the run over standard input; with --fix, the fixed source is
    written to stdout here and the report goes to stderr."""
    from .stdin import run_stdin

    if adopt["add_noqa"]:
        fail("--add-noqa edits files: it cannot be used with `-` (standard input)")
    from ..core.source import MAX_PARSE_BYTES

    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        fail("cannot read the source: standard input is closed")
    data = stream.read(MAX_PARSE_BYTES + 1)  # no further: what no file may be (``/dev/zero`` never ends)
    if len(data) > MAX_PARSE_BYTES and fix and not diff:
        fail(f"standard input is larger than {MAX_PARSE_BYTES:,} bytes, more than celerylint analyses: "
             "--fix cannot write it back")
    result, fixed = run_stdin(data, adopt["stdin_filename"], roots, fix=fix, unsafe=unsafe, diff=diff, cache=cache,
                              jobs=jobs)
    if fix and not diff:
        write_stdout(fixed)
    return result


def add_noqa_and_exit(result, settings, adopt: dict) -> None:
    from .add_noqa import add_noqa

    count, notices = add_noqa(result.findings, settings.root, adopt["add_noqa_reason"])
    if not adopt["silent"]:
        for notice in notices:
            err(f"celerylint: {notice}")
        err(f"Added {count} noqa directive{'s' * (count != 1)}.")
    sys.exit(2 if result.errors else 0)


def report(report: bytes, output, result, fmt: str, adopt: dict, *, unsafe: bool, to_stderr: bool,
           diff: bool = False) -> None:
    """Write the report as ``-q``, ``-s``, ``--statistics`` want it (a
    ``--diff`` patch is left whole)."""
    if adopt["silent"]:
        return
    if diff:
        pass
    elif adopt["statistics"]:
        from .statistics import render

        report = render(result.findings, fmt, unsafe).encode("utf-8", "replace")
    elif adopt["quiet"] and fmt in HUMAN:  # the summary is the last line
        report = report.rstrip(b"\n")
        report = report[:report.rfind(b"\n") + 1] if b"\n" in report else b""
    if to_stderr:
        sys.stderr.flush()
        try:
            sys.stderr.buffer.write(report)
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        return
    emit(report, output)


def status(result, adopt: dict, exit_zero: bool, base: int) -> int:
    if adopt["exit_non_zero_on_fix"] and result.fixed:
        return 1
    return 0 if exit_zero else base
