"""Chapter 8's views (hetlab.book.views.ch08): the static figures and the memory widget's refusals and marks."""
from hetlab.book.views import ch08


def test_static_figures_draw():
    for fig in [ch08.pipeline_pair_figure(4, 6), ch08.allreduce_figure(), ch08.memory_figure(), ch08.tp_split_figure()]:
        assert fig.axes


def test_memory_widget_says_when_layers_or_heads_do_not_split():
    explorer = ch08.memory_explorer()
    text = explorer.update(model="13B", tp=1, pp=16)          # 40 layers over 16 stages
    assert "40 层" in text and "PP 16" in text and not explorer.axes.patches
    assert "ZeRO-0" in explorer.update(model="70B", pp=16)    # 80 layers: 5 per stage


def test_memory_widget_marks_zero_2_and_3_under_a_pipeline():
    explorer = ch08.memory_explorer()
    text = explorer.update(model="70B", dp=8, tp=1, pp=16)
    hatched = {round(p.get_y() + p.get_height() / 2) for p in explorer.axes.patches if p.get_hatch()}
    assert hatched == {2, 3}                                     # the ZeRO-2 and ZeRO-3 rows, all four parts
    assert "可选阶段：ZeRO-1。" in text and "省不下" in text
    labels = [t.get_text() for t in explorer.axes.get_yticklabels()]
    assert labels == ["ZeRO-0", "ZeRO-1", "ZeRO-2*", "ZeRO-3*"]
    explorer.update(pp=1)                                        # no pipeline: nothing is marked
    assert not any(p.get_hatch() for p in explorer.axes.patches)


def test_memory_widget_reads_out_the_verdict_on_its_rows():
    from hetlab.book.readings.ch08 import memory_verdict
    from hetlab.models import training as T

    explorer = ch08.memory_explorer()
    text = explorer.update(model="13B", dp=8, tp=1, pp=1, recompute="完全重计算", micro_batch=8)
    rows = [T.memory_per_device(13e9, dp=8, zero_stage=z, layers=40, hidden=5120, heads=40, sequence=2048,
                                micro_batch=8, recompute="full") for z in range(4)]
    assert text == memory_verdict([r["total"] for r in rows], rows[0]["activations"], pp=1)
    assert "ZeRO-1 87.8" in text and text.endswith("可选阶段：ZeRO-2、ZeRO-3")   # the recomputed layer counts


def test_pipeline_widget_names_its_slow_stage_and_the_time_per_micro_batch():
    explorer = ch08.pipeline_explorer()
    text = explorer.update(stages=2, micro_batches=4, method="1F1B", slow=2.0)
    assert text.startswith("第 1 段每个微批次 t = 6.00（前向 + 反向）")     # p = 2: stage p // 2 is the last one
    assert explorer.axes.get_xlabel().startswith(("时间（前向 = 1", "time (forward"))
    assert explorer.update(stages=4, slow=1.0).startswith("第 2 段每个微批次 t = 3.00")
    # the figure's title names the slow stage (figure 8-5 has no caption on the website's static copy of the widget)
    explorer.update(stages=4, micro_batches=8, method="1F1B", slow=2.0)
    assert explorer.axes.get_title().startswith(("1F1B：第 2 段耗时是其他段的 2 倍", "1F1B: stage 2 takes 2x as long"))
