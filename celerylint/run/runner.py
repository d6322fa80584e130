"""One run: discover, lint every file, run the project phase, apply fixes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .cache import Cache, usable_cache_dir
from ..config.settings import Settings
from .discovery import discover
from .focus import Focus, about, concerns, focus
from .fixing import fix_files, parses  # noqa: F401  (parses: for rule authors' tests)
from .linter import Linter, lint_files
from ..core.model import Finding
from .project import Project, project_findings
from ..core.source import OTHER_FILE_MAX_BYTES, read_capped

INDEX_MIN_FILES = 64  # below this, reading and prefiltering cost less than loading the stat index


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # internal errors: exit status 2
    notices: list[str] = field(default_factory=list)  # files skipped or not written
    fixed: dict[str, int] = field(default_factory=dict)  # path -> fixes applied
    # --show-fixes: path -> (code, name) -> fixes applied
    fixed_codes: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    diffs: list[bytes] = field(default_factory=list)  # --diff: one patch per file (patch.py)
    files: int = 0


def run(paths: list[Path], settings: Settings, *, fix: bool = False, unsafe: bool = False,
        diff: bool = False, jobs: int | None = None, cache: bool = False) -> RunResult:
    out = RunResult()
    directory = None
    if cache:
        directory, why = usable_cache_dir(settings.root, settings.cache_dir)
        if why:
            out.notices.append(why)
    linter = Linter(settings, Cache(directory, settings) if directory is not None else None)
    linter.keep_digests = fix or diff
    seen = focus(paths, settings)
    found = discover([seen.directory, *paths] if seen else paths, settings, directory)
    linter.launch_files = sorted(found.launch)
    out.notices.extend(f"{p}: skipped: {why}" for p, why in found.skipped)
    out.files = len(seen.files) if seen else len(found.python)
    # A fix reads again the file it changes (fix_files): with fixes only to
    # the files named (focus.py), the rest of the project may come from the index.
    if linter.cache is not None and (seen or not (fix or diff)) and len(found.python) >= INDEX_MIN_FILES:
        linter.index = linter.cache.stat_index([f"{e.code}:{e.module}.{e.cls}" for e in linter.entries])
    results = lint_files(found.python, linter, jobs, out.notices)
    other, skipped = _read_other(found.other, linter)
    out.notices.extend(skipped)
    found_in_project = project_findings(results, other, linter, out.errors)
    out.notices.extend(_yaml_notice(linter))
    if linter.index is not None:
        for result in results.values():
            linter.index.put(result)
        linter.index.save()
    if fix or diff:
        found_in_project = fix_files(results, other, found_in_project, linter, out, unsafe=unsafe, write=not diff,
                                     only=seen.files if seen else None)
    for result in results.values():
        out.findings.extend(result.findings)
        out.errors.extend(result.errors)
    out.findings.extend(found_in_project)
    if seen:
        _keep_focus(out, seen, {r.path for r in results.values()} | set(other))
    out.findings.sort(key=Finding.sort_key)
    if settings.fixable or settings.unfixable:  # as ruff: a rule that is not fixable shows no fix
        from dataclasses import replace

        out.findings = [f if f.fix is None or settings.is_fixable(f.code) else replace(f, fix=None)
                        for f in out.findings]
    return out


def _yaml_notice(linter: Linter) -> list[str]:
    """Once a run: the deployment rules would read compose files or
    Kubernetes manifests of the tree, and PyYAML is not installed."""
    if not linter.launch_files:
        return []
    from ..domain.deploy.paths import DEPLOYMENT_RULES, YAML_NOTICE, yaml_deployment_file

    if not any(e.code in DEPLOYMENT_RULES for e in linter.entries):
        return []
    if not any(yaml_deployment_file(path) for path, _, _ in linter.launch_files):
        return []
    import importlib.util
    import sys

    loaded = sys.modules.get("celerylint.domain.deploy.yamlfile")  # the model tried to import PyYAML
    available = loaded.AVAILABLE if loaded is not None else importlib.util.find_spec("yaml") is not None
    return [] if available else [YAML_NOTICE]


def _keep_focus(out: RunResult, seen: Focus, read: set[str]) -> None:
    """What concerns the files named (focus.py); what went wrong elsewhere
    in the project is one notice, not a failure of this run."""
    others = read - seen.files
    out.findings = [f for f in out.findings if concerns(f, seen.files)]
    out.notices = [n for n in out.notices if not about(n, others)]
    elsewhere = [e for e in out.errors if about(e, others)]
    if elsewhere:
        out.errors = [e for e in out.errors if not about(e, others)]
        out.notices.append(f"{len(elsewhere)} internal error(s) in files not named; findings may be incomplete "
                           "(run celerylint on the whole project to see them)")


def read_project(paths: list[Path], settings: Settings, *, jobs: int | None = None,
                 cache: bool = False) -> tuple[Project, list[str]]:
    """The project the configuration rules would judge (for ``--show-apps``):
    the per-file phase with the configuration collectors, no rule run."""
    from dataclasses import replace

    from .project import make_project

    settings = replace(settings, select=("CL1",), ignore=())
    out = RunResult()
    directory = usable_cache_dir(settings.root, settings.cache_dir)[0] if cache else None
    linter = Linter(settings, Cache(directory, settings) if directory is not None else None)
    found = discover(paths, settings, directory)
    results = lint_files(found.python, linter, jobs, out.notices)
    other, skipped = _read_other(found.other, linter)
    return make_project(results, other, linter), out.notices + skipped


def _read_other(paths: list[Path], linter: Linter) -> tuple[dict[str, str], list[str]]:
    """The non-Python files the project phase reads (``redis-config-files``),
    and notices: only regular files of at most ``OTHER_FILE_MAX_BYTES`` are
    read; a pipe, a device, a larger file or one that cannot be read is
    skipped with a notice."""
    texts: dict[str, str] = {}
    notices: list[str] = []
    for path in paths:
        try:
            texts[linter.rel(path)] = read_capped(path, OTHER_FILE_MAX_BYTES).decode("utf-8", "replace")
        except FileNotFoundError:
            why = "a broken symbolic link" if path.is_symlink() else "the file disappeared"
            notices.append(f"{linter.rel(path)}: skipped: {why}")
        except OSError as exc:
            notices.append(f"{linter.rel(path)}: skipped: {exc.strerror or exc}")
    return texts, notices
