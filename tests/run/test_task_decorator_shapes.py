"""Which functions facts/task_decorators.py takes for the project's own task
decorators, and the options it reads from each (the index and the task
rules trust these exactly: a shape read wrongly would make a task of
anything, with options celerylint guessed)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from celerylint.api.syntax import SyntaxFile
from celerylint.facts.task_decorators import TaskDecorators

HEAD = "from typing import cast\nfrom celery import Celery, Task, shared_task\nfrom proj.celery import app as project_app\n"


def decorators(body: str) -> dict[str, dict]:
    text = HEAD + textwrap.dedent(body)
    tree = ast.parse(text)
    file = SyntaxFile("proj/deco.py", text, "proj.deco", None)
    file.record_imports(tree)
    TaskDecorators(file).collect(tree)
    return {f["name"].rpartition(".")[2]: {k: f[k] for k in ("bare", "forced", "defaults")} for f in file.facts}


RETRY = {"ref": "proj.deco.RetryTask"}


@pytest.mark.parametrize("body, expected", [
    ("class RetryTask(Task): pass\ndef retry_task(*args, **kwargs):\n    return shared_task(*args, base=RetryTask, **kwargs)\n",
     {"bare": True, "forced": {"base": RETRY}, "defaults": {}}),
    ("class RetryTask(Task): pass\ndef retry_task(*args, **kwargs):\n    return shared_task(base=RetryTask, *args, **kwargs)\n",
     {"bare": True, "forced": {"base": RETRY}, "defaults": {}}),
    ('def job_task(*args, **kwargs):\n    """Docs."""\n    kwargs.setdefault("bind", True)\n    kwargs["queue"] = "jobs"\n'
     '    print(f"making {args}")\n    return cast(Task, shared_task(*args, **kwargs))\n',
     {"bare": True, "forced": {"queue": {"const": "jobs"}}, "defaults": {"bind": {"const": True}}}),
    ("def job_task(**kwargs):\n    kwargs.setdefault('max_retries', 3)\n    def decorator(func):\n"
     "        return shared_task(**kwargs)(func)\n    return decorator\n",
     {"bare": False, "forced": {}, "defaults": {"max_retries": {"const": 3}}}),
    ("app = Celery('proj')\ndef app_task(*args, **kwargs):\n"
     "    return app.task(*args, **kwargs, autoretry_for=(TimeoutError, KeyError), retry_kwargs={'max_retries': 5})\n",
     {"bare": True, "forced": {"autoretry_for": {"tuple": [{"builtin": "TimeoutError"}, {"builtin": "KeyError"}]},
                               "retry_kwargs": {"dict": [["max_retries", {"const": 5}]]}}, "defaults": {}}),
    ("def project_task(*args, **kwargs):\n    return project_app.task(*args, serializer=settings.SERIALIZER, **kwargs)\n",
     {"bare": True, "forced": {"serializer": None}, "defaults": {}}),  # a value it cannot read: unknown, not absent
    ("def kw_task(**kwargs):\n    return shared_task(**kwargs)\n", {"bare": False, "forced": {}, "defaults": {}}),
    ("class RetryTask(Task): pass\ndef sig_task(*args, base=RetryTask, bind=True, **kwargs):\n"
     "    return shared_task(*args, base=base, bind=bind, queue='q', **kwargs)\n",
     {"bare": True, "forced": {"queue": {"const": "q"}}, "defaults": {"base": RETRY, "bind": {"const": True}}}),
    ("def json_task(*args, **kwargs):\n    kwargs['serializer'] = kwargs.pop('serializer', 'json')\n"
     "    return shared_task(*args, **kwargs)\n",
     {"bare": True, "forced": {}, "defaults": {"serializer": {"const": "json"}}}),
])
def test_decorators_read(body, expected):
    name = [line for line in body.splitlines() if line.startswith("def ")][0][4:].partition("(")[0]
    assert decorators(body) == {name: expected}
    from celerylint.api.needles import matches

    assert matches(TaskDecorators.REQUIRES, body.encode())  # the prefilter lets the file through


@pytest.mark.parametrize("body", [
    "def cond_task(*args, **kwargs):\n    if HAS_CELERY:\n        return shared_task(*args, **kwargs)\n    return noop\n",
    "def pop_task(*args, **kwargs):\n    kwargs.pop('wait', None)\n    return shared_task(*args, **kwargs)\n",
    "def log_task(*args, **kwargs):\n    log(kwargs)\n    return shared_task(*args, **kwargs)\n",
    "def job(*args, **kwargs):\n    return shared_task(*args, **kwargs)\n",  # the name does not say task
    "def fn_task(fn, **kwargs):\n    return shared_task(**kwargs)(fn)\n",  # a parameter of its own
    "def drop_task(*args, **kwargs):\n    return shared_task(**kwargs)\n".replace("**kwargs)\n", "queue='q')\n"),
    "def other_task(*args, **kwargs):\n    return other.task(*args, **kwargs)\n",  # not an app it knows
    "def twice_task(*args, **kwargs):\n    return shared_task(*args, *args, **kwargs)\n",
    "@cache\ndef deco_task(*args, **kwargs):\n    return shared_task(*args, **kwargs)\n",
    "def used_task(*args, bind=True, **kwargs):\n    log(bind)\n    return shared_task(*args, bind=bind, **kwargs)\n",
    "def renamed_task(*args, bind=True, **kwargs):\n    return shared_task(*args, base=bind, **kwargs)\n",
    "def required_task(*args, queue, **kwargs):\n    return shared_task(*args, queue=queue, **kwargs)\n",
])
def test_other_shapes_are_no_decorators(body):
    assert decorators(body) == {}
