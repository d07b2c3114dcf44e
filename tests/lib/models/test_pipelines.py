"""Pipeline-parallel training timelines and frame-level pipelining (hetlab.models.pipelines)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetlab import schedulers as S
from hetlab.devices import Device, phone_soc
from hetlab.models import pipelines as FR
from hetlab.models import training as T
from hetlab.tasks import Task, TaskGraph
from hetlab.workloads import segmentation_model


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


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 12), st.sampled_from(["gpipe", "1f1b"]), st.sampled_from([0.0, 1.0, 2.0]))
def test_simulated_bubble_equals_the_gpipe_formula_for_equal_stages(p, m, method, ratio):
    s = FR.pipeline_schedule([1.5] * p, m, method=method, backward_ratio=ratio).validate()
    assert s.info["bubble_fraction"] == pytest.approx(T.bubble_fraction(p, m), abs=1e-12)
    # The classic fill-drain time: (m + p - 1) slots of (forward + backward).
    assert s.makespan == pytest.approx((m + p - 1) * 1.5 * (1 + ratio))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.5, 5.0), min_size=1, max_size=6), st.integers(1, 10))
def test_forward_pipeline_takes_sum_plus_slowest_per_extra_item(stages, m):
    s = FR.pipeline_schedule(stages, m, backward_ratio=0).validate()
    assert s.makespan == pytest.approx(sum(stages) + (m - 1) * max(stages))


@pytest.mark.parametrize("p, m", [(4, 8), (3, 2), (5, 12)])
def test_1f1b_holds_at_most_p_minus_s_activations(p, m):
    one = FR.pipeline_schedule([1] * p, m, method="1f1b").validate()
    gpipe = FR.pipeline_schedule([1] * p, m, method="gpipe").validate()
    assert one.info["peak_activations"] == [min(p - s, m) for s in range(p)]
    assert gpipe.info["peak_activations"] == [m] * p
    assert one.makespan == pytest.approx(gpipe.makespan)


def test_pipeline_rejects_bad_input():
    with pytest.raises(ValueError, match="micro_batches must be in"):
        FR.pipeline_schedule([1, 1], 0)
    with pytest.raises(ValueError, match="method must be"):
        FR.pipeline_schedule([1, 1], 2, method="zigzag")
    with pytest.raises(ValueError, match="stage_times must be in"):
        FR.pipeline_schedule([1, 0], 2)


def test_min_energy_placement_is_the_affinity_rule_on_the_phone():
    graph, soc = segmentation_model(), phone_soc()
    energy = FR.min_energy_placement(graph, soc)
    affinity = S.by_affinity(graph, soc)
    assert energy == {t.name: affinity.devices[d].name for t, d in zip(graph.tasks, affinity.device_of)}
    one = FR.stream(graph, soc, energy, 1)
    assert one.energy < S.heft(graph, soc).energy          # less energy per frame, but slower
    assert one.makespan > S.heft(graph, soc).makespan


def test_handoffs_count_cross_device_edges():
    graph, soc = segmentation_model(), phone_soc()
    cpu = S.serial(graph, soc, device="CPU")
    assert FR.handoffs(cpu) == (0, 0.0)
    n, t = FR.handoffs(S.by_affinity(graph, soc))
    assert n > FR.handoffs(S.heft(graph, soc))[0] and t > 0
    with pytest.raises(TypeError, match="schedule must be a Schedule"):
        FR.handoffs("x")
    with pytest.raises(ValueError, match="devices must not be empty"):
        FR.min_energy_placement(graph, [])


def test_energy_aware_choice_picks_least_energy_that_meets_the_rate():
    graph, soc = segmentation_model(), phone_soc()
    heft = S.heft(graph, soc)
    cands = {"affinity": FR.min_energy_placement(graph, soc), "HEFT": heft}
    name, period, energy = FR.energy_aware_choice(graph, soc, 30, cands)
    assert name == "affinity" and period <= 1000 / 30
    name, period, _ = FR.energy_aware_choice(graph, soc, 69, cands)      # only HEFT streams at 69 fps
    assert name == "HEFT" and period <= 1000 / 69
    assert FR.energy_aware_choice(graph, soc, 500, cands) is None
    assert FR.energy_aware_choice(graph, soc, 30)[0] == "min energy"      # default candidates
    with pytest.raises(ValueError, match="fps"):
        FR.energy_aware_choice(graph, soc, 0, cands)
    with pytest.raises(ValueError, match="placements must hold"):
        FR.energy_aware_choice(graph, soc, 30, {})


@pytest.mark.parametrize("call, name", [
    (lambda: FR.pipeline_schedule([1, 1], 10**12), "micro_batches"),          # used to build tasks for minutes
    (lambda: FR.pipeline_schedule([1, 1], 4, activation=-1.0), "activation"),
    (lambda: FR.pipeline_schedule([1, 1], 4, method=3), "method"),
])
def test_bad_pipeline_input_is_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)
