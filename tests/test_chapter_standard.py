"""The textbook standard (../shared/CONTENT.md) as checks a reader would otherwise do by hand.

For every chapter and the appendix: the anatomy's headings, at least 4,000 characters of Chinese prose,
a guided question with a hidden answer before every figure widget, at least 4 quiz questions with a
difficulty shown (10 for the interview chapter), at least 2 graded exercises, at least 3 references, and no
pointers into the source article ("原文第 N 节"), which the reader does not have.
"""
import re
from pathlib import Path

import nbformat
import pytest

from hetlab.book import quiz

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
BOOK = sorted(CHAPTERS.glob("[0-9][0-9]-*.ipynb")) + sorted(CHAPTERS.glob("A[0-9]-*.ipynb"))
HEADINGS = ["学习目标", "本章小结", "小测验", "练习", "参考文献"]
CJK = re.compile(r"[\u4e00-\u9fff]")


def bank_chapter(path: Path) -> int:
    """The question bank's chapter number: NN for chapter NN, 14 for appendix A1."""
    return int(path.name[:2]) if path.name[0].isdigit() else 13 + int(path.name[1])


def prose(nb) -> str:
    """Markdown text without display maths, code spans, HTML tags and white space."""
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"\s+", "", text)


@pytest.fixture(params=BOOK, ids=lambda p: p.stem)
def chapter(request):
    return request.param, nbformat.read(request.param, as_version=4)


def test_anatomy_headings_in_order(chapter):
    _, nb = chapter
    headings = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                if line.startswith("#")]
    found = [next((k for k, h in enumerate(headings) if name in h), None) for name in HEADINGS]
    assert None not in found, dict(zip(HEADINGS, found))
    assert found == sorted(found), "headings out of order: " + ", ".join(HEADINGS)


def test_at_least_4000_characters_of_chinese_prose(chapter):
    _, nb = chapter
    text = prose(nb)
    assert len(text) >= 4000, f"{len(text)} prose characters"
    assert len(CJK.findall(text)) >= 0.5 * len(text), "the prose is mostly not Chinese"


def test_every_figure_widget_follows_a_prediction_question_with_a_hidden_answer(chapter):
    _, nb = chapter
    last_markdown = ""
    widgets = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            last_markdown = cell.source
        elif "widget" in cell.metadata.get("tags", []) and "quiz.quiz(" not in cell.source:
            widgets += 1
            assert "试一试" in last_markdown, cell.source[:60]
            assert re.search(r"<details>\s*<summary>答案</summary>.+</details>", last_markdown, re.S), cell.source[:60]
    assert widgets >= 1


def test_quiz_has_enough_questions_with_difficulty(chapter):
    path, nb = chapter
    number = bank_chapter(path)
    items = quiz.questions(number)
    assert len(items) >= (10 if number == 13 else 4)
    assert all(q.level for q in items), [q.id for q in items if not q.level]
    assert any(f"quiz.quiz({number})" in c.source for c in nb.cells if c.cell_type == "code")


def test_at_least_two_graded_exercises(chapter):
    _, nb = chapter
    solutions = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(solutions) >= 2 and len(graded) >= 2
    assert all("### BEGIN HIDDEN TESTS" in c.source for c in graded)


def test_at_least_three_references(chapter):
    _, nb = chapter
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    refs = text[re.search(r"^#+\s*参考文献", text, re.M).start():]
    entries = [line for line in refs.splitlines()[1:] if re.match(r"\s*(\d+\.|[-*]|\[\d+\])\s+\S", line)]
    assert len(entries) >= 3, entries
    assert all(re.search(r"(1[89]|20)\d\d", e) for e in entries), "every reference names its year"


def test_refers_to_the_books_chapters_not_the_source_article(chapter):
    _, nb = chapter
    text = "\n".join(c.source for c in nb.cells)
    assert not re.search(r"原文第\s*\d+\s*节", text)
