"""The command line.  Only this module talks to the terminal and exits."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .. import __version__
from .adopt import adoption_options
from .overrides import OPTION_NAMES as _OVERRIDES, override_options
from .selection import roots_from_options as _roots, settings_from_options as _settings
from ..reporters import DEFAULT as DEFAULT_FORMAT, FORMATS
from ..reporters.color import CHOICES as COLORS
from .overrides import argv, configured
from .terminal import emit as _emit, err as _err, fail as _fail, write_stdout as _write_stdout


def _format_options(f, configurable: bool = False):
    """``--output-format`` (alias ``--format``, ``$CELERYLINT_OUTPUT_FORMAT``) and ``--color``.
    ``configurable``: unset, it is None and ``output-format`` of the configuration decides."""
    f = click.option("--color", type=click.Choice(COLORS), default="auto", show_default=True,
                     help="Colour in full, concise, grouped: auto (a terminal; NO_COLOR, FORCE_COLOR), always, never.")(f)
    return click.option("--output-format", "--format", "fmt", type=click.Choice((*FORMATS, "mermaid")),
                        default=None if configurable else DEFAULT_FORMAT, envvar="CELERYLINT_OUTPUT_FORMAT",
                        show_default=f"{DEFAULT_FORMAT}, or `output-format`" if configurable else True, show_envvar=True,
                        help="Report format (text: the same as full; mermaid: only with --show-apps).")(f)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@lambda f: _format_options(f, configurable=True)
@click.option("-o", "--output-file", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              envvar="CELERYLINT_OUTPUT_FILE", show_envvar=True, help="Write the report to FILE.")
@click.option("--show-fixes", is_flag=True, help="With --fix, also list the fixes applied, per file and code.")
@click.option("--fix/--no-fix", default=None, help="Apply safe fixes in place, then report what is left (default: `fix`).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
              help="With --fix or --diff, also apply unsafe fixes (default: `unsafe-fixes`).")
@click.option("--fix-only", is_flag=True, help="Apply fixes; neither report nor exit 1 for what is left (implies --fix).")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.option("--select", multiple=True, help="Comma-separated codes or prefixes to enable instead of the default rules (CL2, CL203, ALL); repeatable.")
@click.option("--extend-select", multiple=True, help="Comma-separated codes or prefixes to enable on top of the selection (CL112); repeatable.")
@click.option("--ignore", multiple=True, help="Comma-separated codes or prefixes to disable; repeatable.")
@click.option("--config", "config", multiple=True, metavar="FILE|KEY=VALUE",
              help="A pyproject.toml or celerylint.toml to read instead of discovery, or one `KEY = VALUE` (TOML) set over it; repeatable.")
@click.option("--isolated", is_flag=True, help="Read no configuration file: the defaults and the command line's options only.")
@click.option("-e", "--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--explain", metavar="CODE", help="Print a rule's documentation and exit.")
@click.option("--list-rules", is_flag=True, help="List every rule and exit.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (default: number of CPUs).")
@click.option("--force-exclude", is_flag=True, help="Apply exclude patterns to files named on the command line too.")
@click.option("--show-apps", is_flag=True, help="Show every Celery app, its configuration sources and settings, and exit.")
@click.option("-W", "--watch", is_flag=True, help="Lint again whenever a file of the project changes, until Ctrl-C.")
@override_options
@adoption_options
@click.version_option(__version__, "--version", prog_name="celerylint")
def main(paths, fmt, color, output, show_fixes, fix, unsafe_fixes, fix_only, diff, select, extend_select, ignore, config,
         isolated, exit_zero, explain, list_rules, no_cache, jobs, force_exclude, show_apps, watch, **adopt) -> None:
    """Find the Celery patterns that make tasks run twice or vanish.

    `celerylint check [PATH ...]` is the same command; `-` reads the source from stdin.
    `celerylint doctor --help`: the read-only check of a live Redis broker."""
    from . import adopt as cli_adopt

    if sys.stdout is None and (output is None or explain or list_rules):
        # ``celerylint . >&-``: say so before any work, rather than fix files
        # and lose the report
        _fail("cannot write the report: standard output is closed")
    if explain:
        from ..docs import explain_text

        text = explain_text(explain)
        if text is None:
            from ..doctor.codes import explain as explain_doctor

            text = explain_doctor(explain)
        if text is None:
            from ..config.messages import suggest_rule

            _fail(f"unknown rule {explain!r}{suggest_rule(explain)}; see --list-rules")
        _write_stdout((text + "\n").encode("utf-8"))
        return
    if fmt == "mermaid" and not show_apps:
        _fail("--output-format mermaid draws --show-apps; a report has no diagram")
    if list_rules:
        from ..docs import rule_table_text
        from ..reporters import rules_json

        _write_stdout((rules_json() if fmt == "json" else rule_table_text() + "\n").encode("utf-8"))
        return
    overrides = {name: adopt.pop(name) for name in _OVERRIDES}
    roots = _roots(config, isolated, select, ignore, force_exclude, extend_select, adopt["cache_dir"], overrides)
    from dataclasses import replace

    from ..config.settings import ConfigError

    try:  # the working directory's: what reports are relative to (run/projects.py) and list as rules
        settings = replace(roots.settings(roots.root_of(Path.cwd())), root=roots.report_root())
    except ConfigError as exc:
        _fail(str(exc))
    fmt, fix, unsafe_fixes = configured(settings, fmt, fix, unsafe_fixes, fix_only)
    stdin = [str(p) for p in paths] == ["-"] or adopt["stdin_filename"] is not None
    if adopt["stdin_filename"] is not None:  # as in ruff: --stdin-filename reads standard input
        for path in paths:
            if str(path) != "-":
                _err(f"celerylint: warning: ignoring {path} in favour of standard input (--stdin-filename)")
    for path in paths if not stdin else ():
        if not path.exists() and not path.is_symlink():
            _fail(f"{path}: no such file or directory")
    if watch:
        _watch(list(paths) or [Path(".")], roots, stdin, show_apps, diff, adopt)
    try:
        cli_adopt.early_exit(list(paths), roots, adopt)
        if show_apps:
            _show_apps(list(paths) or [Path(".")], roots, fmt, output, jobs, not no_cache)
        if stdin:
            result = cli_adopt.stdin_run(roots, adopt, fix=fix, unsafe=unsafe_fixes, diff=diff, cache=not no_cache,
                                         jobs=jobs)
        else:
            from ..run.projects import check

            result = check(list(paths) or [Path(".")], roots, fix=fix and not adopt["add_noqa"], unsafe=unsafe_fixes,
                           diff=diff and not adopt["add_noqa"], jobs=jobs, cache=not no_cache)
    except ConfigError as exc:
        _fail(str(exc))
    if adopt["add_noqa"]:
        cli_adopt.add_noqa_and_exit(result, settings, adopt)
    for notice in result.notices if not (adopt["quiet"] or adopt["silent"]) else ():
        _err(f"celerylint: {notice}")
    for error in result.errors:
        _err(f"celerylint: {error}")
    if diff:
        # A patch holds each file's own bytes (its encoding, its line
        # endings, whatever control characters it contains): written as they
        # are, never re-encoded or stripped of escape sequences.
        report = b"".join(result.diffs)
        status = 1 if result.diffs else 0
        if show_fixes and not (adopt["quiet"] or adopt["silent"]):  # the patch alone on stdout
            from ..reporters.text import applied

            for line in applied(result, "Would fix"):
                _err(line)
    else:
        summary = None
        if fix_only:  # as ruff: what is left is neither reported nor a failure
            result.findings = []
            n = sum(result.fixed.values())
            summary = f"Fixed {n} finding{'s' * (n != 1)}." if n else "No fixes applied."
        text = _render(fmt, result, settings, unsafe=unsafe_fixes, to_terminal=output is None, color=color,
                       show_fixes=show_fixes, summary=summary)
        status = 1 if result.findings else 0
        # File names that are not UTF-8 reach here as lone surrogates: print
        # them as U+FFFD so every report is valid UTF-8 (JSON and SARIF must be).
        report = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace").encode("utf-8")
    cli_adopt.report(report, output, result, fmt, adopt, unsafe=unsafe_fixes, to_stderr=stdin and fix and not diff,
                     diff=diff)
    if result.errors:
        _err("celerylint: internal errors occurred; findings above may be incomplete")
        sys.exit(2)
    sys.exit(cli_adopt.status(result, adopt, exit_zero, status))


def _watch(paths: list[Path], roots, stdin: bool, show_apps: bool, diff: bool, adopt) -> None:
    for flag, given in (("standard input", stdin), ("--show-apps", show_apps), ("--diff", diff),
                        ("--add-noqa", adopt["add_noqa"])):
        if given:
            _fail(f"--watch cannot be used with {flag}")
    from .watch import tops_of, watch

    watch(sys.argv[1:], tops_of(paths, roots), Stopped)


def _show_apps(paths: list[Path], roots, fmt: str, output: Path | None, jobs: int | None, cache: bool) -> None:
    """The apps of each project the paths belong to or hold (those defined
    under the paths, or all when none is: what their rules are judged
    against).  Paths are relative to the working directory in the text, to
    the report root in JSON (as the findings'), to the project in a mermaid
    diagram."""
    from ..domain.celeryconf.model import model
    from ..reporters.sources import mover
    from ..run.projects import read_projects, rebase
    from .show_apps import as_json, as_text, defined_in, describe, moved

    report_root = roots.report_root()
    described: dict = {"apps": [], "rabbitmq": None, "notices": []}
    for settings, project, notices, named in read_projects(paths, roots, jobs=jobs, cache=cache):
        one = describe(model(project))
        one["apps"] = defined_in(one["apps"], named, settings.root)
        for notice in notices + one.get("notices", []):
            _err(f"celerylint: {notice}")
        if fmt != "mermaid":
            move = (lambda rel, root=settings.root: rebase(rel, root, report_root)) if fmt == "json" else mover(
                settings.root)
            one = moved(one, move) if move is not None else one
        described["apps"] += one["apps"]
        if described["rabbitmq"] is None or one["rabbitmq"]["read"] and not described["rabbitmq"]["read"]:
            described["rabbitmq"] = one["rabbitmq"]  # of the first project that configures RabbitMQ
    if fmt == "mermaid":
        from .show_apps_mermaid import as_mermaid

        report = as_mermaid(described).encode("utf-8", "replace")
    else:
        report = (as_json(described) if fmt == "json" else as_text(described)).encode("utf-8", "replace")
    _emit(report, output)
    sys.exit(0)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--broker-url", metavar="URL", help="Check this broker instead of the apps' (default: $CELERY_BROKER_URL, then each app's).")
@click.option("--workers", is_flag=True, help="Also ask the running workers (Celery's `inspect`: what they hold, "
              "consume and run). This PUBLISHES Celery remote-control messages on the broker; without it the "
              "doctor only reads.")
@click.option("--management-url", metavar="URL", help="RabbitMQ's management API (default: http://<broker host>:15672 "
              "with the broker URL's user and password). Read with GET requests only.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, help="Stop after S seconds.")
@_format_options
@click.option("--output", "output", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to FILE.")
@click.option("--config", "config", type=click.Path(path_type=Path), help="A pyproject.toml or celerylint.toml to read instead of discovery.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
def doctor(paths, broker_url, workers, management_url, timeout, fmt, color, output, config, exit_zero) -> None:
    """Check the live broker of each app, read only: Redis, or RabbitMQ through its management API
    (CL150-CL159). --workers also asks the running workers."""
    if sys.stdout is None and output is None:
        _fail("cannot write the report: standard output is closed")
    settings = _settings(config, None, None, False)
    for path in paths:
        if not path.exists() and not path.is_symlink():
            _fail(f"{path}: no such file or directory")
    from ..doctor.codes import FAILING
    from ..reporters import HUMAN
    from ..doctor.connect import Unsupported
    from ..doctor.run import DoctorError, doctor as run_doctor

    try:
        result = run_doctor(list(paths) or [Path(".")], settings, broker_url=broker_url, timeout=timeout,
                            workers=workers, management_url=management_url)
    except (DoctorError, Unsupported) as exc:
        _fail(str(exc))
    for notice in result.notices:
        _err(f"celerylint doctor: {notice}")
    for error in result.errors:
        _err(f"celerylint doctor: error: {error}")
    failing = [f for f in result.findings if f.severity in FAILING]
    n, b = len(failing), result.brokers
    notes = len(result.findings) - n
    # a broker whose checks did not all run is not counted as checked; when
    # none was, the summary says so, and with nothing found there is none
    # (the error lines say what happened)
    info = f" ({notes} for information)" if notes else ""
    if b:
        summary = (f"{n} finding{'s' * (n != 1)} on {b} broker{'s' * (b != 1)} checked{info}"
                   f"{f'; {result.failed} could not be checked fully (see above)' if result.failed else ''}.")
    elif result.findings:
        summary = f"{n} finding{'s' * (n != 1)}{info} from the checks that ran; no broker was checked fully."
    else:
        summary = None
    if summary is None and fmt in HUMAN:
        sys.exit(2)
    text = _render(fmt, result, settings, unsafe=False, to_terminal=output is None, color=color, summary=summary,
                   doctor=True)
    report = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace").encode("utf-8")
    _emit(report, output)
    if result.errors:
        sys.exit(2)
    sys.exit(0 if exit_zero or not failing else 1)


def entry() -> None:
    """The ``celerylint`` command: ``main``, after which the garbage collector
    is told to leave what the run made alone (``gc.freeze``): the interpreter
    then exits without one last walk over every object libcst made."""
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        _reserve_standard_fds()
    import signal

    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:  # ignored by whoever started us: keep it so
            signal.signal(signum, _stop)
    try:
        if sys.argv[1:2] == ["rule"]:  # ``celerylint ./rule`` lints a directory of that name
            from .rule_command import rule

            rule(args=sys.argv[2:], prog_name="celerylint rule")
        elif sys.argv[1:2] == ["doctor"]:  # the one subcommand; ``celerylint ./doctor`` lints a directory of that name
            doctor(args=sys.argv[2:], prog_name="celerylint doctor")
        elif sys.argv[1:2] == ["server"]:  # the language server; ``celerylint ./server`` lints ./server
            from ..server import command

            command(args=sys.argv[2:], prog_name="celerylint server")
        elif sys.argv[1:2] == ["check"]:  # ruff's spelling of the bare command; ``celerylint ./check`` lints ./check
            main(args=argv(sys.argv[2:]), prog_name="celerylint check")
        else:
            main(args=argv(sys.argv[1:]), prog_name="celerylint")
    except Stopped as exc:
        # Interrupted (Ctrl-C) or told to stop: the pool has ended its
        # workers, a file being written was left as it was; nothing more is
        # printed, and the status is the shell's for that signal (130, 143).
        # Neither 1 ("findings remain") nor a traceback.
        sys.exit(128 + exc.signum)
    finally:
        import gc

        gc.freeze()


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived.  Not a KeyboardInterrupt: click would
    print "Aborted!" and exit 1, the status for findings."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame) -> None:
    import signal

    for other in (signal.SIGINT, signal.SIGTERM):  # one is enough: let the clean-up finish
        signal.signal(other, signal.SIG_IGN)
    raise Stopped(signum)


def _reserve_standard_fds() -> None:
    """Put /dev/null on a standard descriptor that was closed, so that no file
    this run opens gets descriptor 0, 1 or 2, where a stray write meant for
    the terminal (a crash message from native code) would land in it.
    ``sys.stdout`` stays None: the closed stream is still reported."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one
            except OSError:
                return


def _render(fmt, result, settings, *, unsafe: bool, to_terminal: bool, color: str = "auto",
            show_fixes: bool = False, summary: str | None = None, doctor: bool = False) -> str:
    from ..reporters import render
    from ..reporters.color import terminal_width, use_color

    rules = None
    if fmt == "sarif" and doctor:
        from ..doctor.codes import sarif_rules

        rules = sarif_rules()
    return render(fmt, result, settings, color=use_color(color, to_terminal), width=terminal_width(to_terminal),
                  unsafe=unsafe, summary_line=summary, show_fixes=show_fixes, sarif_rules=rules)
