"""Time celerylint against ruff and celery-audit on a checkout; print medians and ratios.

    python benchmarks/bench.py /path/to/checkout [--runs 5] [--audit-config settings.py ...]

Run it with the interpreter celerylint is installed in.  It creates
``benchmarks/.venv`` (git-ignored) with ruff and celery-audit from PyPI on
first use, then runs, in turn and interleaved so that a busy machine slows
all of them alike:

- celerylint cold (``--no-cache``) and warm (cache filled, nothing changed),
- ``ruff check --no-cache --select E,F,B``,
- ``celery-audit`` with the project's configuration module(s) (found by
  looking for a Django settings module naming ``CELERY_`` keys and the module
  that creates the ``Celery(...)`` app, or given with ``--audit-config``),
- celerylint on one small file without Celery content vs ``python -c "import click"``,
- celerylint's peak RSS (one process: ``--jobs 1``; and the largest process of a parallel run),
- a scaling run of celerylint cold on 1, 2 and 4 copies of the tree.

The cache of the warm runs goes to a temporary directory
(``CELERYLINT_CACHE_DIR``): the checkout is only read.  Every figure is a
median, of wall-clock time and of CPU time (user + system of the command and
its worker processes); the targets are about wall-clock time on an idle
machine, the CPU ratios are what to trust on a busy one.  The RSS target is
checked on one process doing all the work (``--jobs 1``).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
TOOLS = ("ruff", "celery-audit")
SKIP_DIRS = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist"}
# Issue 5 sets the ruff and RSS targets on saleor and the celery-audit one on pretalx.
TARGETS = {
    "cold": ("cold / ruff", 3.0),
    "audit": ("cold / celery-audit", 0.1),
    "warm": ("warm / ruff", 1.0),
    "one": ("one file / import click", 2.5),
    "rss": ("peak RSS MB, --jobs 1", 300.0),
}


def tool_bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_tools() -> None:
    if all(tool_bin(t).exists() for t in TOOLS):
        return
    print(f"installing {', '.join(TOOLS)} into {VENV} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(tool_bin("python")), "-m", "pip", "install", "--quiet", *TOOLS], check=True)


def celerylint_cmd() -> list[str]:
    script = Path(sys.executable).with_name("celerylint")
    return [str(script)] if script.exists() else [sys.executable, "-m", "celerylint"]


def run_once(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and the processes it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def peak_rss_mb(cmd: list[str], cwd: Path, env: dict) -> float:
    """Largest resident set of ``cmd`` or any process it waited for."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    kib = int(out.stdout.strip() or 0)
    return kib / 1024 if sys.platform != "darwin" else kib / 1024 / 1024


def python_files(top: Path):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith((".py", ".pyi")):
                yield Path(dirpath) / name


def find_audit_config(top: Path) -> tuple[list[Path], bool]:
    """(config modules in the order they take effect, Django namespace?)."""
    settings: list[Path] = []
    apps: list[Path] = []
    for path in python_files(top):
        rel = path.relative_to(top).as_posix()
        if re.search(r"(^|/)(tests?|testing)(/|$)|(^|/)test_", rel):
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if path.name == "settings.py" and "CELERY_" in text:
            settings.append(path)
        if re.search(r"\bCelery\(", text):
            apps.append(path)
    shortest = lambda paths: sorted(paths, key=lambda p: (len(p.parts), p.as_posix()))[:1]  # noqa: E731
    return shortest(settings) + shortest(apps), bool(settings)


CPU: dict[str, float] = {}  # median CPU seconds of the last measurement of each name


