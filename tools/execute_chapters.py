"""Re-run every chapter top to bottom and store its outputs (what nbval then checks).

Usage: ``make chapters`` or ``python tools/execute_chapters.py [chapters/NN-name.ipynb ...]``.
Quiz progress goes to a throw-away file so a maintainer's own answers never leak into outputs.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ExecutePreprocessor

ROOT = Path(__file__).resolve().parents[1]


def main(paths: list[str]) -> int:
    os.environ["HETLAB_PROGRESS"] = os.path.join(tempfile.mkdtemp(prefix="hetlab-build-"), "progress.json")
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    targets = [Path(p) for p in paths] or sorted((ROOT / "chapters").glob("*.ipynb"))
    for path in targets:
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        ExecutePreprocessor(timeout=60, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(path.parent)}})
        nbformat.write(nb, path)
        print(f"{path.name}: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
