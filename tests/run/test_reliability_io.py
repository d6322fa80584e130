"""Issue 12 (reliability): what the tree, the cache and the configuration can
hold must never hang a run, exhaust memory, serve a stale result, write
outside the repository or end in a traceback.

Each test builds its own fixtures and runs the real CLI (a subprocess with a
timeout, and a memory limit where a regression would exhaust memory), or
click's CliRunner where the test needs to look inside.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, lint_json
from celerylint.run import cache as cache_module, runner, stat_index
from celerylint.run.cache import ENV as CACHE_ENV
from celerylint.core.model import FileResult, Finding
from celerylint.core.source import NotAFile, TooLarge, read_capped

APP = (
    'from celery import Celery\n'
    'app = Celery("proj", broker="redis://localhost:6379/0")\n'
    '\n'
    '@app.task\n'
    'def ping():\n'
    '    pass\n'
)
LOCK = "import redis\nr = redis.Redis()\ndef f(key):\n    r.set('lock:' + key, 1, nx=True)\n"
REDIS_CONF = "maxmemory-policy allkeys-lru\n"
MEMORY_LIMIT = 2 << 30  # a run that reads /dev/zero fails fast instead of taking the machine's memory


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def celerylint(cwd: Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real command, with a timeout and a memory limit; the environment
    never carries a cache directory unless the test gives one."""
    base = {k: v for k, v in os.environ.items() if k != CACHE_ENV}
    return subprocess.run([sys.executable, "-m", "celerylint", *args], cwd=cwd, capture_output=True,
                          timeout=timeout, env={**base, "NO_COLOR": "1", **(env or {})},
                          preexec_fn=_limit_memory)


def findings(proc: subprocess.CompletedProcess) -> list[dict]:
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    return json.loads(proc.stdout.decode("utf-8"))


def codes(found: list[dict]) -> list[tuple[str, str]]:
    return [(f["path"], f["code"]) for f in found]


def age(root: Path, seconds: int = 60) -> None:
    """Date files back (the stat index does not trust files modified in the
    last two seconds); ``os.walk``, not ``rglob``: trees here may be deep."""
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9), follow_symlinks=False)


# -- F1, F2: special and oversized non-Python files -----------------------------


def test_read_capped_refuses_special_and_oversized_files(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "dir").mkdir()
    (tmp_path / "exact").write_bytes(b"x" * 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    for name in ("fifo", "zero", "dir"):
        with pytest.raises(NotAFile):
            read_capped(tmp_path / name, 100)
    assert read_capped(tmp_path / "exact", 100) == b"x" * 100
    with pytest.raises(TooLarge, match="larger than 100 bytes"):
        read_capped(tmp_path / "big", 100)
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "missing", 100)


def test_read_capped_stops_at_the_cap_when_the_size_lies(tmp_path, monkeypatch):
    """A file that grows after its fstat (or reports size 0, as /proc files do)
    is still read no further than the cap."""
    import celerylint.core.source as source

    path = tmp_path / "growing"
    path.write_bytes(b"y" * 5000)
    real = os.fstat

    def small(fd):
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 0,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(source.os, "fstat", small)
    with pytest.raises(TooLarge):
        read_capped(path, 4096)
    assert read_capped(path, 5000) == b"y" * 5000


@pytest.mark.parametrize("name", ["redis.conf", "docker-compose.yml", "compose.override.yaml"])
def test_fifo_named_like_a_redis_config_file_does_not_block(tmp_path, name):
    """F1: ``mkfifo redis.conf && celerylint --no-cache .`` blocked forever."""
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "redis-main.conf").write_text(REDIS_CONF)
    baseline = findings(celerylint(tmp_path, "--format", "json", "--no-cache", "."))
    os.mkfifo(tmp_path / name)
    os.mkfifo(tmp_path / "Procfile")  # CL103 reads the files that start workers
    proc = celerylint(tmp_path, "--format", "json", "--no-cache", ".", timeout=60)
    assert findings(proc) == baseline
    assert ("redis-main.conf", "CL106") in codes(baseline) and ("app.py", "CL103") in codes(baseline)
    assert f"celerylint: {name}: skipped: is not a regular file\n" in proc.stderr.decode()


