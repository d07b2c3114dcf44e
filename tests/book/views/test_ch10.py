"""Chapter 10's views (hetlab.book.views.ch10): the scenarios' parameters and the static figures."""
import numpy as np

from hetlab.book.views import ch10
from hetlab.models import serving as SV


def test_chapter10_serving_uses_derived_costs():
    assert ch10.SERVING["prefill_per_token"] == ch10.COSTS["prefill_per_token"]
    assert ch10.SERVING["kv_capacity"] == ch10.COSTS["kv_capacity"] < 100_000
    r = SV.simulate([0.0], [200], [100], **ch10.GPU_COSTS)
    assert r.latency[0] > 100 * ch10.COSTS["step_base"]           # one token per iteration


def test_static_figures_draw():
    for fig in [ch10.training_figure(), ch10.serving_figure(), ch10.phone_figure(frames=2), ch10.load_figure()]:
        assert fig.axes


def test_training_figure_circles_the_fastest_feasible_micro_batch_count():
    # TP 8 x PP 16: m = 128 beats 64 and 256 (the chapter's trade-off), so the circle sits at 128
    ax = ch10.training_figure(tp=8, pp=16).axes[0]
    circle = [line for line in ax.lines if line.get_marker() == "o" and line.get_mfc() == "none"][0]
    assert circle.get_xdata()[0] == 128


def test_capacity_is_the_throughput_bound_of_the_workload():
    # 4 GPUs x 32 / (t0 + 32 c_seq + 32 (P/O) c_prefill), with the workload's own prompt-to-output ratio
    w = ch10.serving_workload(3)
    c = ch10.COSTS
    ratio = w.prompt.sum() / w.output.sum()
    by_hand = 128 / (c["step_base"] + 32 * c["step_per_sequence"] + 32 * ratio * c["prefill_per_token"])
    assert abs(ch10.capacity(w) - by_hand) < 1e-9 * by_hand


def test_ttft_p99_over_seeds_runs_each_draw():
    out = ch10.ttft_p99_over_seeds(3, seeds=(0, 1), policies=["static"])
    w = ch10.serving_workload(3, 1)
    r = SV.simulate(w.arrivals, w.prompt, w.output, policy="static", **ch10.SERVING)
    assert list(out) == ["static"] and out["static"][1] == np.percentile(r.ttft, 99) * 1e3


def test_serving_widget_draws_the_simulated_quantiles_and_caches_them():
    explorer = ch10.serving_explorer()
    text = explorer.update(rate=2, policy="请求级批处理", max_batch=8, steal=False)
    w = ch10.serving_workload(2)
    r = SV.simulate(w.arrivals, w.prompt, w.output, policy="static", **dict(ch10.SERVING, max_batch=8, steal=False))
    ttft = explorer.axes.lines[0].get_xdata()
    assert np.array_equal(ttft, np.quantile(r.ttft, np.linspace(0, 1, 300)) * 1e3)
    assert f"窃取 {r.stolen} 次" in text
    hits = ch10._serving_curves.cache_info().hits
    assert explorer.update(rate=2) == text and ch10._serving_curves.cache_info().hits == hits + 1


def test_serving_widget_blits_frames_equal_to_a_full_render():
    # the widget draws only its curves, lines, frame, title and legend over kept ticks (Explorer blitting): each
    # frame must be the PNG a full render of the figure gives, without rendering the background again
    import io

    explorer = ch10.serving_explorer()
    explorer.png()
    draws = []
    explorer.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    settings = [dict(rate=1, policy="连续批处理", max_batch=32, steal=True),
                dict(rate=5, policy="请求级批处理", max_batch=64, steal=True),
                dict(rate=3, policy="请求级批处理", max_batch=4, steal=False)]
    frames = [(explorer.update(**values), explorer.png())[1] for values in settings]
    assert not draws and explorer._background is not None
    for values, frame in zip(settings, frames):
        explorer.update(**values)
        buffer = io.BytesIO()
        explorer.figure.savefig(buffer, format="png", dpi=explorer.dpi, pil_kwargs={"compress_level": 1})
        assert frame == buffer.getvalue()
