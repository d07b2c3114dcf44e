"""`make lab` is the learners' JupyterLab: the instructor tools in the same venv (nbgrader's menu, Validate button
and side tab, needed by `make test`) are switched off by the config folder binder/learner, and the interface
is Chinese without the Jupyter news prompt (binder/overrides.json, shared with Binder)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JUPYTER = Path(sys.executable).parent / "jupyter"


def test_make_lab_starts_jupyterlab_with_the_learner_config():
    recipe = re.search(r"^lab:.*?\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M).group(1)
    assert 'JUPYTER_CONFIG_DIR="$(CURDIR)/$(VENV)/learner-config"' in recipe and "jupyter lab" in recipe
    assert "JUPYTERLAB_SETTINGS_DIR" in recipe, "Lab must not write the learner's settings into the repository"
    stamp = re.search(r"^\$\(STAMP\):.*?\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert "cp -r binder/learner $(VENV)/learner-config" in stamp.group(1), "a copy: Jupyter writes into it"


def test_interface_is_chinese_and_quiet():
    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/translation-extension:plugin"]["locale"] == "zh_CN"
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


@pytest.mark.skipif(not JUPYTER.exists(), reason="jupyter is not installed in this environment")
def test_nbgrader_is_off_in_the_learners_lab(tmp_path):
    config = tmp_path / "learner-config"             # as make lab does: a copy (Jupyter writes a marker into it)
    shutil.copytree(ROOT / "binder" / "learner", config)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config))
    labext = subprocess.run([str(JUPYTER), "labextension", "list"], capture_output=True, text=True, env=env,
                            timeout=300)
    listed = re.sub(r"\x1b\[[0-9;]*m", "", labext.stdout + labext.stderr)
    if "@jupyter/nbgrader" in listed:          # only where nbgrader is installed (the test or instructor extra)
        assert re.search(r"@jupyter/nbgrader\S* v\S+ disabled", listed), listed
    server = subprocess.run([str(JUPYTER), "server", "extension", "list"], capture_output=True, text=True, env=env,
                            timeout=300)
    out = re.sub(r"\x1b\[[0-9;]*m", "", server.stdout + server.stderr)
    first = out.split("Config dir:")[1] if "Config dir:" in out else ""    # the learner folder, highest priority
    assert str(config) in first
    for extension in ("formgrader", "validate_assignment", "assignment_list", "course_list"):
        assert f"nbgrader.server_extensions.{extension} disabled" in first, first