def test_device_and_oversized_redis_config_files_are_skipped(tmp_path):
    """F2: ``ln -s /dev/zero redis-zero.conf`` read until memory ran out.  A
    link to a device, and a regular file over the 1 MiB cap, are skipped with
    a notice; a file of exactly 1 MiB is still read."""
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "redis-zero.conf").symlink_to("/dev/zero")
    (tmp_path / "docker-compose.yml").symlink_to("/dev/urandom")
    (tmp_path / "redis-big.conf").write_text(REDIS_CONF + "#" * (1 << 20))  # would be a CL106 if read
    (tmp_path / "redis-max.conf").write_text(REDIS_CONF + "#" * ((1 << 20) - len(REDIS_CONF)))
    (tmp_path / "start.sh").symlink_to("/dev/zero")  # CL103 reads the files that start workers
    proc = celerylint(tmp_path, "--format", "json", "--no-cache", ".", timeout=60)
    got = codes(findings(proc))
    stderr = proc.stderr.decode()
    assert "celerylint: redis-zero.conf: skipped: is not a regular file\n" in stderr
    assert "celerylint: docker-compose.yml: skipped: is not a regular file\n" in stderr
    assert "celerylint: redis-big.conf: skipped: is larger than 1 MiB\n" in stderr
    assert ("redis-max.conf", "CL106") in got and ("redis-big.conf", "CL106") not in got
    assert ("app.py", "CL103") in got


# -- F5: the stat index and an edit that restores the mtime ---------------------


