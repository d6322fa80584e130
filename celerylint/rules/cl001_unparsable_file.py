from __future__ import annotations

from ..rule import All, Invalid, Rule, Valid


class UnparsableFile(Rule):
    """
    ## What it does
    Reports a Python file that celerylint cannot decode or parse, with the
    reason and the position: a syntax error, bytes that are not valid in the
    file's encoding (UTF-8 unless a PEP 263 coding cookie says otherwise), a
    UTF-16 byte order mark, a NUL byte, nesting too deep to analyse (more
    than 200 levels, or 200 brackets), a file over a million characters or
    70,000 words and symbols (generated code), a Jinja template that is not
    Python until rendered, or a file that cannot be read. Pipes, devices,
    broken symbolic links and files that vanish during the run are skipped
    with a message instead. When the file is valid Python that celerylint
    still cannot analyse (too large, nested too deeply, or rejected by
    libcst, its parser), the message and the hint say it is a limit of
    celerylint, not an error in the file. A file that only CL001 would read
    (no other rule's prefilter selects it) is reported only when it is not
    valid Python: its size (up to 300,000 words and symbols, what CPython
    parses in under 200 MB) loses no check, so it is not reported. A syntax error is reported at the
    line and with the message CPython gives (`expected ':'`, `'(' was never
    closed`).

    celerylint parses only files that can contain something it checks: files
    that mention `celery` or `redis`, and files another rule's prefilter
    selects (a countdown, a lock, a cache call, ...). A syntax error in a file
    unrelated to Celery is left to your other tools; every file is decoded,
    though, so encoding problems are reported everywhere.

    ## Why is this bad?
    A file celerylint cannot read is a file it cannot check: its tasks, locks
    and settings are invisible, so a clean report would be a false comfort.
    The rest of the run goes on.

    ## Example
    ```python
    from celery import shared_task

    @shared_task
    def charge(order_id:
        ...
    ```

    Use instead:
    ```python
    from celery import shared_task

    @shared_task
    def charge(order_id):
        ...
    ```

    ## Fix safety
    No fix: a file that does not parse is never changed by celerylint.

    ## References
    - [PEP 263: source code encodings](https://peps.python.org/pep-0263/)
    """

    CODE = "CL001"
    NAME = "unparsable-file"
    SEVERITY = "error"
    SUMMARY = "A file that cannot be decoded or parsed, so nothing in it was checked"
    HINT = "celerylint could not read this file; fix the syntax or encoding (it is never fixed automatically)"
    TAGS = ("syntax",)
    # "elery" first: one search refutes both spellings in most files
    REQUIRES = (All((b"elery", (b"celery", b"Celery"))), b"redis")

    VALID = (
        Valid("from celery import shared_task\n"),
        Valid("# -*- coding: latin-1 -*-\nimport celery\nname = 'caf\xe9'\n"),
        Valid("import redis\nr = redis.Redis()\n"),
        Valid("def f(:\n    pass\n"),  # no Celery/Redis content: not parsed, left to other tools
        Valid(""),
    )
    INVALID = (
        Invalid("from celery import shared_task\ndef f(:\n    pass\n", fixed=None),
        Invalid("import redis\nx = (\n", fixed=None),
        Invalid("import celery\nclass:\n", fixed=None),
        Invalid("from celery import Celery\napp = Celery(\n    'x'\n    broker='redis://'\n)\n", fixed=None),
        Invalid("import celery\nif True:\n  x = 1\n    y = 2\n", fixed=None),
        # CPython's line and message, not the parser's list of expected tokens
        Invalid("import celery\nx = 1\nif x\n    y = 2\nz = 3\n", fixed=None, at="3:5", message="syntax error: expected ':'"),
        Invalid("import celery\nx = (1,\ny = 2\n", fixed=None, at="2:5", message="'(' was never closed"),
    )
