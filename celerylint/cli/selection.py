"""The run's settings: the configuration file, then the command line's
selection options on top, as ruff combines them."""

from __future__ import annotations

from pathlib import Path

from .terminal import fail


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def settings_from_options(config, select, ignore, force_exclude, extend_select=None, cache_dir=None):
    """The settings of the working directory's project (``celerylint doctor``)."""
    from ..config.settings import ConfigError

    roots = roots_from_options(config, False, select, ignore, force_exclude, extend_select, cache_dir)
    try:
        return roots.settings(roots.root_of(Path.cwd()))
    except ConfigError as exc:
        fail(str(exc))


def roots_from_options(config, isolated, select, ignore, force_exclude, extend_select=None, cache_dir=None):
    """How each path finds its project and settings (config/roots.py), with
    the command line's options over every project's configuration, as ruff
    combines them."""
    import os
    from dataclasses import replace

    from ..config.roots import Roots
    from ..config.settings import ConfigError
    from ..config.table import check_codes, file_problem, shown_path
    from ..registry import known_codes
    from ..run.cache import ENV

    known = known_codes()
    try:
        if config is not None and file_problem(config):
            raise ConfigError(f"{shown_path(config)}: {file_problem(config)}")
        selected = tuple(check_codes(_split(select), "--select", known)) if select else None
        extended = tuple(check_codes(_split(extend_select), "--extend-select", known)) if extend_select else ()
        ignored = tuple(check_codes(_split(ignore), "--ignore", known)) if ignore else ()
    except ConfigError as exc:
        fail(str(exc))
    # as in ruff: --cache-dir, then the environment variable, then cache-dir of the configuration
    explicit = cache_dir or os.environ.get(ENV)

    def adjust(settings):
        if selected is not None:  # as in ruff: a --select replaces the configuration's select and extend-select
            settings = replace(settings, select=selected, extend_select=())
        if extended:
            settings = replace(settings, extend_select=settings.extend_select + extended)
        if ignored:
            settings = replace(settings, ignore=settings.ignore + ignored)
        if force_exclude:
            settings = replace(settings, force_exclude=True)
        if explicit:
            settings = replace(settings, cache_dir=Path(explicit))
        return settings

    return Roots(Path.cwd(), known, config=config, isolated=isolated, adjust=adjust)
