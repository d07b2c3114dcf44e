"""hetlab.book.readings.ch09: what the balance and workflow widgets say."""
import pytest

from hetlab.book.readings.ch09 import balance_reading, workflow_reading


def test_balance_reading_lists_each_policy():
    text = balance_reading(20, 2.0, [("分块", 0.734, 32.55), ("LPT", 0.401, 26.3)])
    assert text == "20 个任务，大小悬殊程度 σ = 2.00：分块 不均衡度 0.734、完工 32.55；LPT 不均衡度 0.401、完工 26.30"


def test_workflow_reading_gives_the_gap_over_the_bound():
    text = workflow_reading("HEFT", "Montage", 100, 9, makespan=568.0, bound=564.0, critical_path=466.0,
                            area=564.0, imbalance=0.01)
    assert "超出下界 0.7%" in text and "max(关键路径 466，总工作量/总速度 564)" in text   # 568 / 564 - 1


@pytest.mark.parametrize("kwargs, match", [({"bound": 0.0}, "bound"), ({"makespan": -1.0}, "makespan"),
                                           ({"seed": -1}, "seed"), ({"bandwidth": 0}, "bandwidth")])
def test_workflow_reading_refuses_bad_numbers(kwargs, match):
    args = dict(policy="HEFT", workflow="Montage", bandwidth=100, seed=0, makespan=1.0, bound=1.0, critical_path=1.0,
                area=1.0, imbalance=0.0)
    with pytest.raises((ValueError, TypeError), match=match):
        workflow_reading(**{**args, **kwargs})


def test_balance_reading_refuses_bad_rows():
    with pytest.raises(TypeError, match="triples"):
        balance_reading(20, 1.0, [("LPT", 0.1)])
    with pytest.raises(ValueError, match="imbalance"):
        balance_reading(20, 1.0, [("LPT", -0.1, 1.0)])
