"""The same input gives byte-identical JSON and SARIF, whatever the hash seed,
the number of worker processes (``--jobs``) or the state of the result cache.

``--jobs`` may be accepted before it changes anything; the test compares
outputs, so it keeps its meaning once a worker pool exists."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/tasks.py": (
        "import redis as rds\nfrom celery import shared_task\nr = rds.Redis()\n"
        "@shared_task\ndef a(k):\n    if r.set('lock:' + k, 1, nx=True):\n        r.delete('lock:' + k)\n"
        "    a.apply_async((k,), countdown=86400 * 30)\n"
        "@shared_task\ndef b(k):\n    with r.lock('b-' + k):\n        pass\n    r.setnx('mutex', 1)\n"
    ),
    "pkg/broken.py": "from celery import shared_task\ndef f(:\n",
    "pkg/sub/ünïcode_名前.py": "import redis\nr = redis.Redis()\nname = '𝄞'; r.set('lock', 1, nx=True)\n",
    "pkg/sub/latin.py": "# coding: latin-1\nimport celery\n",
    "zzz/other.py": "from django.core.cache import cache\nif cache.add('lock-x', 1, None):\n    cache.delete('lock-x')\n",
    "aaa/plain.py": "print('no celery here')\n",
}
# (extra CLI arguments, environment); the first is the reference
VARIANTS = [
    (["--no-cache", "--jobs", "1"], {"PYTHONHASHSEED": "0"}),
    (["--no-cache", "--jobs", "2"], {"PYTHONHASHSEED": "random"}),
    ([], {"PYTHONHASHSEED": "4294967295"}),  # fills the cache, if there is one
    (["--jobs", "3"], {"PYTHONHASHSEED": "7"}),  # reads it
]


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_output_is_byte_identical(cli, tmp_path, fmt):
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="latin-1" if "latin" in rel else "utf-8")
    outputs = []
    for args, env in VARIANTS:
        proc = cli("--format", fmt, *args, ".", env=env)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        outputs.append(proc.stdout.encode())
    reference = outputs[0]
    assert b"CL203" in reference and b"CL001" in reference and b"CL206" in reference
    for (args, env), output in zip(VARIANTS, outputs):
        assert output == reference, f"output differs with {args} {env}"
