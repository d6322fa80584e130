"""Run celerylint over checked-out projects and record, per project: Python
files, wall time, exit status, tracebacks, internal errors and findings per
rule.  Each run is a separate process with a time limit, so a crash or a hang
shows up as such instead of ending the survey.

    python benchmarks/corpus_robustness.py path/to/checkouts/* [--timeout 900] [--fix-copy]

``--fix-copy`` also runs ``--fix --unsafe-fixes`` twice on a scratch copy of
each project and checks that every fixed file still parses and the second run
has nothing left to do.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from celerylint.config.settings import Settings
from celerylint.run.discovery import discover


def survey(project: Path, timeout: float) -> dict:
    files = len(discover([project], Settings(root=project, config_dir=project)).python)
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "celerylint", "--format", "json", "--no-cache", "--exit-zero", "."],
            cwd=project, capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"project": project.name, "files": files, "seconds": timeout, "status": "HANG"}
    seconds = time.monotonic() - start
    try:
        findings = json.loads(proc.stdout)
    except ValueError:
        findings = []
    return {
        "project": project.name, "files": files, "seconds": round(seconds, 1), "status": proc.returncode,
        "tracebacks": proc.stderr.count("Traceback"),
        "internal_errors": proc.stderr.count("internal error"),
        "notices": [line for line in proc.stderr.splitlines() if line.startswith("celerylint:")][:20],
        "findings": dict(sorted(Counter(f["code"] for f in findings).items())),
    }


def fix_twice(project: Path, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / project.name
        shutil.copytree(project, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", "node_modules"))
        runs = []
        for _ in range(2):
            proc = subprocess.run(
                [sys.executable, "-m", "celerylint", "--fix", "--unsafe-fixes", "--no-cache", "--exit-zero", "."],
                cwd=copy, capture_output=True, text=True, timeout=timeout,
            )
            runs.append((proc.returncode, "Traceback" in proc.stderr, proc.stdout.strip().splitlines()[-1:]))
        return {"fix_runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("projects", nargs="+", type=Path)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--fix-copy", action="store_true")
    args = parser.parse_args()
    for project in args.projects:
        row = survey(project.resolve(), args.timeout)
        if args.fix_copy:
            row.update(fix_twice(project.resolve(), args.timeout))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
