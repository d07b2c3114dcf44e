import json

import pytest

from hetlab.book import quiz
from hetlab.book.progress import ProgressStore


def test_bank_shape_every_chapter_has_questions_and_chapter_13_starts_with_the_ten():
    for chapter in range(1, 13):
        assert len(quiz.questions(chapter)) >= 2   # the textbook standard (test_chapter_standard) asks 4
    interview = quiz.questions(13)[:10]     # the seed article's ten come first; chapter 13 adds its own
    assert [q.id for q in interview] == [f"q{k:02d}" for k in range(1, 11)]
    assert [q.type for q in interview] == ["single"] * 7 + ["multiple"] * 3


def test_every_question_accepts_exactly_its_key():
    for q in quiz.questions():
        answer, explanation = q.key()
        assert explanation and answer <= set(q.letters)
        assert quiz.check(q.id, sorted(answer)).correct
        for letter in q.letters:
            if {letter} != answer:
                assert not quiz.check(q.id, letter if q.type == "single" else [letter]).correct


def test_interview_answers_follow_the_article():
    # The article's answers are A / ABC before our option shuffle; check by option text.
    expected = {"q01": ["拆成小任务"], "q03": ["可并行部分"], "q07": ["1.1"],
                "q08": ["数据并行", "模型并行", "流水线并行"],
                "q10": ["所长", "负载", "关键路径"]}
    for qid, fragments in expected.items():
        q = quiz.question(qid)
        answer, _ = q.key()
        chosen = [q.options[q.letters.index(letter)] for letter in sorted(answer)]
        assert len(chosen) == len(fragments)
        for fragment in fragments:
            assert any(fragment in option for option in chosen), (qid, fragment)


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


def test_answers_are_not_readable_in_the_bank_file():
    text = "".join(f.read_text(encoding="utf-8") for f in sorted(quiz.BANK_PATH.glob("*.json")))
    assert text.count('"id"') == len(quiz.questions())
    for q in quiz.questions():
        _, explanation = q.key()
        assert explanation not in text
    assert '"answer"' not in text and '"explanation"' not in text


def test_export_then_import_round_trips(tmp_path):
    plain = tmp_path / "plain.json"
    assert quiz.export_bank(plain) == len(quiz.questions())
    items = json.loads(plain.read_text(encoding="utf-8"))
    assert all("answer" in item and "explanation" in item for item in items)
    sealed = tmp_path / "sealed.json"
    quiz.import_bank(plain, sealed)
    for q in quiz.questions():
        assert quiz.question(q.id, bank=sealed).key() == q.key()
    items[0]["answer"] = ["Q"]
    plain.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="must use letters"):
        quiz.import_bank(plain, tmp_path / "bad.json")


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


def test_progress_report_covers_all_chapters(tmp_path):
    store = ProgressStore(tmp_path / "p.json")
    store.record("q01", 13, "B", True)
    report = store.report()
    chapters = set(range(1, 14)) | {q.chapter for q in quiz.questions()}
    assert len(report.splitlines()) == len(chapters) + 2
    assert "面试题" in report and report.splitlines()[-1].split()[-3:] == ["1", "1", str(len(quiz.questions()))]


@pytest.mark.parametrize("chapter, error", [("3", TypeError), (True, TypeError), (3.0, TypeError), (0, ValueError)])
def test_questions_refuses_a_chapter_that_is_not_a_chapter_number(chapter, error):
    # issue 11: questions(chapter='3') returned [] (no question has the chapter '3'), hiding the mistake
    with pytest.raises(error, match="chapter"):
        quiz.questions(chapter)
    assert quiz.questions(3) and all(q.chapter == 3 for q in quiz.questions(3))
