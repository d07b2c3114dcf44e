"""Chapter 6's views (hetlab.book.views.ch06): the widgets' readouts and the static figures' geometry."""
import matplotlib
import pytest

matplotlib.use("Agg")

from hetlab import communication as C  # noqa: E402
from hetlab.book.views import ch06  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    import matplotlib.pyplot as plt
    yield
    plt.close("all")


def test_barrier_view_readout_mentions_prediction():
    explorer = ch06.barrier_explorer()
    assert "公式预测" in explorer.update(workers=8, noise=0.3, seed=0)


def test_comm_peak_readout_names_the_peak_of_each_algorithm():
    explorer = ch06.comm_peak_explorer()
    ring = explorer.update(p=0.99, latency_us=1000.0, algorithm="ring")
    tree = explorer.update(p=0.99, latency_us=1000.0, algorithm="halving_doubling")
    # ring: sqrt((63.36 - 0.2) / 0.002) = 177.7 -> 178; halving-doubling: the best power of two, 16,384
    assert "N = 178" in ring and "177.7" in ring
    assert "N = 16,384" in tree and "21,889.6" in tree
    # the book's 14 us: sqrt(63.16 / 28e-6) = 1501.9; halving-doubling's peak, 63.16 ln 2 / 28e-6 = 1.56
    # million, lies beyond the 65,536 devices drawn; the ceiling is 64 / (0.64 + 0.2) = 76.2
    real = explorer.update(p=0.99, latency_us=14.0, algorithm="ring")
    assert "N = 1,502" in real and "1,501.9" in real and "76.2" in real
    assert "仍未见顶" in explorer.update(p=0.99, latency_us=14.0, algorithm="halving_doubling")


def test_the_widget_starts_at_the_books_alpha_and_names_the_exaggerated_ones():
    controls = ch06.comm_peak_explorer().controls
    alpha = controls["latency_us"]
    assert alpha.value == pytest.approx(C.NETWORK_STEP_LATENCY * 1e6)
    labels = dict((value, label) for label, value in alpha.options)
    assert "本书" in labels[14.0] and "放大" in labels[1000.0] and "放大" not in labels[5.0]
    assert ch06.alpha_label(14e-6) == "14 µs" and ch06.alpha_label(1e-3) == "1 ms"
    assert ch06.bandwidth_ceiling(0.99) == pytest.approx(64 / (0.64 + 0.2))


def test_the_ring_states_end_with_every_device_holding_every_sum():
    states = ch06._ring_states(5)
    assert len(states) == 4
    start, _, scattered, done = (held for _, held in states)
    assert start[2][4] == {2}
    # after n - 1 reduce-scatter steps device d holds the complete chunk d + 1
    assert all(scattered[d][(d + 1) % 5] == set(range(5)) for d in range(5))
    assert all(cell == set(range(5)) for row in done for cell in row)


def test_the_pipeline_figure_draws_the_model_totals():
    ax = ch06.pipeline_figure(4, 0.7e-3, 2e-3)
    serial, piped = C.copy_compute_pipeline(4, 0.7e-3, 2e-3)
    ends = {}
    for bar in ax.patches:
        row = round(bar.get_y() + bar.get_height() / 2)
        ends[row] = max(ends.get(row, 0.0), bar.get_x() + bar.get_width())
    assert ends[2] == pytest.approx(serial * 1e3) and ends[0] == pytest.approx(piped * 1e3)
    # a copy never starts before the previous copy ends (one copy engine)
    copies = sorted((b.get_x(), b.get_x() + b.get_width()) for b in ax.patches if round(b.get_y() + 0.4) == 1)
    assert all(later[0] >= earlier[1] - 1e-12 for earlier, later in zip(copies, copies[1:]))


def test_the_overlap_figure_hides_at_most_the_backward_pass():
    fig = ch06.overlap_figure()
    compute_bound, comm_bound = fig.axes
    for ax, c in ((compute_bound, 64.0), (comm_bound, 1.0)):
        hidden = [b for b in ax.patches if round(b.get_y() + b.get_height() / 2) == 0][0]
        assert hidden.get_width() <= 2 / 3 * c / 64 + 1e-12
    # the book's 14 us per ring step: 2 x 63 x 14 us + 2 x 63/64 x 0.1 s = 0.198639 s
    comm = C.ring_allreduce_time(64, 1.0, 10.0, C.NETWORK_STEP_LATENCY)
    assert comm == pytest.approx(2 * 63 * 14e-6 + 2 * 63 / 64 * 0.1)
    hidden = [b for b in compute_bound.patches if round(b.get_y() + b.get_height() / 2) == 0][0]
    assert hidden.get_width() == pytest.approx(0.8 * comm)
    # one legend under both panels, none inside an axes where it could cover a bar
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)


def test_the_static_figures_draw():
    assert len(ch06.barrier_figure(counts=(2, 8), seeds=3).axes) == 2
    assert len(ch06.lock_figure().lines) >= 5
    assert len(ch06.ring_figure(4).axes) == 4
    ax = ch06.comm_peak_figure()
    marked = [line for line in ax.lines if line.get_marker() == "o"]
    # ring at 14 us (1,502), ring at 1 ms (178), halving-doubling at 1 ms (16,384); halving-doubling at 14 us
    # still rises at 65,536 devices, so it has no marker
    assert [int(m.get_xdata()[0]) for m in marked] == [1502, 178, 16384]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum(("故意放大" in t) or ("exaggerated" in t) for t in labels) == 2


def test_lock_readout_names_this_runs_bound_and_the_noise_free_one():
    explorer = ch06.lock_explorer()
    # without noise c̄₁ = c = 1 - h, so (c̄₁ + h) / h is exactly 1 / h = 5
    calm = explorer.update(critical_share=0.2, noise=0.0)
    assert "这次运行的上限 (c̄₁+h)/h = 5.00" in calm and "无波动时的上限 1/h = 5.0" in calm
    # σ = 1 draws a slow baseline for seed 0 (e^{σ²/2} = 1.65 on average): this run's bound lies above 1 / h
    assert ch06.lock_bound(0.1, 1.0) > 10.0
    assert "无波动时的上限 1/h = 10.0" in explorer.update(critical_share=0.1, noise=1.0)
