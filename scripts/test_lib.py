"""Run the library's tests (no notebooks, no browser, no website) in a fresh venv of the running interpreter.

Usage: ``make test-lib PYTHON=/path/to/python3.X`` runs ``/path/to/python3.X scripts/test_lib.py``.
The venv is build/venv-lib-pyX.Y. Packages come from constraints.txt where its pins exist for this Python
(numpy 2.4 needs Python >= 3.11); otherwise the newest versions pip finds for it, and the run says so.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Test modules that need notebooks, a browser, the website or an environment build: not library tests.
NOT_LIBRARY = ["tests/browser", "tests/test_notebooks.py", "tests/test_chapter_standard.py",
               "tests/book/test_nbgrader.py",
               "tests/test_site.py", "tests/test_binder.py", "tests/test_any_machine.py",
               "tests/test_learner_lab.py"]   # the learners' JupyterLab: make test runs it where Lab is installed


def main() -> int:
    version = "py{}.{}".format(*sys.version_info[:2])
    venv = ROOT / "build" / f"venv-lib-{version}"
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    target = [".[test-lib]"]
    pinned = subprocess.run(pip + ["-c", "constraints.txt"] + target, cwd=ROOT)
    if pinned.returncode != 0:
        print(f"test-lib: constraints.txt's pins do not all install on Python {sys.version.split()[0]}; "
              "installing the newest compatible versions instead", flush=True)
        subprocess.run(pip + target, cwd=ROOT, check=True)
    subprocess.run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"], cwd=ROOT,
                   stdout=open(venv / "installed.txt", "w"), check=True)
    ignores = [f"--ignore={p}" for p in NOT_LIBRARY]
    print(f"test-lib: Python {sys.version.split()[0]} in {venv}", flush=True)
    args = ["-q", "-p", "no:cacheprovider", "--doctest-modules", "hetlab", "tests", *ignores, "-m",
            "not browser and not slow"]
    return subprocess.run([python, "-m", "pytest", *args], cwd=ROOT).returncode


if __name__ == "__main__":
    raise SystemExit(main())
