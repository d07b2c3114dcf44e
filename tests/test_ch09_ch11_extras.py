"""Chapter 11: the new views and the article program (chapter 9's views: tests/book/views/test_ch09.py)."""
import matplotlib
import pytest

from hetlab import schedulers as S
from hetlab.devices import kitchen

matplotlib.use("Agg")


def test_chapter_views():
    from hetlab.book.views import ch11

    assert "| LPT | 2.600 |" in ch11.policy_table()
    assert set(ch11.POLICY_DEFINITIONS) == set(ch11.NAMES)
    fig = ch11.demo_gantts()
    assert len(fig.axes) == 6
    with pytest.raises(ValueError, match="policies"):
        ch11.demo_gantts(("nope",))


def test_article_program_agrees_with_the_library(capsys):
    from hetlab.book import _article_program as A
    from hetlab.workloads import article_tasks

    assert A.parallel_time(A.TASKS, A.DEVICES) == S.article_demo(article_tasks(), kitchen()).makespan
    assert A.serial_time(A.TASKS) == pytest.approx(11.4)
    A.main()
    assert "加速比: 4.27x" in capsys.readouterr().out
