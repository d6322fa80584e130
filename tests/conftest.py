from __future__ import annotations

import compileall
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"

# Rules are found from their classes, not from the generated catalog, in this
# process and in every celerylint it starts: a stale catalog cannot hide a
# rule (test_docs checks the catalog separately).
os.environ["CELERYLINT_RULES_FROM_SOURCE"] = "1"


def pytest_configure(config):
    """Write the package's bytecode once, as installing a wheel does: every
    real ``celerylint`` a test starts would otherwise compile each module
    again where writing bytecode is off (``PYTHONDONTWRITEBYTECODE``, an
    editable install).  Stale files are rewritten; the sources are read as
    they are."""
    if not hasattr(config, "workerinput"):  # once, in the controller
        compileall.compile_dir(REPO / "celerylint", quiet=1)


@contextmanager
def shared_by_the_run(tmp_path_factory, name: str):
    """The temporary directory every test process of the run shares, held
    under the lock ``name`` while the block runs: what one process makes
    there once (a built release, an installed hook), the others find."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield shared


def startup_env(**extra: str) -> dict[str, str]:
    """The environment of a real start-up, which reads the generated catalog
    (for tests of what a run imports)."""
    env = {k: v for k, v in os.environ.items() if k != "CELERYLINT_RULES_FROM_SOURCE"}
    return {**env, **extra}


@pytest.fixture(scope="session")
def fork_server():
    """forkserver.py's server, for this test process (``CELERYLINT_TEST_SUBPROCESS``: none)."""
    if os.environ.get("CELERYLINT_TEST_SUBPROCESS") or not hasattr(os, "fork"):
        yield None
        return
    from forkserver import ForkServer

    server = ForkServer()
    yield server
    server.close()


@pytest.fixture
def cli(tmp_path, fork_server):
    """Run the real ``celerylint`` command in a directory; returns CompletedProcess.
    A run whose environment an interpreter reads when it starts (``PYTHON*``,
    ``LANG``, ``LC_*``) gets a new interpreter; the others are forked from
    one that has imported celerylint (forkserver.py)."""
    from forkserver import STARTUP_ENV

    def call(*args: str, cwd: Path | None = None, env: dict | None = None, input: str | None = None):
        full = {**os.environ, "NO_COLOR": "1", **(env or {})}
        if fork_server is not None and not any(k.startswith(STARTUP_ENV) for k in env or {}):
            return fork_server.run(list(args), Path(cwd or tmp_path), full, input, timeout=300)
        return subprocess.run(
            [sys.executable, "-m", "celerylint", *args],
            cwd=cwd or tmp_path, capture_output=True, text=True, timeout=300, env=full, input=input,
        )

    return call


def write_file(root: Path, name: str, text: str) -> Path:
    """Write ``root/name`` (its directories made); returns the path."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def write_project(root: Path, source: str, *more: str) -> None:
    """Write the files of ``# file:`` sections (``testing.split_files``;
    before the first, ``proj.py``), each part dedented."""
    import textwrap

    from celerylint.testing import split_files

    source = "".join(textwrap.dedent(part).lstrip("\n") for part in (source, *more))
    for rel, text in split_files(source, "proj.py").items():
        write_file(root, rel, text)


def show_apps(cli, root: Path, *args: str) -> list[dict]:
    """``celerylint --show-apps --format json`` in ``root``: its apps."""
    import json

    proc = cli("--show-apps", "--format", "json", *args, ".", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["apps"]


def lint_json(root: Path, *args: str, cache_dir: Path | None = None) -> tuple[int, list[dict], str]:
    """The real CLI in this process, in ``root``, as JSON: (exit status, findings, stderr)."""
    import json

    from click.testing import CliRunner

    from celerylint.run.cache import ENV as CACHE_ENV
    from celerylint.cli.commands import main

    env = {CACHE_ENV: str(cache_dir)} if cache_dir else {}
    old = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, ["--format", "json", *args, "."], env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout), result.stderr


def default_sigint() -> None:
    """A child's ``preexec_fn``: SIGINT as at a terminal, whatever the test
    runner inherited (a background job ignores SIGINT, and celerylint keeps a
    signal ignored by whoever started it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
