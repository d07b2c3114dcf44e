"""Models added for chapters 8 and 10: serving costs from a datasheet, static figures."""
import math

import pytest

from hetlab.book.views import ch08, ch10
from hetlab.models import serving as SV


def test_iteration_costs_follow_flops_and_bytes():
    c = SV.iteration_costs(13e9, layers=40, hidden=5120, peak_flops=312e12, mfu=0.5, bandwidth=2.039e12, mbu=0.6)
    assert math.isclose(c["prefill_per_token"], 2 * 13e9 / (0.5 * 312e12))          # 0.167 ms per token
    assert math.isclose(c["step_base"], 2 * 13e9 / (0.6 * 2.039e12))
    assert c["kv_bytes_per_token"] == 2 * 40 * 5120 * 2
    assert math.isclose(c["step_per_sequence"], c["kv_bytes_per_token"] * 250 / (0.6 * 2.039e12))
    assert c["kv_capacity"] == int((80e9 * 0.9 - 26e9) // c["kv_bytes_per_token"])
    # physically plausible: the implied prefill rate never exceeds the peak
    assert 2 * 13e9 / c["prefill_per_token"] <= 312e12


@pytest.mark.parametrize("kwargs, match", [({"mfu": 0.0}, "mfu"), ({"mfu": 1.5}, "mfu"), ({"mbu": 2}, "mbu"),
                                           ({"reserve": 1.0}, "reserve"), ({"memory": 20e9}, "memory"),
                                           ({"layers": 0}, "layers")])
def test_iteration_costs_rejects_bad_inputs(kwargs, match):
    args = dict(layers=40, hidden=5120)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        SV.iteration_costs(13e9, **args)


def test_chapter10_serving_uses_derived_costs():
    assert ch10.SERVING["prefill_per_token"] == ch10.COSTS["prefill_per_token"]
    assert ch10.SERVING["kv_capacity"] == ch10.COSTS["kv_capacity"] < 100_000
    r = SV.simulate([0.0], [200], [100], **ch10.GPU_COSTS)
    assert r.latency[0] > 100 * ch10.COSTS["step_base"]           # one token per iteration


def test_static_figures_draw():
    for fig in [ch08.pipeline_pair_figure(4, 6), ch08.allreduce_figure(), ch08.memory_figure(),
                ch10.training_figure(), ch10.serving_figure(), ch10.phone_figure(frames=2)]:
        assert fig.axes
