"""Checking answers and the quiz widgets (hetlab.book.quiz)."""
import pytest

from hetlab.book import quiz
from hetlab.book.progress import ProgressStore


def test_every_question_accepts_exactly_its_key():
    for q in quiz.questions():
        answer, explanation = q.key()
        assert explanation and answer <= set(q.letters)
        assert quiz.check(q.id, sorted(answer)).correct
        for letter in q.letters:
            if {letter} != answer:
                assert not quiz.check(q.id, letter if q.type == "single" else [letter]).correct


def test_result_text_is_deterministic():
    r = quiz.check("c04-1", "d")
    assert r.text.splitlines()[0] == "[c04-1] 你的答案：D —— 正确 ✓"
    assert quiz.check("q08", "A, C ,D").text.startswith("[q08] 你的答案：ACD —— 正确 ✓")
    assert "错误 ✗（正确答案：ACD）" in quiz.check("q08", ["A", "B"]).text


@pytest.mark.parametrize("qid, answer, message", [
    ("c04-1", "AB", "single-choice"), ("c04-1", "Z", "must use letters"), ("c04-1", "", "at least one"),
    ("nope", "A", "unknown question id"),
])
def test_bad_answers_are_rejected_clearly(qid, answer, message):
    with pytest.raises(ValueError, match=message):
        quiz.check(qid, answer)


def test_quiz_widget_gives_feedback_and_records_progress(tmp_path):
    store = ProgressStore(tmp_path / "p.json")
    widget = quiz.ask("c06-1", store=store)
    wrong = widget.submit("A")
    assert "错误" in wrong and "解析" in wrong
    right = widget.submit("D")
    assert "正确" in right
    assert ProgressStore(tmp_path / "p.json").chapter_score(6) == (1, 1)  # a new store = a restarted kernel
    assert store.load()["c06-1"]["attempts"] == 2


def test_unanswered_submit_asks_for_a_choice(tmp_path):
    widget = quiz.ask("q09", store=ProgressStore(tmp_path / "p.json"))
    assert "请先选择" in widget.submit()
    widget.children[1].children[0].value = True   # tick option A in the browser
    assert "你的答案：A" in widget.submit()


def test_chapter_quiz_shows_a_score(tmp_path):
    store = ProgressStore(tmp_path / "p.json")
    box = quiz.quiz(13, store=store)
    n = len(quiz.questions(13))
    assert len(box.items) == n and box.items[6].question.id == "q07"
    box.items[6].submit("B")          # q07: 1.1 s, option B (test_interview_answers_follow_the_article)
    box.refresh()
    assert f"已答 1/{n} 题，答对 1 题" in box.children[-1].value