def test_same_size_edit_with_the_mtime_restored_is_seen(tmp_path):
    """F5: the stat index trusted ``(mtime, size, inode)``; an edit of the same
    size whose mtime was set back (``os.utime``, ``touch -r``, ``rsync -t``)
    served the old result.  The ctime is part of the signature now."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text(APP + "\nping.apply_async(countdown=3.000)\n")
    for i in range(runner.INDEX_MIN_FILES):
        (root / f"plain_{i}.py").write_text(f"x = {i}\n")
    age(root)
    env = {CACHE_ENV: str(tmp_path / "cache")}
    first = findings(celerylint(root, "--format", "json", ".", env=env))
    assert [f for f in first if f["code"] == "CL206"] == []
    assert findings(celerylint(root, "--format", "json", ".", env=env)) == first  # served by the index
    assert list((tmp_path / "cache").glob("index-*.json"))
    path = root / "app.py"
    before = path.stat()
    path.write_text(path.read_text().replace("countdown=3.000", "countdown=30000"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)
    second = findings(celerylint(root, "--format", "json", ".", env=env))
    assert ("app.py", "CL206") in codes(second)
    assert second == findings(celerylint(root, "--format", "json", "--no-cache", "."))


# -- F6: configuration nested too deeply ----------------------------------------

DEEP = "[" * 5000 + "]" * 5000
DEEP_TABLE = "{a = " * 3000 + "1" + "}" * 3000


@pytest.mark.parametrize(("name", "content", "explicit"), [
    ("pyproject.toml", f"[tool.celerylint]\nx = {DEEP}\n", False),
    ("pyproject.toml", f"[tool.celerylint]\nselect = {DEEP}\n", True),
    ("pyproject.toml", f"[tool.celerylint]\nper-file-ignores = {DEEP_TABLE}\n", False),
    ("pyproject.toml", f"[tool.black]\nx = {DEEP}\n", False),  # the file is broken, whoever's table it is
    ("celerylint.toml", f"x = {DEEP}\n", False),
    ("celerylint.toml", f"exclude = {DEEP}\n", True),
])
def test_deeply_nested_configuration_is_a_configuration_error(tmp_path, name, content, explicit):
    """F6: ``x = [[[[...]]]]`` 5,000 deep gave a RecursionError traceback and exit 1."""
    (tmp_path / "a.py").write_text(LOCK)
    (tmp_path / name).write_text(content)
    args = ["--config", name] if explicit else []
    proc = celerylint(tmp_path, *args, "--no-cache", ".")
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr, stderr
    shown = name if explicit else f"{tmp_path}/{name}"
    assert stderr == f"celerylint: error: {shown}: invalid TOML: values nested too deeply\n"


# -- F7: file names that are not UTF-8, with the cache --------------------------


def test_non_utf8_file_name_in_cached_mode(tmp_path):
    """F7: ``t\\xffasks.py`` crashed the default (cached) mode with
    ``UnicodeEncodeError: surrogates not allowed``.  It is reported, filled
    into and served from the cache and the stat index, shown as U+FFFD in
    text and JSON (valid UTF-8) and percent-encoded in SARIF; ``--fix`` with
    the cache fixes it."""
    root = tmp_path / "proj"
    root.mkdir()
    bad = Path(os.fsdecode(os.fsencode(root) + b"/t\xffasks.py"))
    bad.write_text(LOCK)
    for i in range(runner.INDEX_MIN_FILES):
        (root / f"plain_{i}.py").write_text(f"x = {i}\n")
    age(root)
    env = {CACHE_ENV: str(tmp_path / "cache")}
    runs = [celerylint(root, "--format", "json", ".", env=env) for _ in range(3)]  # fill, cache, index
    for proc in runs:
        assert codes(findings(proc)) == [("t\ufffdasks.py", "CL203")]
        assert proc.stdout == runs[0].stdout
    assert list((tmp_path / "cache").glob("index-*.json"))
    assert len([p for p in (tmp_path / "cache").glob("??/*")]) >= 1
    text = celerylint(root, ".", env=env)
    assert text.returncode == 1 and text.stdout.decode("utf-8").startswith("t\ufffdasks.py:4:5: CL203")
    sarif = celerylint(root, "--format", "sarif", ".", env=env)
    assert sarif.returncode == 1 and b"Traceback" not in sarif.stderr
    [result] = json.loads(sarif.stdout.decode("utf-8"))["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "t%FFasks.py"
    fixed = celerylint(root, "--fix", "--unsafe-fixes", "--select", "CL203", ".", env=env)
    assert fixed.returncode == 0 and b"Traceback" not in fixed.stderr, fixed.stderr
    assert "ex=60" in bad.read_text()


# -- F9: damaged cache and stat index -------------------------------------------

@pytest.fixture
def cached_tree(tmp_path, monkeypatch):
    """A project with per-file findings, facts and project findings; the stat
    index serves it from the first file on."""
    monkeypatch.setattr(runner, "INDEX_MIN_FILES", 1)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text(APP + "\nping.apply_async(countdown=86400)\n")
    (root / "locks.py").write_text(LOCK)
    (root / "redis.conf").write_text(REDIS_CONF)
    for i in range(3):
        (root / f"plain_{i}.py").write_text(f"x = {i}\n")
    age(root)
    _, baseline, _ = lint_json(root, "--no-cache")
    assert {"CL203", "CL206", "CL106", "CL103"} <= {f["code"] for f in baseline}
    return root, tmp_path / "cache", baseline


def _cache_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.glob("**/*") if p.is_file() and p.name != ".gitignore")


def _replace(path: Path, how: str) -> None:
    path.unlink()
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "directory":
        path.mkdir()
    elif how == "oversized":  # sparse: no disk space, a size over every cap
        with open(path, "wb") as fh:
            fh.truncate(stat_index.INDEX_MAX_BYTES + 1)
    else:
        path.write_bytes(how.encode())


DAMAGE = [
    "fifo", "dev-zero", "directory", "oversized", "[" * 100000, '{"a": ' * 50000, "{not json", "", "null", "[]",
    f'{{"format": {stat_index.FORMAT}, "files": [], "project": []}}',
    f'{{"format": {stat_index.FORMAT}, "files": {{}}, "project": null}}',
    f'{{"format": {stat_index.FORMAT}, "files": {{"app.py": 1, "locks.py": [[]], "plain_0.py": [1, 2, 3]}}, "project": {{}}}}',
    '{"findings": {}, "facts": [], "parsed": true}', '{"findings": [], "facts": [1], "parsed": true}',
    '{"findings": [{"code": 7}], "facts": [], "parsed": true}',
]


@pytest.mark.parametrize("how", DAMAGE, ids=[d[:24] for d in DAMAGE])
def test_damaged_cache_files_are_misses(cached_tree, how):
    """F9: a cache of the wrong shape gave AttributeError, ``'[' * 100000`` a
    RecursionError, entries linked to /dev/zero an endless read.  Every
    entry and the index damaged the same way: the run gives the findings of
    a run without cache, and rewrites what it needs."""
    root, cache, baseline = cached_tree
    assert lint_json(root, cache_dir=cache)[1] == baseline  # fill
    files = _cache_files(cache)
    assert any(p.name.startswith("index-") for p in files) and len(files) >= 3
    for path in files:
        _replace(path, how)
    status, got, stderr = lint_json(root, cache_dir=cache)
    assert got == baseline and status == 1 and "Traceback" not in stderr
    assert lint_json(root, cache_dir=cache)[1] == baseline


def _mangle(stored: dict, root_rel: str) -> list[dict]:
    """Entries of the right outline whose details are wrong."""
    finding = stored["findings"][0] if stored["findings"] else None
    out = [
        {**stored, "parsed": "yes"},
        {**stored, "extra": 1},
        {**stored, "facts": [{"path": root_rel}]},  # a fact without a kind
        {**stored, "facts": [{"kind": "task", "path": "other.py"}]},  # another file's fact
        {**stored, "facts": [{"kind": "task", "path": root_rel, "line": "1"}]},
    ]
    if finding is not None:
        out += [
            {**stored, "findings": [{**finding, "path": "elsewhere.py"}]},
            {**stored, "findings": [{**finding, "line": "4"}]},
            {**stored, "findings": [{**finding, "line": True}]},
            {**stored, "findings": [{**finding, "severity": "fatal"}]},
            {**stored, "findings": [{k: v for k, v in finding.items() if k != "hint"}]},
            {**stored, "findings": [{**finding, "fix": {"description": "x", "edits": [{"line": 1}], "safe": True,
                                                      "path": None}}]},
            {**stored, "findings": [{**finding, "fix": []}]},
        ]
    return out


def test_stat_index_entries_of_the_wrong_shape_are_misses(cached_tree):
    """Entries whose signature matches but whose stored result is of another
    shape, and project findings of the wrong shape under the right key."""
    root, cache, baseline = cached_tree
    lint_json(root, cache_dir=cache)
    [index] = cache.glob("index-*.json")
    good = json.loads(index.read_bytes())
    stored = {rel: json.loads(entry[1]) for rel, entry in good["files"].items() if entry[1] is not None}
    assert {"app.py", "locks.py"} <= stored.keys() and good["project"]["findings"]
    variants = max(len(_mangle(s, rel)) for rel, s in stored.items())
    for i in range(variants):
        raw = json.loads(json.dumps(good))
        for rel, s in stored.items():
            options = _mangle(s, rel)
            raw["files"][rel][1] = json.dumps(options[i % len(options)])  # kept as JSON text
        raw["project"]["findings"] = [{**good["project"]["findings"][0], "col": None}] if i % 2 else [7]
        for rel in stored:  # every variant is indeed of the wrong shape
            with pytest.raises(ValueError):
                FileResult.from_stored(rel, json.loads(raw["files"][rel][1]))
        index.write_text(json.dumps(raw))
        status, got, stderr = lint_json(root, cache_dir=cache)
        assert got == baseline and "Traceback" not in stderr, i


def test_stored_results_round_trip():
    """What the cache writes is what it accepts (the shape check is exact)."""
    from celerylint.core.model import Edit, Fix

    finding = Finding("CL203", "lock-without-ttl", "m", "a.py", 1, 0, 1, 5, "error",
                      Fix("d", (Edit(1, 0, 1, 5, "x"),), False, None), None)
    result = FileResult("a.py", [finding, Finding("CL206", "n", "m", "a.py", 2, 0, 2, 1, hint="h")],
                        [{"kind": "task", "path": "a.py", "line": 1, "col": 0, "name": "x"}], parsed=True)
    raw = json.loads(json.dumps(result.stored()))
    again = FileResult.from_stored("a.py", raw)
    assert (again.findings, again.facts, again.parsed) == (result.findings, result.facts, True)
    assert [Finding.from_dict(json.loads(json.dumps(f.to_dict()))) for f in result.findings] == result.findings
    with pytest.raises(ValueError):
        FileResult.from_stored("b.py", raw)


# -- F19: a committed .celerylint_cache link ------------------------------------


def _repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "app.py").write_text(APP + "\nping.apply_async(countdown=86400)\n")
    (root / "locks.py").write_text(LOCK)
    return root


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_cache_directory_that_is_a_symlink_is_refused(tmp_path, target):
    """F19: a committed ``.celerylint_cache`` link made celerylint write cache
    files and a ``.gitignore`` with ``*`` wherever it pointed.  The run goes
    on without the cache, with one notice."""
    root = _repository(tmp_path)
    elsewhere = tmp_path / "victim" if target == "outside" else root / "docs"
    elsewhere.mkdir()
    (root / ".celerylint_cache").symlink_to(elsewhere)
    baseline = findings(celerylint(root, "--format", "json", "--no-cache", "."))
    notice = (f"celerylint: {root.resolve()}/.celerylint_cache: is a symbolic link; running without the cache "
              f"(set ${CACHE_ENV} for a cache elsewhere)")
    proc = celerylint(root, "--format", "json", ".")
    assert findings(proc) == baseline
    assert proc.stderr.decode().splitlines() == [notice]
    fixing = celerylint(root, "--fix", "--unsafe-fixes", ".")
    assert fixing.returncode in (0, 1) and fixing.stderr.decode().splitlines() == [notice]
    assert list(elsewhere.iterdir()) == []


def test_cache_subdirectory_that_is_a_symlink_gets_nothing(tmp_path):
    root = _repository(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    cache = root / ".celerylint_cache"
    cache.mkdir()
    for i in range(256):
        (cache / f"{i:02x}").symlink_to(victim)
    baseline = findings(celerylint(root, "--format", "json", "--no-cache", "."))
    assert findings(celerylint(root, "--format", "json", ".")) == baseline
    assert list(victim.iterdir()) == []


def test_explicit_cache_directory_may_be_a_symlink(tmp_path):
    """``$CELERYLINT_CACHE_DIR`` is the user's own choice: used as given."""
    root = _repository(tmp_path)
    real = tmp_path / "real-cache"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    proc = celerylint(root, "--format", "json", ".", env={CACHE_ENV: str(tmp_path / "link")})
    assert findings(proc) and proc.stderr == b""
    assert (real / ".gitignore").is_file() and _cache_files(real)
    assert not (root / ".celerylint_cache").exists()


