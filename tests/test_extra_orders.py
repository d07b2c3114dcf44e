"""Extra orders arriving mid-run: static rule vs dynamic queue (hetlab.models.late_orders)."""
import pytest

from hetlab.devices import identical, kitchen
from hetlab.models import late_orders as X
from hetlab.tasks import independent_tasks
from hetlab.workloads import skewed_tasks


def test_by_hand():
    # Plan: D0 runs the 4, D1 the 1. Two dishes of 1 ordered at 0.5.
    # Static round-robin: D0 gets 加1 after its 4 -> ends 5; D1 gets 加2 at 1 -> 2. Makespan 5.
    # Dynamic: D1 is free at 1 and takes 加1 (1-2), then 加2 (2-3); D0 ends at 4. Makespan 4.
    run = X.extra_orders(independent_tasks([4.0, 1.0]), identical(2), count=2, work=1.0, at=0.5)
    assert run.planned.makespan == pytest.approx(4.0)
    assert run.static.makespan == pytest.approx(5.0)
    assert run.dynamic.makespan == pytest.approx(4.0)


def test_nothing_starts_before_it_is_ordered():
    run = X.extra_orders(skewed_tasks(10, seed=3), kitchen(), count=5, at=2.0)
    for s in (run.static, run.dynamic):
        s.validate()
        for k in range(5):
            assert s.placement(f"加{k + 1}").start >= 2.0 - 1e-12


def test_dynamic_waits_for_orders_when_idle():
    # Nothing known before the run but one tiny task: cooks idle until the order at 3.
    run = X.extra_orders(independent_tasks([0.5]), identical(2), count=2, work=1.0, at=3.0)
    assert run.dynamic.makespan == pytest.approx(4.0)
    assert run.static.makespan == pytest.approx(4.0)


@pytest.mark.parametrize("kwargs, message", [({"count": 0}, "count"), ({"work": -1.0}, "work"),
                                             ({"at": float("nan")}, "at")])
def test_bad_input(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        X.extra_orders(skewed_tasks(3), kitchen(), **kwargs)