def median_times(cmds: dict[str, tuple[list[str], Path, dict | None]], runs: int) -> dict[str, float]:
    """Median wall seconds per command; median CPU seconds go to ``CPU``."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, (cmd, cwd, env) in cmds.items():
            times[name].append(run_once(cmd, cwd, env))
    for name, values in times.items():
        CPU[name] = statistics.median(cpu for _, cpu in values)
    return {name: statistics.median(wall for wall, _ in values) for name, values in times.items()}


def show(name: str, wall: float) -> None:
    print(f"  {name:<28} {wall:8.3f} s wall {CPU[name]:8.3f} s CPU")


def copy_tree(src: Path, dest: Path) -> None:
    for path in python_files(src):
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--audit-runs", type=int, default=3, help="runs of celery-audit (it is slow)")
    parser.add_argument("--audit-config", type=Path, action="append", help="configuration module(s) for celery-audit")
    parser.add_argument("--no-audit", action="store_true", help="skip celery-audit")
    parser.add_argument("--no-scaling", action="store_true", help="skip the 1x/2x/4x scaling run")
    parser.add_argument("--jobs", type=int, help="pass --jobs to celerylint")
    args = parser.parse_args()
    top = args.directory.resolve()
    ensure_tools()
    lint = celerylint_cmd() + (["--jobs", str(args.jobs)] if args.jobs else [])
    scratch = Path(tempfile.mkdtemp(prefix="celerylint-bench-"))
    # Every command runs with bytecode caching on, as after a pip install: with
    # PYTHONDONTWRITEBYTECODE set (some sandboxes set it) an editable
    # celerylint would recompile its modules on every run, while click and
    # celery-audit have the bytecode pip compiled when installing them.
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = {**base, "CELERYLINT_CACHE_DIR": str(scratch / "cache")}
    files = list(python_files(top))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    print(f"{top}: {len(files)} Python files, {lines} lines; {os.cpu_count()} CPUs; medians of {args.runs} runs")
    report: dict[str, float] = {}  # ratios of wall-clock medians
    cpu_report: dict[str, float] = {}  # the same ratios of CPU time (stable on a busy machine)
    try:
        subprocess.run(lint + ["--format", "json", "--exit-zero", str(top)], cwd=top, env=env,
                       stdout=subprocess.DEVNULL, check=True)  # fill the cache for the warm runs
        t = median_times({
            "celerylint cold": (lint + ["--no-cache", "--format", "json", "--exit-zero", str(top)], top, env),
            "celerylint warm": (lint + ["--format", "json", "--exit-zero", str(top)], top, env),
            "ruff": ([str(tool_bin("ruff")), "check", "--no-cache", "--select", "E,F,B", "--exit-zero", "-q", str(top)], top, base),
        }, args.runs)
        for name, value in t.items():
            show(name, value)
        report["cold"] = t["celerylint cold"] / t["ruff"]
        report["warm"] = t["celerylint warm"] / t["ruff"]
        cpu_report["cold"] = CPU["celerylint cold"] / CPU["ruff"]
        cpu_report["warm"] = CPU["celerylint warm"] / CPU["ruff"]
        if not args.no_audit:
            configs, django = (args.audit_config, True) if args.audit_config else find_audit_config(top)
            audit = [str(tool_bin("celery-audit"))]
            for config in configs:
                audit += ["--config", str(config)]
            if django and configs:
                audit += ["--settings-namespace", "CELERY"]
            audit.append(str(top))
            print(f"  celery-audit: {' '.join(audit[1:])}")
            ta = median_times({"celery-audit": (audit, top, base)}, args.audit_runs)["celery-audit"]
            show("celery-audit", ta)
            report["audit"] = t["celerylint cold"] / ta
            cpu_report["audit"] = CPU["celerylint cold"] / CPU["celery-audit"]
        small = scratch / "small" / "helpers.py"
        small.parent.mkdir()
        small.write_text("def add(a, b):\n    return a + b\n")
        one = median_times({
            "import click": ([sys.executable, "-c", "import click"], small.parent, base),
            "celerylint one file": (lint + [str(small)], small.parent, env),
        }, max(args.runs, 10))
        for name, value in one.items():
            show(name, value)
        report["one"] = one["celerylint one file"] / one["import click"]
        cpu_report["one"] = CPU["celerylint one file"] / CPU["import click"]
        serial = celerylint_cmd() + ["--jobs", "1", "--no-cache", "--format", "json", "--exit-zero", str(top)]
        report["rss"] = peak_rss_mb(serial, top, env)
        parallel_rss = peak_rss_mb(lint + ["--no-cache", "--format", "json", "--exit-zero", str(top)], top, env)
        print(f"  peak RSS: {report['rss']:.0f} MB with --jobs 1; largest process of a parallel run {parallel_rss:.0f} MB")
        if not args.no_scaling:
            base = cpu_base = None
            for copies in (1, 2, 4):
                tree = scratch / f"x{copies}"
                for i in range(copies):
                    copy_tree(top, tree / f"copy{i}")
                ts = median_times({"scale": (lint + ["--no-cache", "--format", "json", "--exit-zero", str(tree)], tree, env)},
                                  min(args.runs, 3))["scale"]
                base = base or ts
                cpu_base = cpu_base or CPU["scale"]
                print(f"  scaling {copies}x: {ts:8.2f} s wall ({ts / base:.2f}x), {CPU['scale']:8.2f} s CPU "
                      f"({CPU['scale'] / cpu_base:.2f}x); linear is {copies}x")
                report[f"scale{copies}"] = ts / base
                cpu_report[f"scale{copies}"] = CPU["scale"] / cpu_base
                shutil.rmtree(tree)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"ratios{'':<30}     wall      CPU  target")
    for key, (label, target) in TARGETS.items():
        if key in report:
            verdict = "ok" if report[key] <= target else "MISSED"
            cpu = f"{cpu_report[key]:8.3f}" if key in cpu_report else " " * 8
            print(f"  {label:<34} {report[key]:8.3f} {cpu}  <= {target:g} {verdict}")
    print("  (issue 5 sets the ruff, warm and RSS targets on saleor, the celery-audit one on pretalx)")
    for copies in (2, 4):
        if f"scale{copies}" in report:
            print(f"  {'scaling ' + str(copies) + 'x / 1x':<34} {report[f'scale{copies}']:8.3f} "
                  f"{cpu_report[f'scale{copies}']:8.3f}  linear: {copies}")


if __name__ == "__main__":
    main()
