from __future__ import annotations

from ..rule import Invalid, ProjectRule, Valid


class UnusedNoqa(ProjectRule):
    """
    ## What it does
    Reports a `# noqa` comment naming a celerylint code (`CL203`) that
    silences nothing on its line, or a `CLnnn` that is no celerylint code,
    like ruff's `RUF100` for its own codes. Off by default (select `CL002`).

    Only what celerylint can be sure of is reported: a full code of a rule
    that ran on the file (selected, and not ignored for it by `ignore` or
    `per-file-ignores`), never a prefix (`CL2`), a bare `# noqa`, another
    tool's code (`E501`, `F401`: ruff's `RUF100` judges those), nor a
    code of `celerylint doctor` (`CL150`-`CL155`). A comment that names
    `CL002` itself is left alone, and `# noqa` inside a string is text, not a
    comment. The work is done by the run (celerylint/run/unused_noqa.py), which
    knows what every comment silenced.

    ## Why is this bad?
    A `noqa` that no longer silences anything hides the next real finding
    on that line: once the lock gets its TTL the comment stays, and when
    someone later removes the TTL again nothing is reported. After
    `--add-noqa`, this rule tells which comments the fixes made obsolete.

    ## Example
    ```python
    import redis

    r = redis.Redis()


    def refresh():
        with r.lock("refresh", timeout=60):  # noqa: CL203
            ...
    ```

    Use instead:
    ```python
    import redis

    r = redis.Redis()


    def refresh():
        with r.lock("refresh", timeout=60):
            ...
    ```

    ## Fix safety
    Safe: it removes only the unused codes (the whole comment when nothing
    else is in it; other codes and other comments on the line are kept), and
    only codes that silenced nothing in this very run.

    ## References
    - [ruff: unused-noqa (RUF100)](https://docs.astral.sh/ruff/rules/unused-noqa/)
    """

    CODE = "CL002"
    NAME = "unused-noqa"
    SEVERITY = "warning"
    SUMMARY = "A `# noqa` code of celerylint that silences nothing on its line"
    HINT = "remove the code from the comment"
    FIX = "safe"
    DEFAULT_ENABLED = False
    TAGS = ("noqa",)

    def check(self, project):
        return ()  # computed by the run from what each comment silenced: unused_noqa.py

    VALID = (
        # CL203 does not run in tests (its PATHS), so it cannot tell whether the code is used
        Valid('import redis\nr = redis.Redis()\nwith r.lock("x", timeout=5):  # noqa: CL203\n    pass\n',
              path="tests/test_locks.py"),
        Valid('import redis\nr = redis.Redis()\nwith r.lock("x"):  # noqa: CL203\n    pass\n'),
        Valid('import redis\nr = redis.Redis()\nwith r.lock("x"):  # noqa: CL2\n    pass\n'),
        Valid('import os  # noqa: F401\nimport redis\nx = 1  # noqa\ny = 2  # noqa: CL2\n'),
        Valid('import redis\nNOTE = "# noqa: CL203"\n'),
        Valid('import redis\nx = 1  # noqa: CL203, CL002\n'),
        Valid('import redis\nx = 1  # noqa: CL153\n'),  # celerylint doctor's
        Valid('import redis\nx = 1  # noqa: CL203\n', config={"ignore": ["CL203"]}),  # did not run: cannot tell
        Valid('# celerylint: skip-file\nimport redis\nx = 1  # noqa: CL203\n'),
        Valid('# file: proj.py\nfrom celery import Celery\napp = Celery("proj", broker="redis://")\n'
              'app.conf.task_acks_late = False  # noqa: CL101\n'),  # a project finding silenced
    )
    INVALID = (
        Invalid('import redis\nr = redis.Redis()\nwith r.lock("x", timeout=5):  # noqa: CL203\n    pass\n',
                fixed='import redis\nr = redis.Redis()\nwith r.lock("x", timeout=5):\n    pass\n', at="3:31"),
        Invalid('import redis\nx = 1  # noqa: E501, CL203\n', fixed='import redis\nx = 1  # noqa: E501\n',
                message="unused `noqa` code `CL203`"),
        Invalid('import redis\nx = 1  # noqa: CL203  # the lock is taken in C\n',
                fixed='import redis\nx = 1  # the lock is taken in C\n'),
        Invalid('import redis\nx = 1  # the lock is taken in C  # noqa: CL203\n',
                fixed='import redis\nx = 1  # the lock is taken in C\n'),
        Invalid('import redis\nx = 1  # noqa: CL999\n', fixed='import redis\nx = 1\n', message="no celerylint code"),
        Invalid('import redis\nx = 1  # noqa: CL203, CL206\n', fixed='import redis\nx = 1\n', count=1),
    )
