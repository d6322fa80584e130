"""The run's settings: the configuration file, then the command line's
selection options on top, as ruff combines them."""

from __future__ import annotations

from pathlib import Path

from .terminal import fail


def settings_from_options(config, select, ignore, force_exclude, extend_select=None, cache_dir=None, overrides=None):
    """``config``: the ``--config`` values (a file, ``KEY=VALUE`` pairs);
    ``select``, ``ignore``, ``extend_select``: one option's value or its
    repetitions, merged; ``overrides``: the options of ``cli.overrides``."""
    from dataclasses import replace

    from ..config.overrides import apply_overrides, parse_override
    from .overrides import apply as apply_options, config_arguments, split as _split

    from ..config.settings import ConfigError
    from ..config.table import check_codes, file_problem, shown_path
    from ..config.extend import load_settings
    from ..registry import known_codes

    known = known_codes()
    try:
        config, pairs = config_arguments(config)
        if config is not None and file_problem(config):
            raise ConfigError(f"{shown_path(config)}: {file_problem(config)}")
        settings = load_settings(config, Path.cwd(), known)
        settings = apply_overrides(settings, [parse_override(pair, known, Path.cwd()) for pair in pairs])
        if select:
            # as in ruff: a --select replaces the configuration's select and extend-select
            settings = replace(settings, select=tuple(check_codes(_split(select), "--select", known)), extend_select=())
        if extend_select:
            settings = replace(settings, extend_select=settings.extend_select
                               + tuple(check_codes(_split(extend_select), "--extend-select", known)))
        if ignore:
            settings = replace(settings, ignore=settings.ignore + tuple(check_codes(_split(ignore), "--ignore", known)))
        if overrides:
            settings = apply_options(settings, known, overrides)
    except ConfigError as exc:
        fail(str(exc))
    if force_exclude:
        settings = replace(settings, force_exclude=True)
    import os

    from ..run.cache import ENV

    # as in ruff: --cache-dir, then the environment variable, then cache-dir of the configuration
    explicit = cache_dir or os.environ.get(ENV)
    if explicit:
        settings = replace(settings, cache_dir=Path(explicit))
    return settings