def test_default_cache_directory_is_used(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    root = _repository(tmp_path)
    proc = celerylint(root, "--format", "json", ".")
    assert findings(proc) and proc.stderr == b""
    assert (root / ".celerylint_cache" / ".gitignore").is_file()
    assert cache_module.usable_cache_dir(root) == (root / ".celerylint_cache", None)


# -- F21: a very deep tree -----------------------------------------------------

DEPTH = 1500


def _deep_dirs(root: Path) -> list[Path]:
    """``d/d/.../d`` below ``root``, made one level at a time: ``os.makedirs``
    recurses once per level too.  Relative to ``root`` it stays far below
    PATH_MAX (2 characters a level)."""
    return [root / ("d/" * level) for level in range(1, DEPTH + 1)]


def test_deep_tree_is_walked(tmp_path):
    """F21: a tree 1,500 directories deep gave a RecursionError in os.walk
    (discovery, and CL103's search for worker command lines)."""
    root = tmp_path / "proj"
    root.mkdir()
    levels = _deep_dirs(root)
    try:
        for level in levels:
            level.mkdir()
        (levels[-1] / "x.py").write_text(LOCK)
        (levels[-1] / "worker.sh").write_text("celery -A proj worker\n")
        (levels[-1] / "redis.conf").write_text(REDIS_CONF)
        (root / "app.py").write_text(APP)  # no worker_prefetch_multiplier: CL103 walks the tree for a command line
        cold = celerylint(root, "--format", "json", "--no-cache", ".")
        got = codes(findings(cold))
        deep = "d/" * DEPTH
        assert (f"{deep}x.py", "CL203") in got and (f"{deep}redis.conf", "CL106") in got
        assert ("app.py", "CL103") in got
        env = {CACHE_ENV: str(tmp_path / "cache")}
        assert codes(findings(celerylint(root, "--format", "json", ".", env=env))) == got
        (levels[-1] / "worker.sh").write_text("celery -A proj worker --prefetch-multiplier=1\n")
        assert ("app.py", "CL103") not in codes(findings(celerylint(root, "--format", "json", "--no-cache", ".")))
    finally:
        for level in reversed(levels):  # shutil.rmtree recurses too (before Python 3.12)
            if level.exists():
                for child in level.iterdir():
                    if not child.is_dir():
                        child.unlink()
                level.rmdir()


def test_walk_is_os_walk():
    """The iterative walk yields what ``os.walk`` yields, in the same order,
    and honours pruning."""
    from celerylint.core.walk import walk

    top = str(REPO)

    def pruned(walker):
        out = []
        for dirpath, dirnames, filenames in walker:
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", ".venv", "__pycache__"))
            out.append((dirpath, list(dirnames), sorted(filenames)))
        return out

    assert pruned(walk(top)) == pruned(os.walk(top))


# -- Minor: temporary files of killed --fix runs ---------------------------------

BEFORE = 'import redis\nr = redis.Redis()\ndef f(key):\n    r.set("lock:" + key, 1, nx=True)\n'


def test_stale_temporary_files_of_killed_fix_runs_are_removed(tmp_path):
    """A ``--fix`` killed with SIGKILL leaves ``.X.py.<random>.celerylint.tmp``;
    the next ``--fix`` that writes in that directory removes those no live
    writer holds (those over an hour old in any case), and those of the file
    it writes whatever their age.  Links and names that are not exactly the
    writer's are left alone, and so are directories it does not write to
    (tests/run/test_fix_leftovers.py: locked ones, a real SIGKILL)."""
    (tmp_path / "a.py").write_text(BEFORE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("x = 1\n")
    hour_ago = time.time() - 3700
    stale = [tmp_path / ".a.py.k2_9xq0z.celerylint.tmp", tmp_path / ".gone.py.abcdefgh.celerylint.tmp",
             tmp_path / ".new\nline.py.abcdefgh.celerylint.tmp",
             tmp_path / ".a.py.fresh123.celerylint.tmp"]  # seconds old, but a.py's own and unlocked
    kept = [
        tmp_path / ".a.py.abc.celerylint.tmp",  # not 8 random characters
        tmp_path / ".a.py.ABCDEFGH.celerylint.tmp",  # not mkstemp's alphabet
        tmp_path / "a.py.abcdefgh.celerylint.tmp",  # no leading dot
        tmp_path / ".a.py.abcdefgh.celerylint.tmp.bak",
        tmp_path / "sub" / ".b.py.abcdefgh.celerylint.tmp",  # nothing is written in sub/
    ]
    for path in stale + kept:
        path.write_text("half")
        if path.name != ".a.py.fresh123.celerylint.tmp":
            os.utime(path, (hour_ago, hour_ago))
    target = tmp_path / "precious"
    target.write_text("keep me")
    link = tmp_path / ".link.py.abcdefgh.celerylint.tmp"
    link.symlink_to(target)
    os.utime(link, (hour_ago, hour_ago), follow_symlinks=False)
    kept.append(link)
    os.mkdir(tmp_path / ".d.py.abcdefgh.celerylint.tmp")
    proc = celerylint(tmp_path, "--fix", "--unsafe-fixes", "--no-cache", "--select", "CL203", ".")
    assert proc.returncode == 0, proc.stderr
    assert "ex=60" in (tmp_path / "a.py").read_text()
    assert [p for p in stale if os.path.lexists(p)] == []
    assert [p for p in kept if not os.path.lexists(p)] == []
    assert target.read_text() == "keep me" and (tmp_path / ".d.py.abcdefgh.celerylint.tmp").is_dir()


# -- Soak: concurrent runs sharing one cache --------------------------------------


def _soak_files(rng: random.Random, count: int) -> dict[str, str]:
    files = {"celery_app.py": APP + "app.conf.worker_prefetch_multiplier = 1\n", "redis.conf": REDIS_CONF}
    for i in range(count):
        kind = i % 4
        if kind == 0:
            files[f"pkg/tasks_{i}.py"] = (f"from celery_app import app\n\n@app.task\ndef t{i}():\n    pass\n\n"
                                          f"t{i}.apply_async(countdown={rng.choice(['3.000', '30000'])})\n")
        elif kind == 1:
            files[f"pkg/locks_{i}.py"] = LOCK.replace("nx=True", rng.choice(["nx=True", "ex=9, nx=True"]))
        else:
            files[f"pkg/plain_{i}.py"] = f"VALUE_{i} = {i}\n"
    return files


def _edit(root: Path, files: dict[str, str], rng: random.Random) -> None:
    """Change a few files: flip a finding in place keeping size and mtime
    (the F5 case), rewrite one, delete one, add one."""
    names = sorted(n for n in files if n.endswith(".py") and n != "celery_app.py")
    for name in rng.sample(names, 4):
        path = root / name
        text = path.read_text()
        flipped = (text.replace("3.000", "30000") if "3.000" in text else text.replace("30000", "3.000")
                   if "30000" in text else text.replace("VALUE", "value"))
        st = path.stat()
        path.write_text(flipped)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        files[name] = flipped
    name = rng.choice(names)
    files[name] = LOCK if "lock" not in files[name] else f"x = {rng.random()}\n"
    (root / name).write_text(files[name])
    gone = rng.choice([n for n in names if n != name])
    (root / gone).unlink()
    del files[gone]
    new = f"pkg/new_{rng.randrange(10**6)}.py"
    files[new] = LOCK
    (root / new).write_text(LOCK)


@pytest.mark.slow
def test_concurrent_runs_sharing_one_cache_agree_with_no_cache(tmp_path):
    """Rounds of 6 concurrent runs over one tree of 80 files (enough for the
    stat index) sharing one ``$CELERYLINT_CACHE_DIR``, with files edited,
    added and deleted between rounds: every run reports exactly what a
    ``--no-cache`` run of the same state reports."""
    rng = random.Random(12)
    root = tmp_path / "proj"
    files = _soak_files(rng, 80)
    assert sum(n.endswith(".py") for n in files) >= runner.INDEX_MIN_FILES
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    age(root)
    cache = tmp_path / "cache"
    base = {k: v for k, v in os.environ.items() if k != CACHE_ENV}
    env = {**base, "NO_COLOR": "1", CACHE_ENV: str(cache)}
    command = [sys.executable, "-m", "celerylint", "--format", "json", "."]
    deadline = time.monotonic() + 100
    for round_ in range(5):
        if round_ in (1, 3):
            _edit(root, files, rng)
        elif round_ in (2, 4):
            age(root)  # trusted by the stat index from now on (ctime stays new)
        expected = findings(celerylint(root, "--format", "json", "--no-cache", "."))
        procs = [subprocess.Popen([*command, *(["--jobs", "1"] if i % 2 else [])], cwd=root, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(6)]
        for proc in procs:
            out, err = proc.communicate(timeout=max(5, deadline - time.monotonic()))
            assert b"Traceback" not in err, err.decode(errors="replace")
            assert proc.returncode == (1 if expected else 0)
            assert json.loads(out) == expected, f"round {round_}"
        assert list(cache.glob("index-*.json"))
    assert not list(cache.rglob(".tmp-*"))
    shutil.rmtree(cache)
