"""The ``ast`` twin of ``TaskSignatures`` (``facts/calls.py``): the same
``celery-task-signature`` facts, for the files
``domain.signature_twin.handles_signatures`` reads without the value model;
the libcst collector's gate leaves exactly those files to it."""

from __future__ import annotations

from ..api.needles import All, Regex
from ..api.syntax import SyntaxCollector
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.signature_twin import Declined, signature_facts
from ..domain.task_syntax import CLASS_WITH_RUN, EXECUTION_OPTIONS, TASK_DEFINITION
from .task_calls import TASK_CALL

# ``TaskSignatures``' and its twin's: calls ``.delay(``, ``.s(``, ``.si(``
# that pass an execution option by keyword; definitions: any task, or a
# task class through a base imported from the project
SIGNATURES_REQUIRES = (
    All((
        TASK_CALL,  # implied by the next, and searched already for TaskCalls: refutes most files at no cost
        Regex(rb"\.\s*(?:delay|si?)\s*\("),
        Regex(rb"\b(?:" + b"|".join(sorted(o.encode() for o in EXECUTION_OPTIONS)) + rb")\s*="),
    )),
    TASK_DEFINITION,
    CLASS_WITH_RUN,
)


class TaskSignatureTwin(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED  # as TaskSignatures': the two see the same files
    REQUIRES = SIGNATURES_REQUIRES

    def collect(self, tree) -> None:
        try:
            facts = signature_facts(tree, self.file.text, self.file.path, self.file.module_name)
        except Declined:
            return
        self.file.facts.extend(facts)
