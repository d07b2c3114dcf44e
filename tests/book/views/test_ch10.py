"""Chapter 10's views (hetlab.book.views.ch10): the scenarios' parameters and the static figures."""
from hetlab.book.views import ch10
from hetlab.models import serving as SV


def test_chapter10_serving_uses_derived_costs():
    assert ch10.SERVING["prefill_per_token"] == ch10.COSTS["prefill_per_token"]
    assert ch10.SERVING["kv_capacity"] == ch10.COSTS["kv_capacity"] < 100_000
    r = SV.simulate([0.0], [200], [100], **ch10.GPU_COSTS)
    assert r.latency[0] > 100 * ch10.COSTS["step_base"]           # one token per iteration


def test_static_figures_draw():
    for fig in [ch10.training_figure(), ch10.serving_figure(), ch10.phone_figure(frames=2)]:
        assert fig.axes


def test_serving_widget_draws_the_simulated_quantiles_and_caches_them():
    import numpy as np

    explorer = ch10.serving_explorer()
    text = explorer.update(rate=2, policy="请求级批处理", max_batch=8, steal=False)
    w = ch10.serving_workload(2)
    r = SV.simulate(w.arrivals, w.prompt, w.output, policy="static", **dict(ch10.SERVING, max_batch=8, steal=False))
    ttft = explorer.axes.lines[0].get_xdata()
    assert np.array_equal(ttft, np.quantile(r.ttft, np.linspace(0, 1, 300)) * 1e3)
    assert f"窃取 {r.stolen} 次" in text
    hits = ch10._serving_curves.cache_info().hits
    assert explorer.update(rate=2) == text and ch10._serving_curves.cache_info().hits == hits + 1
