"""Properties every policy has on random task graphs: above the lower bound, and earliest-finish placement
never worse than one device alone."""
import pytest
from hypothesis import HealthCheck, given, settings

from hetlab import schedulers as S
from hetlab.tasks import critical_path
from properties.strategies import devices_strategy, graph_strategy

GRAPH_POLICIES = [S.earliest_free, S.round_robin, S.block, S.by_affinity, S.eft, S.lpt, S.work_stealing, S.heft,
                  S.cpop]

fast = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])


@fast
@given(graph_strategy(), devices_strategy())
def test_every_policy_returns_a_valid_schedule_above_the_lower_bound(graph, devices):
    bound = S.lower_bound(graph, devices)
    total_speed = sum(d.speed for d in devices)
    path, _ = critical_path(graph, devices)
    assert bound >= max(path, graph.work.sum() / total_speed) - 1e-9
    for policy in GRAPH_POLICIES:
        s = policy(graph, devices).validate()
        assert s.makespan >= bound - 1e-9, policy.__name__


@fast
@given(graph_strategy(data=False), devices_strategy(latency=False))
def test_earliest_finish_policies_never_lose_to_serial_without_transfers(graph, devices):
    # Placing a task where it finishes first is never worse than appending it to a fixed
    # device, so by induction these policies beat running everything on any one device.
    for device in devices:
        serial = S.serial(graph, devices, device=device.name).validate()
        assert serial.makespan == pytest.approx(graph.work.sum() / device.speed)
        for policy in (S.eft, S.lpt, S.heft):
            assert policy(graph, devices).makespan <= serial.makespan + 1e-9, policy.__name__
