"""What a run on a few files costs next to the whole project, cold and warm.

    python benchmarks/focus.py CHECKOUT FILE [CHECKOUT FILE ...] [--runs N]

Run it with the interpreter celerylint is installed in.  For each checkout
(FILE relative to it), alternating so that a busy machine slows all alike,
medians of wall-clock and CPU time of:

- the whole project, cold (``--no-cache``) and the one file, cold: the
  issue's target is one file <= 0.3x the whole project;
- the one file, warm (the cache filled by a whole-project run, nothing
  changed: a pre-commit run), against ``python -c "import click"``
  (target <= 3x);
- two floors of a cold run on that file: the interpreter importing
  celerylint's command line and libcst, then libcst parsing the file once
  (nothing else read, no rule run: no cold run on the file can cost less);
  and the same with every checker imported (what a run on a tasks file
  imports today, most of them).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed ({done.returncode}):\n{done.stderr.decode(errors='replace')[-2000:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


FLOOR = """
import importlib, sys
import libcst
import celerylint.cli.commands, celerylint.run.runner
from celerylint.registry import entries
if sys.argv[2] == "checkers":
    for module in {e.module for e in entries()}:
        importlib.import_module(module)
with open(sys.argv[1], encoding="utf-8") as handle:
    libcst.parse_module(handle.read())
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pairs", nargs="+", help="CHECKOUT FILE [CHECKOUT FILE ...]")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if len(args.pairs) % 2:
        parser.error("give CHECKOUT FILE pairs")
    script = Path(sys.executable).with_name("celerylint")
    lint = [str(script)] if script.exists() else [sys.executable, "-m", "celerylint"]
    for checkout, file in zip(args.pairs[::2], args.pairs[1::2]):
        root = Path(checkout).resolve()
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "CELERYLINT_CACHE_DIR": cache}
            timed(lint + ["--exit-zero", "."], root, env)  # fills the cache for the warm runs
            cases = {
                "whole project, cold": (lint + ["--no-cache", "--exit-zero", "."], None),
                "one file, cold": (lint + ["--no-cache", "--exit-zero", file], None),
                "one file, warm": (lint + ["--exit-zero", file], env),
                "import click": ([sys.executable, "-c", "import click"], None),
                "floor: import, parse": ([sys.executable, "-c", FLOOR, file, "-"], None),
                "floor with checkers": ([sys.executable, "-c", FLOOR, file, "checkers"], None),
            }
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
            for _ in range(args.runs):
                for name, (cmd, environment) in cases.items():
                    times[name].append(timed(cmd, root, environment))
        wall = {n: statistics.median(t[0] for t in ts) for n, ts in times.items()}
        cpu = {n: statistics.median(t[1] for t in ts) for n, ts in times.items()}
        print(f"{root} {file}: medians of {args.runs} runs")
        for name in cases:
            print(f"  {name:22} {wall[name]:7.3f} s wall {cpu[name]:7.3f} s CPU")
        cold = (wall["one file, cold"] / wall["whole project, cold"], cpu["one file, cold"] / cpu["whole project, cold"])
        warm = (wall["one file, warm"] / wall["import click"], cpu["one file, warm"] / cpu["import click"])
        print(f"  one file cold / whole project cold   {cold[0]:.2f} wall {cold[1]:.2f} CPU  (target <= 0.3)")
        print(f"  one file warm / import click         {warm[0]:.2f} wall {warm[1]:.2f} CPU  (target <= 3)")
        for name in ("floor: import, parse", "floor with checkers"):
            ratio = (wall[name] / wall["whole project, cold"], cpu[name] / cpu["whole project, cold"])
            print(f"  {name} / whole project cold {ratio[0]:5.2f} wall {ratio[1]:.2f} CPU")


if __name__ == "__main__":
    main()
