"""The release as a user installs it: the sdist and the wheel build
(``python -m build``, as CONTRIBUTING.md's release procedure does) and pass
``twine check --strict`` (the metadata PyPI would show, the README rendered
as the long description), and the wheel installs into fresh virtual environments, alone, beside Celery 4.4.7
and beside the newest Celery (celerylint requires no Celery at all), where
``celerylint --version`` and a run on the sample project work.

The installs use the package index (pip's cache makes them quick after the
first time); without it the test is skipped and says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import REPO, shared_by_the_run

# (name, what is installed beside the wheel)
BESIDE = (("alone", []), ("celery-4.4.7", ["celery==4.4.7"]), ("celery-newest", ["celery"]))
BUDGET = 240  # seconds for every install together: a slow index fails the test rather than hang it


def _index_reachable() -> bool:
    probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "click"],
                           capture_output=True, text=True, timeout=60)
    return probe.returncode == 0


def _venv(directory: Path, wheel: Path, beside: list[str]) -> tuple[Path, str]:
    """A fresh venv with the wheel (and ``beside``) installed; its bin and pip's output.
    The test run's pip installs into it (``pip --python``), which spares
    bootstrapping pip into every venv; nothing is compiled ahead (Python
    compiles what a run imports)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, capture_output=True,
                   timeout=120)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERYLINT_", "VIRTUAL_ENV"))}
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(directory / "bin" / "python"), "install",
                           "-q", "--no-compile", str(wheel), *beside],
                          capture_output=True, text=True, timeout=BUDGET, env=env)
    assert done.returncode == 0, f"pip install {wheel.name} {' '.join(beside)}:\n{done.stdout}{done.stderr}"
    return directory / "bin", done.stderr


def _build(tmp_path: Path) -> tuple[Path, Path]:
    """``python -m build`` of the checkout: the wheel and the sdist."""
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = dist.glob("celerylint-*.whl")
    [sdist] = dist.glob("celerylint-*.tar.gz")
    return wheel, sdist


def _twine_check(*artifacts: Path) -> str:
    """``twine check --strict``: a warning fails it as an error does."""
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, artifacts)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _without_content_type(wheel: Path, folder: Path) -> Path:
    """A copy of ``wheel`` whose metadata no longer says the README is Markdown."""
    folder.mkdir()
    copy = folder / wheel.name
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(copy, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith(".dist-info/METADATA"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if not line.startswith(b"Description-Content-Type:"))
            target.writestr(item, data)
    return copy


def _installed(tmp_path: Path, wheel: Path, beside: tuple[tuple[str, list[str]], ...]) -> dict[str, Path]:
    """Each venv of ``beside``, made in parallel; skipped without an index."""
    if not _index_reachable():
        pytest.skip("the package index is unreachable: cannot install the dependencies into a fresh venv")
    start = time.monotonic()
    with ThreadPoolExecutor(len(beside)) as pool:
        made = pool.map(lambda item: _venv(tmp_path / item[0], wheel, item[1])[0], beside)
        venvs = dict(zip([name for name, _ in beside], made))
    assert time.monotonic() - start < BUDGET
    return venvs


def _runs_on_the_sample_project(name: str, bin_dir: Path) -> None:
    """``celerylint --version``, and the findings on examples/shop the checkout's own run gives."""
    version = subprocess.run([str(bin_dir / "celerylint"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("celerylint, version "), (name, version.stderr)
    args = ["--no-cache", "--output-format", "json", "examples/shop"]
    expected = subprocess.run([sys.executable, "-m", "celerylint", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=120)
    run = subprocess.run([str(bin_dir / "celerylint"), *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, (name, run.stderr)
    assert json.loads(run.stdout) == json.loads(expected.stdout), name


def _celery_version(bin_dir: Path) -> str:
    return subprocess.run([str(bin_dir / "python"), "-c",
                           "import importlib.metadata as m\ntry: print(m.version('celery'))\n"
                           "except m.PackageNotFoundError: print('none')"],
                          capture_output=True, text=True, timeout=60).stdout.strip()


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """The release, built once for the whole run: the test processes share
    it through their common temporary directory, under a lock (two builds
    at once would share the checkout's egg-info and staging directory)."""
    with shared_by_the_run(tmp_path_factory, "release") as shared:
        folder = shared / "release"
        if not folder.exists():
            folder.mkdir()
            _build(folder)
        [wheel] = (folder / "dist").glob("celerylint-*.whl")
        [sdist] = (folder / "dist").glob("celerylint-*.tar.gz")
        return wheel, sdist


def test_the_release_builds_and_the_wheel_runs(tmp_path, built):
    wheel, sdist = built
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "celerylint/domain/celeryconf/settings_data.py" in names
    runtime = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert runtime and not [line for line in runtime if "celery" in line.lower()], runtime
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/LICENSE") for n in archive.getnames())
    assert "Description-Content-Type: text/markdown" in metadata
    checked = _twine_check(wheel, sdist)
    assert checked.count("PASSED") == 2, checked
    with pytest.raises(AssertionError, match="long_description"):
        _twine_check(_without_content_type(wheel, tmp_path / "broken"))  # the check has teeth
    [(name, bin_dir)] = _installed(tmp_path, wheel, BESIDE[:1]).items()
    assert _celery_version(bin_dir) == "none"
    _runs_on_the_sample_project(name, bin_dir)


@pytest.mark.slow
def test_the_wheel_installs_beside_celery_4_and_the_newest_celery(tmp_path, built):
    wheel, _ = built
    venvs = _installed(tmp_path, wheel, BESIDE[1:])
    assert _celery_version(venvs["celery-4.4.7"]) == "4.4.7"
    assert int(_celery_version(venvs["celery-newest"]).split(".")[0]) >= 5
    for name, bin_dir in venvs.items():
        _runs_on_the_sample_project(name, bin_dir)
