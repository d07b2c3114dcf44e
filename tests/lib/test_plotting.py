import warnings

import matplotlib
import matplotlib.pyplot as plt
import pytest

from hetlab import plotting
from hetlab import schedulers as S
from hetlab.devices import kitchen
from hetlab.models import simulators as sim
from hetlab.workloads import article_tasks, heft_paper_example


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_a_cjk_font_is_chosen_when_installed():
    family = plotting.use_cjk_font()
    if family is None:
        pytest.skip("no CJK font installed (Debian fonts-noto-cjk); the fallback is tested below")
    assert family in plotting.CJK_FONTS
    assert matplotlib.rcParams["font.sans-serif"][0] == family
    assert plotting.label("设备", "device") == "设备"


def test_without_a_cjk_font_labels_fall_back_to_english_with_one_warning(monkeypatch):
    from matplotlib import font_manager

    monkeypatch.setattr(font_manager.fontManager, "ttflist", [])
    plotting.use_cjk_font.cache_clear()
    try:
        with pytest.warns(plotting.FontFallbackWarning, match="fonts-noto-cjk"):
            assert plotting.label("设备", "device") == "device"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert plotting.label("设备", "device") == "device"   # warned once only
    finally:
        plotting.use_cjk_font.cache_clear()
    monkeypatch.undo()
    plotting.use_cjk_font()


def _draw_all():
    s = S.work_stealing(article_tasks(), kitchen(), steal_latency=0.1, initial="first")
    plotting.gantt(s)
    graph, procs = heft_paper_example()
    plotting.gantt(S.heft(graph, procs), show_deps=True)
    plotting.speedup_curve([0.5, 0.95])
    plotting.efficiency_curve([0.9])
    plotting.granularity_curve(10_000, 1.0)
    plotting.pipeline_timeline(sim.pipeline_schedule([1, 1, 1], 4, method="1f1b"))
    plotting.flynn_diagram()
    plotting.parallelism_grid(2, 2, 4)
    for fig in map(plt.figure, plt.get_fignums()):
        fig.canvas.draw()   # glyphs are looked up when text is drawn


def test_every_figure_draws_without_missing_glyph_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*")
        _draw_all()


def test_gantt_hatches_stolen_tasks_and_labels_devices():
    s = S.work_stealing(article_tasks(), kitchen(), steal_latency=0.05, initial="first", seed=1)
    ax = plotting.gantt(s)
    stolen = {e.task for e in s.log if e.task}
    hatched = [c for c in ax.collections if c.get_hatch() == "//"]
    assert stolen and len(hatched) == 1 and len(hatched[0].get_paths()) == len(stolen)
    bars = ax.collections[0].get_paths()
    assert len(bars) == len(s.graph.tasks)
    first = bars[0].vertices[:4]
    assert first[:, 0].min() == s.start[0] and first[:, 0].max() == s.end[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["NPU", "GPU", "CPU"]
    assert "makespan" in ax.get_title()


def test_figures_refuse_bad_input_by_name():
    # issue 11: these were AttributeErrors, numpy DType errors or a MemoryError deep inside numpy.
    heft = S.heft(*heft_paper_example())
    cases = [
        (lambda: plotting.gantt("not a schedule"), "schedule"),
        (lambda: plotting.gantt(heft, ax="nope"), "ax"),
        (lambda: plotting.gantt(heft, show_names="yes"), "show_names"),
        (lambda: plotting.speedup_curve([0.5], n_max=10**12, log=False), "n_max"),   # np.arange of 10**12
        (lambda: plotting.speedup_curve(0.5), "p_values"),
        (lambda: plotting.speedup_curve([1.5]), "p_values"),
        (lambda: plotting.efficiency_curve([0.9], n_max="many"), "n_max"),
        (lambda: plotting.granularity_curve(float("inf"), 1.0), "W"),
        (lambda: plotting.pipeline_timeline(heft), "schedule"),                    # no bubble share to show
        (lambda: plotting.new_axes(figsize=3), "figsize"),
    ]
    for call, name in cases:
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        assert name in str(info.value), info.value


def test_granularity_curve_handles_huge_work():
    # W = 1e100, Os = 1: N* = 1e50 is drawn on a log axis without overflow.
    ax = plotting.granularity_curve(1e100, 1.0)
    assert ax.get_xscale() == "log"


def test_flynn_diagram_has_a_key_and_consistent_subtitles():
    import matplotlib

    matplotlib.use("Agg")
    from hetlab import plotting

    axes = plotting.flynn_diagram()
    fig = axes[0].figure
    texts = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert len(texts) == 3
    assert "warp" in axes[1].get_title()
    import matplotlib.pyplot as plt

    plt.close(fig)
