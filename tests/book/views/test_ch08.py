"""Chapter 8's views (hetlab.book.views.ch08): the static figures and the memory widget's refusals."""
from hetlab.book.views import ch08


def test_static_figures_draw():
    for fig in [ch08.pipeline_pair_figure(4, 6), ch08.allreduce_figure(), ch08.memory_figure()]:
        assert fig.axes


def test_memory_widget_says_when_layers_or_heads_do_not_split():
    explorer = ch08.memory_explorer()
    text = explorer.update(model="13B", tp=1, pp=16)          # 40 layers over 16 stages
    assert "40 层" in text and "PP 16" in text and not explorer.axes.patches
    assert "ZeRO-0" in explorer.update(model="70B", pp=16)    # 80 layers: 5 per stage
