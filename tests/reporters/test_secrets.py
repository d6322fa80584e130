"""The one URL-password masking (``celerylint.reporters.secrets``): the
whole password up to the authority's last ``@``, found by the URL's
structure, in linear time; and the real CLI's formats and ``--show-apps``,
which use it."""

from __future__ import annotations

import json
import time

import pytest

from celerylint.doctor.connect import mask as doctor_mask
from celerylint.reporters.full import shown
from celerylint.reporters.secrets import masked, password_spans
from celerylint.cli.show_apps import mask as show_apps_mask
from conftest import show_apps, write_project

AT_PASSWORD = "redis://:s3cr@tpassw0rd@redis.internal:6379/0"


@pytest.mark.parametrize("text, expected", [
    (AT_PASSWORD, "redis://:****@redis.internal:6379/0"),
    ("redis://:pa;ss@h:6379/0", "redis://:****@h:6379/0"),
    ("redis://user:p@ss:w@rd@h/1", "redis://user:****@h/1"),
    ("redis://:pw@h:6379/0", "redis://:****@h:6379/0"),
    ("redis://user:p%40ss@h/1", "redis://user:****@h/1"),
    ("rediss://h:6380/0", "rediss://h:6380/0"),
    ("redis://user@h/0", "redis://user@h/0"),
    ("redis://user:@h/0", "redis://user:@h/0"),
    ("sentinel://:a@h1:26379;sentinel://:b@h2:26379", "sentinel://:****@h1:26379;sentinel://:****@h2:26379"),
    ("sentinel://:a@h1:26379;sentinel://:b@h2:26379/0", "sentinel://:****@h1:26379;sentinel://:****@h2:26379/0"),
    ("redis://h1;redis://:p@h2", "redis://h1;redis://:****@h2"),
    ("amqp://guest:guest@localhost//", "amqp://guest:****@localhost//"),
    ('broker_url = "amqp://svc:Wm5tR8yNq@mq.example.com:5672//"  # ops@example.com',
     'broker_url = "amqp://svc:****@mq.example.com:5672//"  # ops@example.com'),
    ("redis://:pw@h?password=x#frag@x", "redis://:****@h?password=x#frag@x"),
    ("WRONGPASS invalid username-password pair or user is disabled.",
     "WRONGPASS invalid username-password pair or user is disabled."),
    ("no url: user:pw@host", "no url: user:pw@host"),
    ("://:pw@h", "://:pw@h"),  # no scheme
    ("1://:pw@h", "1://:pw@h"),  # a scheme starts with a letter
])
def test_masked(text, expected):
    assert masked(text) == expected
    assert doctor_mask(text) == expected
    assert show_apps_mask(text) == expected.replace("****", "***")


def test_spans_and_the_full_reporters_line():
    text = f'x = "{AT_PASSWORD}"'
    (start, end), = password_spans(text)
    assert text[start:end] == "s3cr@tpassw0rd"
    line, cols = shown(text)
    assert line == 'x = "redis://:****@redis.internal:6379/0"'
    assert len(cols) == len(text) + 1


ADVERSARIAL = {
    "word characters": "k" * 100_000,
    "schemes": "a://" * 25_000,
    "scheme runs": ("k" * 99 + ":") * 1_000,
    "colons": "redis://" + ":" * 100_000,
    "ats": "redis://:" + "@" * 100_000,
    "userinfo": "redis://a:b@" * 8_000,
    "semicolons": "redis://:p;" * 10_000,
    "no end": "redis://" + "a:b" * 33_000,
    "unclosed lists": ("sentinel://:a@h" + "k" * 50 + ";") * 1_500,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
@pytest.mark.parametrize("function", [masked, password_spans, doctor_mask, show_apps_mask, shown],
                         ids=["masked", "password_spans", "doctor", "show_apps", "full"])
def test_linear_time_on_100_kb_adversarial_text(name, function):
    text = ADVERSARIAL[name]
    assert len(text) >= 90_000
    started = time.perf_counter()
    function(text)
    assert time.perf_counter() - started < 1.0


def write(root, name, text):
    (root / name).write_text(text)


@pytest.mark.parametrize("fmt", ["full", "sarif"])
def test_long_runs_of_word_characters_in_quoted_source_take_no_time(cli, tmp_path, fmt):
    """A lock key of 40,000 ``k``s on two lines of a valid 80 KB file, in
    the snippets of ``full`` and ``sarif``: as fast as ``concise``."""
    key = "k" * 40_000
    write(tmp_path, "m.py", "from t import job\n" + "".join(
        f'job.apply_async(countdown=86400, kwargs={{"lock": "{key}"}})\n' for _ in range(2)))
    assert (tmp_path / "m.py").stat().st_size > 80_000
    started = time.monotonic()
    concise = cli("--output-format", "concise", "--no-cache", "m.py")
    baseline = time.monotonic() - started
    started = time.monotonic()
    done = cli("--output-format", fmt, "--no-cache", "m.py")
    seconds = time.monotonic() - started
    assert concise.returncode == done.returncode == 1, done.stderr
    assert key in done.stdout.replace("\\n", "")
    assert seconds < baseline + 1.0, (seconds, baseline)


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_a_password_with_an_at_sign_is_masked_whole_in_reports(cli, tmp_path, fmt):
    write(tmp_path, "celeryconfig.py", f'broker_url = "{AT_PASSWORD}"\n')
    write(tmp_path, "proj.py", 'from celery import Celery\napp = Celery("p")\napp.config_from_object("celeryconfig")\n')
    done = cli("--select", "CL115", "--output-format", fmt, "--no-cache", ".")
    assert done.returncode == 1, done.stderr
    assert "tpassw0rd" not in done.stdout + done.stderr
    if fmt in ("full", "sarif"):  # the quoted source line
        assert "redis://:****@redis.internal:6379/0" in done.stdout


def test_a_password_with_an_at_sign_is_masked_whole_by_show_apps(cli, tmp_path):
    write_project(tmp_path, f'''
        from celery import Celery
        app = Celery("proj")
        app.conf.broker_url = "{AT_PASSWORD}"
    ''')
    (app,) = show_apps(cli, tmp_path)
    assert app["settings"]["broker_url"]["value"] == "redis://:***@redis.internal:6379/0"
    text = cli("--show-apps", ".", cwd=tmp_path)
    assert text.returncode == 0 and "tpassw0rd" not in text.stdout
    assert "tpassw0rd" not in json.dumps(app)
