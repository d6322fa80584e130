"""How many files and lines of a checkout reach libcst, and which needles let them through.

    python benchmarks/needles.py /path/to/checkout

A file passes the prefilter when any checker's needle occurs in it (outside
its leading comment block).  It reaches libcst when a needle of a checker
other than CL001 occurs; a file only CL001 wants is syntax-checked by
CPython's parser instead.  For every needle the script prints the files and
lines it matches, and the files and lines that *only* it lets through (what
narrowing that needle would save).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from bench import python_files  # this folder is on sys.path when the script runs

from celerylint.engine.analysis import code_bytes
from dataclasses import replace

from celerylint.engine.prefilter import prefilter
from celerylint.registry import entries


def main(top: Path) -> None:
    total_files = total_lines = files_in = lines_in = cst_files = cst_lines = 0
    matched: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    alone: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    alone_entries = [(replace(e, requires=(n,)), n) for e in entries() for n in e.requires]
    for path in python_files(top):
        data = path.read_bytes()
        lines = data.count(b"\n")
        total_files += 1
        total_lines += lines
        code = code_bytes(data)
        rel = str(path.relative_to(top))
        hits = [(e.code or e.cls, repr(n)) for e, n in alone_entries if prefilter([e])(code, rel)]
        if not hits:
            continue
        files_in += 1
        lines_in += lines
        if any(code != "CL001" for code, _ in hits):
            cst_files += 1
            cst_lines += lines
        for key in hits:
            matched[key][0] += 1
            matched[key][1] += lines
        if len(hits) == 1:
            alone[hits[0]][0] += 1
            alone[hits[0]][1] += lines
    print(f"{top}: {total_files} files, {total_lines} lines; passing the prefilter: {files_in} files, "
          f"{lines_in} lines; reaching libcst: {cst_files} files, {cst_lines} lines "
          f"({100 * cst_lines / max(total_lines, 1):.1f}%)")
    print(f"{'rule':<8} {'needle':<60} {'files':>6} {'lines':>8} {'only-files':>10} {'only-lines':>10}")
    for key, (files, lines) in sorted(matched.items(), key=lambda kv: -kv[1][1]):
        only = alone.get(key, [0, 0])
        print(f"{key[0]:<8} {key[1][:60]:<60} {files:>6} {lines:>8} {only[0]:>10} {only[1]:>10}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
