"""A pre-commit run on one file of a project, warm, as a ratio to
``python -c "import click"``: medians of wall-clock and CPU time over runs
alternated with the baseline (the machine is noisy; only ratios mean much).

usage: python benchmarks/precommit.py CHECKOUT FILE [--runs N]
  CHECKOUT must be a git work tree (or hold a celerylint configuration file)
  so that celerylint reads the whole project; FILE is relative to it.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd: list[str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkout")
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    exe = shutil.which("celerylint") or sys.exit("celerylint is not on PATH")
    commands = {
        "import click": [sys.executable, "-c", "import click"],
        "celerylint (hook)": [exe, "--force-exclude", "--exit-zero", args.file],
        "celerylint --fix (hook)": [exe, "--fix", "--force-exclude", "--exit-zero", args.file],
    }
    subprocess.run([exe, "--exit-zero", "."], cwd=args.checkout, stdout=subprocess.DEVNULL)  # warm the cache
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, args.checkout))
    base_wall = statistics.median(w for w, _ in times["import click"])
    base_cpu = statistics.median(c for _, c in times["import click"])
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{name:24s} wall {wall:.3f} s ({wall / base_wall:.1f}x)   cpu {cpu:.3f} s ({cpu / base_cpu:.1f}x)")


if __name__ == "__main__":
    main()
