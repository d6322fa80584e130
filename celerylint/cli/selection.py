"""The run's settings: each project's configuration file, then the command
line's options on top, as ruff combines them."""

from __future__ import annotations

from pathlib import Path

from .terminal import fail


def settings_from_options(config, select, ignore, force_exclude, extend_select=None, cache_dir=None, overrides=None):
    """The settings of the working directory's project (``celerylint doctor``)."""
    from ..config.settings import ConfigError

    roots = roots_from_options(config, False, select, ignore, force_exclude, extend_select, cache_dir, overrides)
    try:
        return roots.settings(roots.root_of(Path.cwd()))
    except ConfigError as exc:
        fail(str(exc))


def roots_from_options(config, isolated, select, ignore, force_exclude, extend_select=None, cache_dir=None,
                       overrides=None):
    """How each path finds its project and settings (config/roots.py), with
    the command line's options over every project's configuration.

    ``config``: the ``--config`` values (a file, ``KEY=VALUE`` pairs);
    ``select``, ``ignore``, ``extend_select``: one option's value or its
    repetitions, merged; ``overrides``: the options of ``cli.overrides``."""
    import os
    from dataclasses import replace

    from ..config.overrides import apply_overrides, parse_override
    from ..config.roots import Roots
    from ..config.settings import ConfigError, Settings
    from ..config.table import check_codes, file_problem, shown_path
    from ..registry import known_codes
    from ..run.cache import ENV
    from .overrides import apply as apply_options, config_arguments, split

    known = known_codes()
    try:
        path, pairs = config_arguments(config)
        if path is not None and isolated:
            raise ConfigError("--config FILE and --isolated cannot be used together")
        if path is not None and file_problem(path):
            raise ConfigError(f"{shown_path(path)}: {file_problem(path)}")
        parsed = [parse_override(pair, known, Path.cwd()) for pair in pairs]
        selected = tuple(check_codes(split(select), "--select", known)) if select else None
        extended = tuple(check_codes(split(extend_select), "--extend-select", known)) if extend_select else ()
        ignored = tuple(check_codes(split(ignore), "--ignore", known)) if ignore else ()
        if overrides:
            apply_options(Settings(), known, overrides)  # its errors now, not in the middle of the run
    except ConfigError as exc:
        fail(str(exc))
    # as in ruff: --cache-dir, then the environment variable, then cache-dir of the configuration
    explicit = cache_dir or os.environ.get(ENV)

    def adjust(settings):
        settings = apply_overrides(settings, parsed)
        if selected is not None:  # as in ruff: a --select replaces the configuration's select and extend-select
            settings = replace(settings, select=selected, extend_select=())
        if extended:
            settings = replace(settings, extend_select=settings.extend_select + extended)
        if ignored:
            settings = replace(settings, ignore=settings.ignore + ignored)
        if overrides:
            settings = apply_options(settings, known, overrides)
        if force_exclude:
            settings = replace(settings, force_exclude=True)
        if explicit:
            settings = replace(settings, cache_dir=Path(explicit))
        return settings

    return Roots(Path.cwd(), known, config=path, isolated=isolated, adjust=adjust)
