"""The chapters validate on a machine without a CJK font (a non-root user, macOS, a conda install).

Matplotlib reads its font list from a cache in MPLCONFIGDIR; a copy of that cache with every font that has
Chinese glyphs removed makes matplotlib see the machine as one without them, whatever is installed here.
Under it the chapters' validated cells must print exactly what they print with the font (nothing
machine-dependent such as the font's name or a fallback warning), so nbval passes over every chapter.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

WITHOUT_CJK = """
import json, sys
from pathlib import Path
import matplotlib
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

def has_chinese(path):
    try:
        return FT2Font(path).get_char_index(ord("中")) != 0
    except Exception:
        return False

cache = Path(matplotlib.get_cachedir()) / f"fontlist-v{font_manager.FontManager.__version__}.json"
data = json.loads(cache.read_text())
before = len(data["ttflist"])
data["ttflist"] = [f for f in data["ttflist"] if not has_chinese(f["fname"])]
cache.write_text(json.dumps(data))
print(before - len(data["ttflist"]))
"""


@pytest.fixture(scope="module")
def no_cjk_env(tmp_path_factory):
    """Environment variables under which matplotlib finds no CJK font."""
    config = tmp_path_factory.mktemp("mplconfig-no-cjk")
    env = dict(os.environ, MPLCONFIGDIR=str(config), HETLAB_PROGRESS=str(config / "progress.json"))
    env.pop("MPLBACKEND", None)  # the kernels use the inline backend, as in JupyterLab
    subprocess.run([sys.executable, "-c", WITHOUT_CJK], env=env, check=True, capture_output=True, text=True)
    return env


def test_the_simulated_machine_really_has_no_cjk_font(no_cjk_env):
    """Otherwise the nbval run below would prove nothing."""
    probe = ("import warnings, json; warnings.simplefilter('ignore'); from hetlab import plotting; "
             "print(json.dumps([plotting.use_cjk_font(), plotting.label('中文', 'English')]))")
    out = subprocess.run([sys.executable, "-c", probe], env=no_cjk_env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [None, "English"]


def test_every_chapter_validates_without_a_cjk_font(no_cjk_env):
    chapters = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chapters").glob("*.ipynb"))
    assert chapters
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", *chapters,
                          "--nbval-sanitize-with", "chapters/sanitize.cfg", "--nbval-cell-timeout", "60"],
                         cwd=ROOT, env=no_cjk_env, capture_output=True, text=True)
    tail = "\n".join(run.stdout.splitlines()[-40:])
    assert run.returncode == 0, f"nbval without a CJK font failed:\n{tail}\n{run.stderr[-2000:]}"
    assert " passed" in tail and "failed" not in tail, tail
