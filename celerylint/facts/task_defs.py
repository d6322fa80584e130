"""The ``ast`` twin of ``TaskCollector`` (``facts/tasks.py``): the same
``task`` and ``task_acks_late`` facts, for the files whose task shapes
``domain.task_twin.handles_tasks`` reads without the value model; the libcst
collector's gate leaves exactly those files to it."""

from __future__ import annotations

from ..api.syntax import SyntaxCollector
from ..domain.task_twin import Declined, task_facts
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.task_syntax import TASK_COLLECTOR_REQUIRES


class TaskDefinitions(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED  # as TaskCollector's: the two see the same files
    REQUIRES = TASK_COLLECTOR_REQUIRES

    def collect(self, tree) -> None:
        try:
            facts = task_facts(tree, self.file.text, self.file.path, self.file.module_name)
        except Declined:
            return
        self.file.facts.extend(facts)
