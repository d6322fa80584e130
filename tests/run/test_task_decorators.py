"""The project's own task decorators (facts/task_decorators.py): a function
decorated with one, in another module and imported through its package, is
a task with the options of the call and of the decorator; every way of
running celerylint on the file sees it; a cached result (or stat index
entry) is dropped when the decorator changes; and an option the decorator
sets is reported at the decorator, without a fix."""

from __future__ import annotations

from test_client_index import cl2, write
from test_prefilter_cache import age, lint

DECORATOR = """
from celery import Task, shared_task
class RetryQueueTask(Task):
    pass
def retry_task(*args, **kwargs):
    return shared_task(*args, base=RetryQueueTask, **kwargs)
"""
TASKS = """
import requests
from proj.deco import retry_task
@retry_task(autoretry_for=(Exception,), retry_backoff=True)
def notify(user_id):
    requests.post("https://mail", json={"to": user_id})
    requests.post("https://sms", json={"to": user_id})
@retry_task
def plain(user_id):
    requests.post("https://mail", json={"to": user_id})
"""
FOUND = [("CL207", "proj/tasks.py", 4)]


def project(root, decorator: str = DECORATOR) -> None:
    write(root, {"proj/__init__.py": "", "proj/deco/__init__.py": "from .retry import retry_task  # noqa\n",
                 "proj/deco/retry.py": decorator, "proj/tasks.py": TASKS})


def test_a_task_of_a_project_decorator_is_judged_however_celerylint_is_run(tmp_path, cli):
    project(tmp_path)
    (tmp_path / ".git").mkdir()
    assert cl2(lint(tmp_path, "--no-cache")[1]) == FOUND
    for args, cwd in ((["proj/tasks.py"], tmp_path), (["."], tmp_path / "proj"), (["tasks.py"], tmp_path / "proj")):
        out = cli("--no-cache", "--output-format", "concise", *args, cwd=cwd).stdout
        assert "CL207" in out and "task `notify`" in out, (args, out)
    text = (tmp_path / "proj/tasks.py").read_text()
    out = cli("--no-cache", "--output-format", "concise", "-", "--stdin-filename", "proj/tasks.py", input=text).stdout
    assert "CL207" in out


def test_a_decorator_that_does_more_than_hand_on_makes_no_task(tmp_path):
    project(tmp_path, DECORATOR.replace("    return shared_task(", "    log(kwargs)\n    return shared_task("))
    assert cl2(lint(tmp_path, "--no-cache")[1]) == []


def test_the_cached_result_of_a_task_is_dropped_when_its_decorator_changes(tmp_path):
    root, cache = tmp_path / "p", tmp_path / "cache"
    project(root)
    write(root, {f"proj/filler_{i}.py": f"X = {i}\n" for i in range(70)})  # enough files for the stat index
    assert cl2(lint(root, cache_dir=cache)[1]) == FOUND
    age(root)  # the stat index now trusts every file
    assert cl2(lint(root, cache_dir=cache)[1]) == FOUND
    write(root, {"proj/deco/retry.py": DECORATOR.replace("base=RetryQueueTask, ", "base=RetryQueueTask, max_retries=0, ")})
    assert cl2(lint(root, cache_dir=cache)[1]) == []  # tasks.py unchanged: it never retries now
    write(root, {"proj/deco/retry.py": DECORATOR})
    assert cl2(lint(root, cache_dir=cache)[1]) == FOUND


def test_an_option_the_decorator_sets_is_reported_at_the_decorator_without_a_fix(tmp_path, cli):
    forced = DECORATOR.replace("**kwargs)\n", "autoretry_for=(Exception,), **kwargs)\n")
    project(tmp_path, forced)
    # the file names the option elsewhere (the rule's prefilter reads only the file)
    write(tmp_path, {"proj/tasks.py": TASKS.replace("@retry_task(autoretry_for=(Exception,), retry_backoff=True)",
                                                    "@retry_task(retry_backoff=True)")
                     + "RETRY = dict(autoretry_for=(KeyError,))\n"})
    found = lint(tmp_path, "--no-cache")[1]
    assert [(f["code"], f["line"], f["column"], f["fix"]) for f in found if f["code"] == "CL207"] == [("CL207", 4, 1, None)]
