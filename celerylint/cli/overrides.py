"""The command line's options that set a configuration key (ruff's
spelling): ``--exclude``, ``--extend-exclude``, ``--per-file-ignores``,
``--extend-per-file-ignores``, ``--(no-)respect-gitignore``, ``--fixable``,
``--unfixable``, ``--extend-fixable``, ``--ignore-noqa``, and ``--config``
given as a file or as ``KEY=VALUE``.  Declared here so that ``cli.main``
stays short; they reach it as ``**overrides``."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import click

OPTIONS = (
    click.option("--exclude", multiple=True, metavar="GLOBS",
                 help="Comma-separated globs to exclude, instead of the configuration's `exclude` (repeatable)."),
    click.option("--extend-exclude", multiple=True, metavar="GLOBS",
                 help="Comma-separated globs to exclude on top of `exclude` (repeatable)."),
    click.option("--per-file-ignores", multiple=True, metavar="GLOB:CODES",
                 help="`GLOB:CODE[,CODE]`: codes to ignore in matching files, instead of the configuration's (repeatable)."),
    click.option("--extend-per-file-ignores", multiple=True, metavar="GLOB:CODES",
                 help="`GLOB:CODE[,CODE]`: added to `per-file-ignores` (repeatable)."),
    click.option("--respect-gitignore/--no-respect-gitignore", default=None,
                 help="Skip what .gitignore, .ignore and git's exclude files ignore (default: `respect-gitignore`, true)."),
    click.option("--fixable", multiple=True, metavar="CODES",
                 help="Comma-separated codes or prefixes --fix may fix (default: ALL; repeatable)."),
    click.option("--unfixable", multiple=True, metavar="CODES",
                 help="Comma-separated codes or prefixes --fix never fixes (repeatable)."),
    click.option("--extend-fixable", multiple=True, metavar="CODES",
                 help="Comma-separated codes or prefixes added to `fixable` (repeatable)."),
    click.option("--ignore-noqa", is_flag=True, help="Report findings whatever `# noqa` comments say."),
)


def override_options(command):
    for option in reversed(OPTIONS):
        command = option(command)
    return command


def split(values) -> list[str]:
    """Comma-separated values, from one option or several (``--ignore A --ignore B,C``)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = (values,)
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def config_arguments(values) -> tuple[Path | None, list[str]]:
    """``--config`` values: the one file, and the ``KEY=VALUE`` overrides.
    As in ruff, a value naming an existing file is the file; any other
    value holding ``=`` is an override; the rest are files (that the
    loader reports missing)."""
    path: Path | None = None
    pairs: list[str] = []
    if values is None:
        return None, []
    if isinstance(values, (str, Path)):
        values = (values,)
    for value in values:
        text = str(value)
        if "=" in text and not os.path.isfile(text):
            pairs.append(text)
            continue
        if path is not None:
            from .terminal import fail

            fail(f"--config: two configuration files given ({path}, {text}); use one, and KEY=VALUE for single keys")
        path = Path(text)
    return path, pairs


def _per_file(values, option: str, known) -> tuple[tuple[str, tuple[str, ...]], ...]:
    from ..config.settings import ConfigError
    from ..config.table import check_codes

    out = []
    for value in values:
        pattern, sep, codes = value.rpartition(":")
        if not sep or not pattern or not codes.strip():
            raise ConfigError(f"{option} {value!r}: expected GLOB:CODE[,CODE...]")
        out.append((pattern, tuple(check_codes(split(codes), f"{option} {value!r}", known))))
    return tuple(out)


def apply(settings, known, options: dict):
    """``settings`` with the command line's configuration options over it;
    ConfigError names the option that is wrong."""
    from ..api.options import glob_problem
    from ..config.settings import ConfigError
    from ..config.table import check_codes

    def globs(values, option):
        out = split(values)
        for pattern in out:
            if glob_problem(pattern):
                raise ConfigError(f"{option}: {glob_problem(pattern)}")
        return tuple(out)

    changes: dict = {}
    if options["exclude"]:
        changes["exclude"] = globs(options["exclude"], "--exclude")
    if options["extend_exclude"]:
        changes["exclude"] = changes.get("exclude", settings.exclude) + globs(options["extend_exclude"], "--extend-exclude")
    if options["per_file_ignores"]:
        changes["per_file_ignores"] = _per_file(options["per_file_ignores"], "--per-file-ignores", known)
    if options["extend_per_file_ignores"]:
        changes["per_file_ignores"] = (changes.get("per_file_ignores", settings.per_file_ignores)
                                       + _per_file(options["extend_per_file_ignores"], "--extend-per-file-ignores", known))
    if options["respect_gitignore"] is not None:
        changes["respect_gitignore"] = options["respect_gitignore"]
    for key in ("fixable", "unfixable", "extend_fixable"):
        if options[key]:
            option = "--" + key.replace("_", "-")
            codes = tuple(check_codes(split(options[key]), option, known))
            changes[key] = (settings.extend_fixable + codes) if key == "extend_fixable" else codes
    if options["ignore_noqa"]:
        changes["ignore_noqa"] = True
    return replace(settings, **changes) if changes else settings


def argv(args: list[str]) -> list[str]:
    """``--add-noqa=REASON`` as click reads it (``--add-noqa --add-noqa-reason
    REASON``): the reason must be joined by ``=``, as in ruff, so that
    ``--add-noqa src`` still lints ``src``."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return out + args[index:]
        if arg.startswith("--add-noqa="):
            out += ["--add-noqa", "--add-noqa-reason", arg.partition("=")[2]]
        else:
            out.append(arg)
    return out


OPTION_NAMES = ("exclude", "extend_exclude", "per_file_ignores", "extend_per_file_ignores", "respect_gitignore",
                "fixable", "unfixable", "extend_fixable", "ignore_noqa")


def configured(settings, fmt: str | None, fix: bool | None, unsafe: bool | None, fix_only: bool):
    """The report format, ``--fix`` and ``--unsafe-fixes``: as the command
    line says, else as ``output-format``, ``fix`` and ``unsafe-fixes`` of
    the configuration say, else the defaults."""
    from ..reporters import DEFAULT, FORMATS
    from .terminal import fail

    if fmt is None and settings.output_format is not None:
        if settings.output_format not in FORMATS:
            from ..config.messages import suggestion

            fail(f"{settings.config_file or '--config'}: output-format: unknown format {settings.output_format!r}"
                 f"{suggestion(settings.output_format, FORMATS)} (one of {', '.join(FORMATS)})")
        fmt = settings.output_format
    fix = fix if fix is not None else bool(settings.fix)
    unsafe = unsafe if unsafe is not None else bool(settings.unsafe_fixes)
    return fmt or DEFAULT, fix or fix_only, unsafe
