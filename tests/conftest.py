from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_REFERENCE = REPO.parent / "shared" / "reference"


@pytest.fixture
def cli(tmp_path):
    """Run the real ``celerylint`` command in a directory; returns CompletedProcess."""

    def call(*args: str, cwd: Path | None = None, env: dict | None = None, input: str | None = None):
        return subprocess.run(
            [sys.executable, "-m", "celerylint", *args],
            cwd=cwd or tmp_path, capture_output=True, text=True, timeout=300,
            env={**os.environ, "NO_COLOR": "1", **(env or {})}, input=input,
        )

    return call
