"""The server reuses the project rules' findings while no fact changed
(engine.Project.memo), and only then: checked on the engine the server
drives, counting the project phase's runs."""

from __future__ import annotations

from pathlib import Path

import celerylint.run.project as project_phase
from celerylint.server.engine import Session
from celerylint.server.settings import Overrides

APP = 'from celery import Celery\n\napp = Celery("proj")\napp.config_from_object("proj.settings")\n'
SETTINGS = 'broker_url = "redis://localhost:6379/0"\n'


def test_the_project_phase_runs_again_only_when_a_fact_changed(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.celerylint]\n")
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj/__init__.py").write_text("")
    tasks, settings = tmp_path / "proj/tasks.py", tmp_path / "proj/settings.py"
    tasks.write_text(APP)
    settings.write_text(SETTINGS)
    runs = []
    real = project_phase.run_project
    monkeypatch.setattr(project_phase, "run_project", lambda *a, **k: runs.append(1) or real(*a, **k))
    session = Session([tmp_path], Overrides(), log=lambda *a, **k: None)

    def codes(path: Path, text: str) -> list[str]:
        return [f.code for f in session.analyse(path, text)[path]]

    assert "CL101" in codes(tasks, APP)
    assert len(runs) == 1
    assert "CL101" in codes(tasks, APP + "# a comment typed\n")  # no fact moved: the last findings
    assert len(runs) == 1
    # a noqa comment typed changes no fact, and silences the finding at once
    silenced = APP.replace('("proj.settings")', '("proj.settings")  # noqa: CL101')
    assert "CL101" not in codes(tasks, silenced)
    assert len(runs) == 1
    # a setting typed in the settings buffer is a new fact: the rules run again
    assert "CL101" not in codes(settings, SETTINGS + "task_acks_late = True\n")
    assert len(runs) == 2
    assert "CL102" in codes(tasks, APP)
    assert len(runs) == 2
