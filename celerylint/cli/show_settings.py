"""``--show-settings``: for each path given, its project (the directory read
whole with it) and why, then the settings celerylint resolved there (the
configuration files read, ``extend`` chain included, then the command line's
options), and the rules that run on the path."""

from __future__ import annotations

from pathlib import Path

from ..config.roots import Roots
from ..config.settings import Settings, declared_options, relative_path


def _list(values) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def show_settings(roots: Roots, paths: list[Path]) -> str:
    blocks = []
    for path in paths or [Path(".")]:
        root = roots.root_of(path)
        settings = roots.settings(root)
        lines = [f"# {path}"]
        if root is None:
            lines.append("project = none  # no configuration file, git work tree, pyproject.toml, setup.cfg or "
                         "setup.py above it: linted alone")
        else:
            lines.append(f"project = \"{root.directory}\"  # {root.why}")
        blocks.append("\n".join(lines) + "\n" + _settings(settings, path))
    return "\n".join(blocks)


def _settings(settings: Settings, path: Path) -> str:
    from ..registry import rules

    chain = settings.config_chain or ((settings.config_file,) if settings.config_file else ())
    lines = [
        f"root = \"{settings.root}\"",
        f"config-file = \"{settings.config_file}\"" if settings.config_file else "config-file = none",
    ]
    if len(chain) > 1:
        lines.append(f"extends = {_list(chain[1:])}")
    lines += [
        f"select = {_list(settings.select)}" + ("  # none: the rules on by default" if not settings.select else ""),
        f"extend-select = {_list(settings.extend_select)}",
        f"ignore = {_list(settings.ignore)}",
        f"exclude = {_list(settings.exclude)}",
        "per-file-ignores = {" + ", ".join(f'"{p}" = {_list(c)}' for p, c in settings.per_file_ignores) + "}",
        f"force-exclude = {str(settings.force_exclude).lower()}",
        f"respect-gitignore = {str(settings.respect_gitignore).lower()}",
        f"cache-dir = \"{settings.cache_dir}\"" if settings.cache_dir else "cache-dir = default",
        f"fixable = {_list(settings.fixable or ('ALL',))}",
        f"extend-fixable = {_list(settings.extend_fixable)}",
        f"unfixable = {_list(settings.unfixable)}",
    ]
    lines += [f"{key} = {str(value).lower()}" for key, value in
              (("fix", settings.fix), ("unsafe-fixes", settings.unsafe_fixes)) if value is not None]
    if settings.output_format is not None:
        lines.append(f"output-format = \"{settings.output_format}\"")
    if settings.ignore_noqa:
        lines.append("# --ignore-noqa: noqa comments are not read")
    for name, option in sorted(declared_options().items()):
        value = settings.option(name)
        shown = _list(value) if isinstance(value, tuple) else (str(value).lower() if isinstance(value, bool) else repr(value))
        lines.append(f"{name} = {shown}")
    rel = relative_path(path, settings.config_dir or settings.root) if path.is_file() else None
    codes = [e.code for e in rules() if settings.enabled(e.code, rel)]
    label = rel if rel is not None else "every file"
    lines.append(f"# rules for {label}: {', '.join(codes) if codes else 'none'}")
    return "\n".join(lines) + "\n"
