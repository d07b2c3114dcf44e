import pytest

from hetlab.devices import Device
from hetlab.models import pipelines as FR
from hetlab.tasks import Task, TaskGraph


def _chain():
    # camera -> a (1 ms on CPU) -> b (2 ms on NPU): one frame takes 3 ms, but frames overlap
    g = TaskGraph([Task("a", times={"CPU": 1.0, "NPU": 9.0}), Task("b", times={"CPU": 9.0, "NPU": 2.0})],
                  [("a", "b", 0.0)])
    return g, [Device("CPU", "CPU"), Device("NPU", "NPU")]


def test_two_stage_chain_pipelines_at_the_slowest_stage():
    g, devices = _chain()
    latency, period = FR.frame_period(g, devices, {"a": "CPU", "b": "NPU"}, frames=10)
    assert latency == pytest.approx(3.0) and period == pytest.approx(2.0)   # max(1, 2), not 1 + 2
    s = FR.stream(g, devices, {"a": "CPU", "b": "NPU"}, 5).validate()
    assert s.makespan == pytest.approx(1 + 5 * 2)                          # fill 1, then one frame per 2 ms


def test_everything_on_one_device_gains_nothing():
    g, devices = _chain()
    latency, period = FR.frame_period(g, devices, {"a": "CPU", "b": "CPU"}, frames=6)
    assert period == pytest.approx(latency) == pytest.approx(10.0)


def test_split_placement_and_bad_inputs():
    g, devices = _chain()
    assert FR.split_placement(g, {None: "CPU"}, {None: "NPU"}, 1) == {"a": "CPU", "b": "NPU"}
    with pytest.raises(ValueError, match="frames"):
        FR.stream(g, devices, {"a": "CPU", "b": "NPU"}, 0)
    with pytest.raises(ValueError, match="every task"):
        FR.stream(g, devices, {"a": "CPU"}, 2)
    with pytest.raises(ValueError, match="unknown devices"):
        FR.stream(g, devices, {"a": "CPU", "b": "TPU"}, 2)
    with pytest.raises(TypeError, match="placement"):
        FR.stream(g, devices, ["CPU", "NPU"], 2)


def test_overlap_share():
    g, devices = _chain()
    lone = FR.stream(g, devices, {"a": "CPU", "b": "NPU"}, 1)
    assert FR.overlap_share(lone) == 0.0                    # a chain: never two devices at once
    many = FR.stream(g, devices, {"a": "CPU", "b": "NPU"}, 3)
    # CPU runs a at [0,1], [1,2], [2,3]; NPU runs b at [1,3], [3,5], [5,7]: both busy during [1, 3] of 7
    assert FR.overlap_share(many) == pytest.approx(2 / 7)
