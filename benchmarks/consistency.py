"""One project, one answer, on real trees: for each checkout, a run over each
of its top-level directories holding Python, and the same run from inside it
(``cd DIR && celerylint .``, in a git work tree or beside a configuration
file: elsewhere the working directory decides), give, for the files under it, exactly the
findings of the whole-project run (those located there, and those whose fix
edits a file there); so does standard input named as each file the
whole-project run reports (``celerylint - --stdin-filename FILE``), for that
file.  The machine formats keep repository-relative paths, so the runs from
inside a directory compare as they are.

    python benchmarks/consistency.py CORPUS_DIR [NAME ...]

Run it with the interpreter celerylint is installed in.  The whole-project
run fills a cache in a temporary directory (the checkouts are only read),
so the runs over the directories are warm.  Prints one line per checkout
and the differences, and exits 1 when any.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist", "docs"}


def celerylint(args: list[str], cwd: Path, cache: str, stdin: bytes | None = None) -> list[dict]:
    script = Path(sys.executable).with_name("celerylint")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "celerylint"]
    done = subprocess.run([*cmd, "--exit-zero", "--output-format", "json", *args], cwd=cwd, capture_output=True,
                          input=stdin, env={**os.environ, "CELERYLINT_CACHE_DIR": cache})
    if done.returncode != 0:
        raise SystemExit(f"{cmd} {args} in {cwd} failed ({done.returncode}):\n{done.stderr[-2000:].decode()}")
    return json.loads(done.stdout)


def key(f: dict) -> str:
    return json.dumps({k: f.get(k) for k in ("code", "path", "line", "column", "message", "fix", "fingerprint")},
                      sort_keys=True)


def holds_python(directory: Path) -> bool:
    for _, dirnames, filenames in os.walk(directory):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        if any(n.endswith(".py") for n in filenames):
            return True
    return False


def concerns(f: dict, top: str) -> bool:
    paths = {f["path"], (f.get("fix") or {}).get("path") or f["path"]}
    return any(p == top or p.startswith(top + "/") for p in paths)


def compare(label: str, wanted: set[str], got: set[str]) -> list[str]:
    return ([f"{label}: only in the whole-project run: {k}" for k in sorted(wanted - got)]
            + [f"{label}: only in the run {label}: {k}" for k in sorted(got - wanted)])


def check(checkout: Path) -> tuple[int, int, list[str]]:
    with tempfile.TemporaryDirectory() as cache:
        whole = celerylint(["."], checkout, cache)
        tops = sorted(d.name for d in checkout.iterdir()
                      if d.is_dir() and not d.name.startswith(".") and d.name not in SKIP and holds_python(d))
        problems = []
        # without a git work tree or a configuration file, the project of a run
        # from inside a directory is found from there (docs/invocation.md, rule 4)
        pinned = any((checkout / name).exists() for name in (".git", ".celerylint.toml", "celerylint.toml"))
        for top in tops:
            wanted = {key(f) for f in whole if concerns(f, top)}
            problems += compare(f"over {top}", wanted, {key(f) for f in celerylint([top], checkout, cache)})
            if pinned:
                problems += compare(f"in {top}", wanted, {key(f) for f in celerylint(["."], checkout / top, cache)})
        for path in sorted({f["path"] for f in whole}):
            text = (checkout / path).read_bytes()
            got = celerylint(["-", "--stdin-filename", path], checkout, cache, stdin=text)
            problems += compare(f"on stdin as {path}", {key(f) for f in whole if concerns(f, path)},
                                {key(f) for f in got})
    return len(tops), len(whole), problems


def main() -> None:
    corpus = Path(sys.argv[1])
    names = sys.argv[2:] or sorted(p.name for p in corpus.iterdir() if p.is_dir())
    failed = 0
    for name in names:
        dirs, n, problems = check(corpus / name)
        failed += bool(problems)
        print(f"{name}: {dirs} directories, {n} whole-project findings, {len(problems)} differences", flush=True)
        for line in problems:
            print(f"    {line}")
    print(f"{len(names) - failed} of {len(names)} checkouts give the same findings however invoked")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
