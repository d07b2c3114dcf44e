"""Structure of the book: 13 chapters in the article's order, each run cleanly top to bottom.

nbval (run by the same test command) re-executes every notebook and compares outputs, so a
stale stored output fails there; these tests check what nbval cannot see.
"""
import re
from pathlib import Path

import nbformat
import pytest

from hetlab.book import quiz

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
ORDER = ["visual-demo", "concepts", "hardware", "granularity", "runtime-scheduling", "sync-communication",
         "metrics", "typical-patterns", "optimisation", "ai-scenarios", "python-demo", "misconceptions", "interview"]
PATHS = sorted(CHAPTERS.glob("[0-9][0-9]-*.ipynb"))
APPENDIX = sorted(CHAPTERS.glob("A[0-9]-*.ipynb"))


def test_thirteen_chapters_in_the_articles_order():
    assert [p.name for p in PATHS] == [f"{k:02d}-{slug}.ipynb" for k, slug in enumerate(ORDER, 1)]


#: The first code cell's guard: ``%pip install`` of hetlab from the repository, run only where it is not importable.
INSTALL_GUARD = re.compile(r"\Atry:[^\n]*\n    import hetlab\nexcept ImportError:\n    %pip install -q \"hetlab @ git\+"
                           r"https://github\.com/[\w.-]+/[\w.-]+\"\n")


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_only_chapters_and_appendices_live_in_chapters():
    assert {p.name for p in CHAPTERS.glob("*.ipynb")} == {p.name for p in PATHS + APPENDIX}
    assert [p.name for p in APPENDIX] == ["A1-real-execution.ipynb", "A2-cpu-gpu.ipynb"]


@pytest.mark.parametrize("path", PATHS + APPENDIX, ids=lambda p: p.stem)
def test_chapter_was_run_cleanly_top_to_bottom(path):
    nb = nbformat.read(path, as_version=4)
    counts = [c.execution_count for c in _code(nb)]
    assert counts == list(range(1, len(counts) + 1)), "re-run the notebook top to bottom (make chapters)"
    for cell in _code(nb):
        assert all(o.output_type != "error" for o in cell.outputs), cell.source[:60]
        if re.search(r"^\s*print\(", cell.source, re.M):
            assert cell.outputs, f"a printing cell has no stored output: {cell.source[:60]}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_chapter_has_goals_analogy_widget_summary_quiz_and_exercise(path):
    nb = nbformat.read(path, as_version=4)
    number = int(path.name[:2])
    assert nb.cells[0].source.startswith(f"# 第 {number} 章")
    opening = "\n".join(c.source for c in nb.cells[:4] if c.cell_type == "markdown")
    assert "厨房" in opening, "the chapter opens with a kitchen scene"
    sources = [c.source for c in _code(nb)]
    assert any(f"quiz.quiz({number})" in s for s in sources)
    widgets = [s for s in sources if "views." in s and ".widget" in s or "quiz.quiz(" in s]
    assert widgets, "every chapter needs an interactive widget"
    graded = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    solutions = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    assert graded and solutions
    assert all("### BEGIN SOLUTION" in c.source and "### END SOLUTION" in c.source for c in solutions)
    assert all("### BEGIN HIDDEN TESTS" in c.source for c in graded)


@pytest.mark.parametrize("path", PATHS + APPENDIX, ids=lambda p: p.stem)
def test_ignore_output_marks_only_widget_and_measured_cells(path):
    nb = nbformat.read(path, as_version=4)
    for cell in _code(nb):
        # nbval reads the marker as a comment or as the cell tag nbval-ignore-output (no comment for the learner)
        ignored = "NBVAL_IGNORE_OUTPUT" in cell.source or "nbval-ignore-output" in cell.metadata.get("tags", [])
        tagged = set(cell.metadata.get("tags", [])) & {"widget", "measured"}
        assert ignored == bool(tagged), cell.source[:60]
        if "widget" in tagged:
            assert ".widget" in cell.source or "quiz.quiz(" in cell.source or "panel()" in cell.source


@pytest.mark.parametrize("path", PATHS + APPENDIX, ids=lambda p: p.stem)
def test_no_cell_downloads_and_cells_stay_thin(path):
    nb = nbformat.read(path, as_version=4)
    for k, cell in enumerate(_code(nb)):
        # The one allowed download: the first code cell installs hetlab when it is missing, i.e. outside a clone
        # (tests/test_site.py checks the guard and its address); it does not count towards the cell's length.
        source = INSTALL_GUARD.sub("", cell.source, count=1) if k == 0 else cell.source
        assert not re.search(r"https?://|urllib|requests\.|urlopen|wget|curl ", source), cell.source[:60]
        lines = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        # An algorithm shown in the open (issue 17: a short function over plain data) may take up to 25 lines.
        limit = 25 if re.search(r"^def \w+\(", source, re.M) else 16
        assert len(lines) <= limit, f"cell too long for a chapter ({len(lines)} lines): {cell.source[:60]}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_quiz_answers_are_not_in_the_notebook_source(path):
    text = path.read_text(encoding="utf-8")
    for q in quiz.questions(int(path.name[:2])):
        _, explanation = q.key()
        assert explanation not in text


def test_formulas_of_the_article_appear_in_latex():
    text = {p.name[:2]: p.read_text(encoding="utf-8") for p in PATHS}
    expected = {"02": [r"\\max_{1 \\le i \\le n} t_i", r"\\sum_{i=1}^{n} t_i"],
                "03": [r"P = N_{\\text{cores}} \\times f \\times \\text{IPC}"],
                "04": [r"T_{\\text{total}} = N \\times O_s + \\frac{W}{N}", r"N^* = \\sqrt{W/O_s}"],
                "05": [r"\\text{Speedup} = \\frac{T_{\\text{serial}}}{T_{\\text{parallel}}}"],
                "06": [r"S_{\\max} = \\frac{1}{(1-p) + \\frac{p}{N}}", r"\\frac{1}{1-p}"],
                "07": [r"E = \\frac{S}{N} = \\frac{1}{N(1-p)+p}"],
                "08": [r"T_{\\text{pipeline}} = \\max_i t_i"],
                "09": [r"\\text{Imbalance} = \\frac{W_{\\max} - W_{\\text{avg}}}{W_{\\text{avg}}}"]}
    for chapter, formulas in expected.items():
        for formula in formulas:
            assert formula in text[chapter], (chapter, formula)
