"""Benchmark: the grader's own memory and time on hostile submissions (issue 19, item 4).

The adversarial review of 2026-12-04 measured, with ``/usr/bin/time``: a 300 MB print took the grader to
1,046 MB; a 2·10⁷-element array in an asked-for name to 3,990 MB over 90 s; a solution cell whose source
is a list of 10⁶ strings to 1,738 MB; 5,000 trivial cells to 45 s with no total limit.

Each case here runs ``python -m hetlab grade`` on a small chapter-4 course (two exercises) and samples
the grader process's own peak resident memory (``VmHWM`` in ``/proc/<pid>/status``, so the kernel's and
the checker's memory are not counted), printed next to the same figure for a junk submission measured in
the same run: the ratio is what the hostile input costs the grader.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

CASES = {
    "junk answers (baseline)": "n_star = 1.0",
    "300 MB printed, 1 MB per write": "import sys\nfor _ in range(300):\n    sys.stdout.write('x' * 2**20 + '\\n')\n"
                                      "n_star = 1.0",
    "300 MB in one raw write": "import sys\ntype(sys.stdout).write(sys.stdout, 'x' * 300 * 2**20)\n"
                               "sys.stdout.flush()\nn_star = 1.0",
    "2e7-element array asked for": "import numpy as np\nn_star = np.arange(2 * 10**7, dtype=float)",
}


def _course(root: Path) -> Path:
    from hetlab.book.edition import make_student_edition

    def graded(source, gid, solution, points=0):
        meta = {"grade": not solution, "grade_id": gid, "locked": not solution, "schema_version": 3,
                "solution": solution, "task": False, **({} if solution else {"points": points})}
        return new_code_cell(source, metadata={"nbgrader": meta})

    (root / "src").mkdir()
    cells = [new_code_cell("import hetlab"),
             graded("### BEGIN SOLUTION\nn_star = hetlab.optimal_tasks(2500, 4)\n### END SOLUTION", "exa-solution",
                    True),
             graded("### BEGIN HIDDEN TESTS\nassert abs(n_star - 25) < 1e-9\n### END HIDDEN TESTS", "exa-tests",
                    False, 1)]
    nbformat.write(new_notebook(cells=cells), root / "src" / "04-bench.ipynb")
    make_student_edition(root / "out", [4], source=root / "src", key=root / "key.json")
    return root / "out" / "04-bench.ipynb"


def _submission(student: Path, root: Path, name: str, solution: str | None, source_lines: int = 0,
                extra_cells: int = 0) -> Path:
    nb = nbformat.read(student, as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "exa-solution":
            cell.source = solution if solution is not None else "n_star = 1.0"
    nb.cells += [new_code_cell("x = 1") for _ in range(extra_cells)]
    path = root / f"04-{name}.ipynb"
    nbformat.write(nb, path)
    if source_lines:        # a solution cell whose source is a list of that many strings
        data = json.loads(path.read_text(encoding="utf-8"))
        for cell in data["cells"]:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "exa-solution":
                cell["source"] = ["x = 1\n"] * source_lines + ["n_star = 1.0"]
        path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _peak_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _grade(path: Path, key: Path, *extra: str) -> tuple[float, float, str]:
    """(the grader's peak RSS in MB, wall seconds, the outcome in a few words)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hetlab", "grade", str(path), "--key", str(key), "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _peak_mb(proc.pid))
        time.sleep(0.05)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode:
        return peak, wall, f"exit {proc.returncode}: {err.strip()[:70]}"
    item = next(i for i in json.loads(out)["items"] if i["id"] == "exa-tests")
    return peak, wall, f"{item['score']:g}/1 {item['status']}: {item['message'][:50]}"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hetlab-bench-grading-") as tmp:
        root = Path(tmp)
        student, key = _course(root), root / "key.json"
        rows = []
        for k, (name, solution) in enumerate(CASES.items()):
            rows.append((name, *_grade(_submission(student, root, f"c{k}", solution), key)))
        rows.append(("source of 10^6 strings", *_grade(_submission(student, root, "lines", None, 10**6), key)))
        rows.append(("5,000 extra cells, --total-timeout 20",
                     *_grade(_submission(student, root, "cells", None, extra_cells=5000), key,
                             "--total-timeout", "20")))
    base = rows[0][1] or 1.0
    print("Grader peak RSS (VmHWM of the grading process alone) per hostile submission")
    print(f"{'case':<40}{'peak MB':>9}{'x junk':>8}{'wall s':>8}  outcome")
    for name, peak, wall, outcome in rows:
        print(f"{name:<40}{peak:>9.0f}{peak / base:>8.2f}{wall:>8.1f}  {outcome}")


if __name__ == "__main__":
    main()
