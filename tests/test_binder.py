"""Binder really builds: the binder/ files alone give an environment in which every chapter validates.

repo2docker is not available here; its closest offline equivalent is a fresh venv of the same Python,
``pip install -r binder/requirements.txt`` and ``binder/postBuild`` run from the repository root. Then every
chapter runs under nbval in it (pytest and nbval are added for that, as test tooling only).
The environment test takes minutes: `make test-binder` runs it (and .ci/run runs that).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import pins  # noqa: E402


def test_binder_requirements_are_generated_from_constraints():
    assert (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8") == pins.render(), "run `make pins`"


def test_every_binder_pin_is_a_constraints_pin_and_the_language_pack_is_there():
    binder = [line for line in (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    assert set(binder) <= set(pins.constraints().values())
    names = {pins.canonical(line.split("==")[0]) for line in binder}
    assert {"jupyterlab", "jupyterlab-language-pack-zh-cn", "ipywidgets", "matplotlib", "numpy"} <= names
    overrides = json.loads((ROOT / "binder" / "overrides.json").read_text(encoding="utf-8"))
    assert overrides["@jupyterlab/translation-extension:plugin"] == {"locale": "zh_CN"}
    # No "Jupyter news" prompt and no update check: both would ask another host (issue 18 item 9).
    assert overrides["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}


@pytest.mark.binder
@pytest.mark.slow
def test_binder_environment_runs_every_chapter(tmp_path):
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert runtime == "python-{}.{}".format(*sys.version_info[:2]), f"binder/runtime.txt says {runtime}"
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "MPL", "JUPYTER"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), HOME=str(home),
               HETLAB_PROGRESS=str(tmp_path / "progress.json"))
    pip = ["python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["-r", "binder/requirements.txt"], cwd=ROOT, env=env, check=True)
    subprocess.run(["bash", "binder/postBuild"], cwd=ROOT, env=env, check=True)

    python = str(venv / "bin" / "python")
    probe = ("import sys, json, hetlab, jupyterlab_language_pack_zh_CN; from pathlib import Path; "
             "print(json.dumps([hetlab.__file__, json.loads((Path(sys.prefix) / 'share/jupyter/lab/settings/"
             "overrides.json').read_text())['@jupyterlab/translation-extension:plugin']['locale']]))")
    where, locale = json.loads(subprocess.run([python, "-c", probe], cwd=tmp_path, env=env, check=True,
                                              capture_output=True, text=True).stdout)
    assert Path(where).resolve().is_relative_to(ROOT / "hetlab") and locale == "zh_CN"

    tooling = [line for line in pins.constraints().values() if line.split("==")[0] in ("pytest", "nbval")]
    subprocess.run(pip + tooling, cwd=ROOT, env=env, check=True)
    chapters = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chapters").glob("*.ipynb"))
    run = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", *chapters,
                          "--nbval-sanitize-with", "chapters/sanitize.cfg", "--nbval-cell-timeout", "60"],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    tail = "\n".join(run.stdout.splitlines()[-30:])
    assert run.returncode == 0, f"nbval in the Binder environment failed:\n{tail}\n{run.stderr[-2000:]}"
