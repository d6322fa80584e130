"""Bad configuration: exit status 2 and a message naming the file, the key
and the reason; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from celerylint.config.settings import ConfigError
from celerylint.config.extend import load_settings
from celerylint.registry import known_codes

# (file name, content, fragments the error must contain)
BAD = [
    ("pyproject.toml", b"[tool.celerylint\nselect = 1\n", ["pyproject.toml", "invalid TOML", "line 1"]),
    ("pyproject.toml", b"tool = 3\n", ["pyproject.toml", "tool: expected a table"]),
    ("pyproject.toml", b'tool = "celerylint"\n', ["pyproject.toml", "tool: expected a table"]),
    ("pyproject.toml", b"[tool]\ncelerylint = 5\n", ["pyproject.toml", "[tool.celerylint] must be a table"]),
    ("pyproject.toml", b'[tool.celerylint]\nselect = "CL203"\n', ["pyproject.toml", "select", "expected a list"]),
    ("pyproject.toml", b'[tool.celerylint]\nselect = ["CL999"]\n', ["select", "unknown rule code or prefix 'CL999'"]),
    ("pyproject.toml", b'[tool.celerylint]\nignore = ["CL2", 7]\n', ["ignore", "expected a list"]),
    ("pyproject.toml", b"[tool.celerylint]\nbogus = 1\n", ["pyproject.toml", "unknown key 'bogus'"]),
    ("pyproject.toml", b"[tool.celerylint]\nlock-ttl = 1.5\n", ["lock-ttl", "integer"]),
    ("pyproject.toml", b"[tool.celerylint]\nlock-ttl = true\n", ["lock-ttl", "integer"]),
    ("pyproject.toml", b"[tool.celerylint]\nlock-ttl = -5\n", ["lock-ttl", "positive"]),
    ("pyproject.toml", b"[tool.celerylint]\ncountdown-threshold = nan\n", ["countdown-threshold", "positive"]),
    ("pyproject.toml", b"[tool.celerylint]\ncountdown-threshold = inf\n", ["countdown-threshold", "positive"]),
    ("pyproject.toml", b'[tool.celerylint]\ncountdown-threshold = "1h"\n', ["countdown-threshold", "number"]),
    ("pyproject.toml", b'[tool.celerylint]\nper-file-ignores = ["x"]\n', ["per-file-ignores", "table"]),
    ("pyproject.toml", b'[tool.celerylint]\nper-file-ignores = {"x" = "CL2"}\n', ["per-file-ignores.'x'", "list"]),
    ("pyproject.toml", b'[tool.celerylint]\nper-file-ignores = {"x" = ["CL77"]}\n', ["per-file-ignores.'x'", "CL77"]),
    ("pyproject.toml", b'[tool.celerylint]\nexclude = "x"\n', ["exclude", "list of strings"]),
    ("pyproject.toml", b"[tool.celerylint]\nforce-exclude = 1\n", ["force-exclude", "true or false"]),
    ("pyproject.toml", b'[tool.celerylint]\nx = "\xff"\n', ["pyproject.toml", "not UTF-8"]),
    ("celerylint.toml", b'select = ["CL2"]\nselect = ["CL2"]\n', ["celerylint.toml", "invalid TOML"]),
    ("celerylint.toml", b'[tool.celerylint]\nselect = ["CL2"]\n', ["celerylint.toml", "unknown key 'tool'"]),
    ("celerylint.toml", b"\x00\x01", ["celerylint.toml", "invalid TOML"]),
]


@pytest.mark.parametrize(("name", "content", "fragments"), BAD, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD)])
def test_bad_config_file(tmp_path, name, content, fragments):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_settings(None, tmp_path, known_codes())
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize("explicit", [False, True])
def test_bad_config_through_the_cli(cli, tmp_path, explicit):
    (tmp_path / "a.py").write_text("import celery\n")
    (tmp_path / "pyproject.toml").write_text('[tool.celerylint]\nselect = ["CL2"]\nlock-tll = 30\n')
    args = ["--config", "pyproject.toml"] if explicit else []
    proc = cli(*args, "a.py")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"celerylint: error: {'' if explicit else str(tmp_path) + '/'}pyproject.toml:3: unknown key 'lock-tll' (did you mean 'lock-ttl'?)"


def test_missing_or_unreadable_config(cli, tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("import celery\n")
    (tmp_path / "conf").mkdir()
    for target, reason in (("missing.toml", "no such file"), ("conf", "not a file")):
        proc = cli("--config", target, "a.py")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.strip() == f"celerylint: error: {target}: {reason}"
    # Root reads any file: simulate EACCES for the read itself.
    config = tmp_path / "celerylint.toml"
    config.write_text('select = ["CL2"]\n')
    real_open = open

    def deny(path, *args, **kwargs):
        if Path(path) == config:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    with pytest.raises(ConfigError, match=r"celerylint.toml: cannot read: Permission denied"):
        load_settings(config, tmp_path, known_codes())


@pytest.mark.parametrize(("option", "value"), [("--select", "CL9"), ("--ignore", "XY1"), ("--select", "CL203,nope")])
def test_bad_codes_on_the_command_line(cli, tmp_path, option, value):
    (tmp_path / "a.py").write_text("import celery\n")
    proc = cli(option, value, "a.py")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"celerylint: error: {option}: unknown rule code or prefix")
