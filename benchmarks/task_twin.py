"""Compare the ``ast`` twins of libcst fact collectors with their libcst
originals on every file of a tree that the twin accepts:
``python benchmarks/task_twin.py TREE...`` prints, per tree, the files
read, the files each twin accepts and every difference (exit 1 if any)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from celerylint.config.settings import Settings
from celerylint.domain.signature_twin import signature_facts
from celerylint.domain.task_twin import Declined, task_facts
from celerylint.engine.analysis import analyze
from celerylint.registry import entries

# each twin: its function, the libcst collector it stands for, the kinds that collector records
TWINS = {
    "tasks": (lambda *a: task_facts(*a), "TaskCollector", {"task", "task_acks_late", "task_class", "registered_task_class"}),
    "signatures": (lambda *a: signature_facts(*a), "TaskSignatures", {"celery-task-signature", "task-call-with-options"}),
}


def libcst_facts(path: str, text: str, module_name: str | None, cls: str, kinds: set[str]) -> list[dict]:
    collector = [e for e in entries() if e.cls == cls]
    result = analyze(path, text, text.encode(), Settings(), collector, collector, module_name)
    return [f for f in result.facts if f["kind"] in kinds]


def compare(path: str, text: str, module_name: str | None = None, twin_name: str = "tasks") -> tuple[int, str | None]:
    """(0: declined, 1: accepted, 2: accepted with facts; a description of the difference or None)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return 0, None
    try:
        function, cls, kinds = TWINS[twin_name]
        twin = json.loads(json.dumps(function(tree, text, path, module_name)))
    except Declined:
        return 0, None
    original = libcst_facts(path, text, module_name, cls, kinds)
    if original != twin:
        return 1, f"{path}:\n  libcst: {original}\n  ast:    {twin}"
    return 1 + bool(twin), None


def main(trees: list[str]) -> int:
    bad = 0
    for tree in trees:
        read = 0
        accepted = dict.fromkeys(TWINS, 0)
        with_facts = dict.fromkeys(TWINS, 0)
        for file in sorted(Path(tree).rglob("*.py")):
            try:
                text = file.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if "ask" not in text:  # neither collector's prefilter passes without it
                continue
            read += 1
            for name in TWINS:
                ok, diff = compare(str(file), text, "m", name)
                accepted[name] += ok > 0
                with_facts[name] += ok == 2
                if diff:
                    bad += 1
                    print(name, diff)
        print(f"{Path(tree).name}: {read} files mentioning task; accepted (with facts): "
              + ", ".join(f"{n} {accepted[n]} ({with_facts[n]})" for n in TWINS))
    print(f"{bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
