"""Second-review additions for chapter 10: roofline-style iteration cost, energy-only placement, hand-offs."""
import numpy as np
import pytest

from hetlab import schedulers as S
from hetlab.devices import phone_soc
from hetlab.models import pipelines as FR
from hetlab.models import serving as SV
from hetlab.workloads import segmentation_model


def test_single_request_cost_sum_vs_max():
    costs = dict(step_base=0.02, step_per_sequence=0.0, prefill_per_token=1e-3)
    # one request, prompt 100 tokens (0.1 s of compute), output 1 token: one prefill iteration
    add = SV.simulate([0.0], [100], [1], cost="sum", **costs)
    roof = SV.simulate([0.0], [100], [1], cost="max", **costs)
    assert add.ttft[0] == pytest.approx(0.02 + 0.1)
    assert roof.ttft[0] == pytest.approx(0.1)
    # a short prompt is memory-bound under max: the weight read sets the pace
    short = SV.simulate([0.0], [5], [1], cost="max", **costs)
    assert short.ttft[0] == pytest.approx(0.02)


def test_cost_default_is_sum_and_max_never_slower():
    w = SV.workload(5, 60, seed=3)
    base = SV.simulate(w.arrivals, w.prompt, w.output, gpus=2)
    add = SV.simulate(w.arrivals, w.prompt, w.output, gpus=2, cost="sum")
    assert np.array_equal(base.ttft, add.ttft) and np.array_equal(base.latency, add.latency)
    for policy in SV.POLICIES:
        a = SV.simulate(w.arrivals, w.prompt, w.output, gpus=1, policy=policy, cost="sum")
        m = SV.simulate(w.arrivals, w.prompt, w.output, gpus=1, policy=policy, cost="max")
        assert m.busy_fraction <= a.busy_fraction + 1e-12


def test_cost_rejects_unknown():
    with pytest.raises(ValueError, match="cost must be one of sum, max"):
        SV.simulate([0.0], [1], [1], cost="roofline")


def test_min_energy_placement_is_the_affinity_rule_on_the_phone():
    graph, soc = segmentation_model(), phone_soc()
    energy = FR.min_energy_placement(graph, soc)
    affinity = S.POLICIES["by affinity"](graph, soc)
    assert energy == {t.name: affinity.devices[d].name for t, d in zip(graph.tasks, affinity.device_of)}
    one = FR.stream(graph, soc, energy, 1)
    assert one.energy < S.heft(graph, soc).energy          # less energy per frame, but slower
    assert one.makespan > S.heft(graph, soc).makespan


def test_handoffs_count_cross_device_edges():
    graph, soc = segmentation_model(), phone_soc()
    cpu = S.serial(graph, soc, device="CPU")
    assert FR.handoffs(cpu) == (0, 0.0)
    n, t = FR.handoffs(S.POLICIES["by affinity"](graph, soc))
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


def test_kernel_efficiency_matches_the_chapter_formula():
    from hetlab.models import training as T
    assert T.kernel_efficiency(2048) == pytest.approx(0.5 * 2048 / (2048 + 256))
    assert T.kernel_efficiency(4096) > T.kernel_efficiency(2048)
    with pytest.raises(ValueError, match="peak_efficiency"):
        T.kernel_efficiency(10, peak_efficiency=2)
