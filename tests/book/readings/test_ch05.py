"""hetlab.book.readings.ch05: the lines that read the static plan against the central queue."""
import pytest

from hetlab.book.readings import ch05 as readings
from hetlab.devices import kitchen
from hetlab.models import dynamics as R
from hetlab.workloads import skewed_tasks


def test_variance_summary_lists_the_four_schedules():
    run = R.compare_under_variance(skewed_tasks(24, spread=0.8, seed=7), kitchen(), noise=0.3, seed=0)
    lines = readings.variance_summary(run).splitlines()
    heads = ["静态计划（按估计，预期）", "静态计划（实际执行）", "中央队列（实际执行）", "先知"]
    assert [line.split()[0] for line in lines] == heads
    assert lines[2].endswith(f"{run.dynamic.makespan:6.2f}")


def test_late_orders_summary_names_the_static_rule():
    orders, devices = skewed_tasks(24, spread=0.8, seed=7), kitchen()
    rr = readings.late_orders_summary(R.late_orders(orders, devices, count=4, at=2.0))
    fast = readings.late_orders_summary(R.late_orders(orders, devices, count=4, at=2.0, rule="by-speed"))
    assert "轮流" in rr.splitlines()[1] and "按速度" in fast.splitlines()[1]


def test_readings_refuse_other_records():
    with pytest.raises(TypeError, match="run"):
        readings.variance_summary("run")
    with pytest.raises(TypeError, match="run"):
        readings.late_orders_summary(None)
