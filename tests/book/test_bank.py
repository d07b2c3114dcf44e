"""The question bank (hetlab.book.bank): its shape, the article's answers, sealed storage, export and import."""
import json

import pytest

from hetlab.book import quiz


def test_bank_shape_every_chapter_has_questions_and_chapter_13_starts_with_the_ten():
    for chapter in range(1, 13):
        assert len(quiz.questions(chapter)) >= 2   # the textbook standard (test_chapter_standard) asks 4
    interview = quiz.questions(13)[:10]     # the seed article's ten come first; chapter 13 adds its own
    assert [q.id for q in interview] == [f"q{k:02d}" for k in range(1, 11)]
    assert [q.type for q in interview] == ["single"] * 7 + ["multiple"] * 3


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


@pytest.mark.parametrize("chapter, error", [("3", TypeError), (True, TypeError), (3.0, TypeError), (0, ValueError)])
def test_questions_refuses_a_chapter_that_is_not_a_chapter_number(chapter, error):
    # issue 11: questions(chapter='3') returned [] (no question has the chapter '3'), hiding the mistake
    with pytest.raises(error, match="chapter"):
        quiz.questions(chapter)
    assert quiz.questions(3) and all(q.chapter == 3 for q in quiz.questions(3))


def test_a_bank_file_that_cannot_be_written_is_a_clear_error(tmp_path):
    # Review 2026-12-04, part 1: export_bank(path=<a folder>) raised IsADirectoryError.
    for write in (quiz.export_bank, quiz.answer_free_bank):
        for path in (tmp_path, tmp_path / "missing" / "bank.json"):
            with pytest.raises(ValueError, match="path must be a writable file path"):
                write(path)
