"""What respecting ``.gitignore`` costs discovery: the first discovery of a
fresh process (as a run does it, warm ignore memo) in a git checkout against
a plain copy of the same tree without ``.git``.

Timings on a shared machine vary more than the difference measured, so with
valgrind installed it counts instructions (callgrind, deterministic to a
fraction of a percent): each count is of a process that imports what a run
imports and discovers, minus one that stops before discovering.  Without
valgrind it prints medians of CPU time over fresh processes, alternated.

usage: python benchmarks/gitignore.py CHECKOUT [--runs N]
  CHECKOUT must be a git work tree; the plain copy is made in a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

PROCESS = r"""
import sys, time
from pathlib import Path
import celerylint.cli.commands, celerylint.run.runner, celerylint.run.stat_index, hashlib, importlib.util  # imported by a run anyway
from celerylint.config.extend import load_settings
from celerylint.config.table import find_config
from celerylint.run.discovery import discover
from celerylint.registry import known_codes
root = Path(".")
settings = load_settings(find_config(root), root, known_codes())
if sys.argv[1] == "discover":
    start = time.thread_time()
    discover([root], settings, Path(".celerylint_cache"))
    print(time.thread_time() - start)
"""


def instructions(tree: str, what: str) -> int:
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c",
                           PROCESS, what], cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def cpu_ms(tree: str) -> float:
    done = subprocess.run([sys.executable, "-c", PROCESS, "discover"], cwd=tree, capture_output=True, text=True,
                          check=True)
    return float(done.stdout) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkout")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.checkout, ".git")):
        sys.exit(f"{args.checkout}: not a git work tree")
    with tempfile.TemporaryDirectory() as scratch:
        plain = os.path.join(scratch, "plain")
        shutil.copytree(args.checkout, plain, symlinks=True, ignore=shutil.ignore_patterns(".git", ".celerylint_cache"))
        trees = {"git checkout": args.checkout, "plain copy": plain}
        for tree in trees.values():  # fill the ignore memo and the caches a warm run has
            subprocess.run([sys.executable, "-m", "celerylint", "--exit-zero", "-s", "."], cwd=tree, check=False)
        if shutil.which("valgrind"):
            counts = {name: instructions(tree, "discover") - instructions(tree, "stop") for name, tree in trees.items()}
            git, plain_count = counts["git checkout"], counts["plain copy"]
            print(f"discovery: {git / 1e6:.1f}M instructions in the git checkout, {plain_count / 1e6:.1f}M in the "
                  f"plain copy: +{(git - plain_count) / 1e6:.1f}M (+{(git / plain_count - 1) * 100:.1f}%)")
            return
        samples: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                samples[name].append(cpu_ms(tree))
        git, plain_ms = (statistics.median(samples[name]) for name in trees)
        print(f"discovery (median CPU of {args.runs} fresh processes): {git:.1f} ms in the git checkout, "
              f"{plain_ms:.1f} ms in the plain copy: +{git - plain_ms:.1f} ms (+{(git / plain_ms - 1) * 100:.0f}%)")


if __name__ == "__main__":
    main()
