"""Chapter 10's readings of a training step and a serving run (hetlab.book.readings.ch10)."""
import pytest

from hetlab.book.readings import ch10 as readings
from hetlab.models import serving as SV
from hetlab.models import training as T


def test_serving_summary_names_the_policy_and_quotes_the_result():
    r = SV.simulate([0.0], [10], [3])
    line = readings.serving_summary(r)
    assert line.startswith("连续批处理") and f"P99 {r.p99 * 1e3:.0f} ms" in line
    assert readings.serving_summary(SV.simulate([0.0], [10], [3], policy="static")).startswith("请求级批处理")
    with pytest.raises(TypeError, match="result"):
        readings.serving_summary("P99")


def test_request_level_per_token_time_is_named_as_including_the_padding_wait():
    # two requests in one batch, 2 and 10 tokens: the short one waits 8 iterations for the long one, so its
    # (finish - prefilled) / (O - 1) is 9 iterations per token, not 1 -- the line must not call it generation time
    r = SV.simulate([0.0, 0.0], [1, 1], [2, 10], policy="static", step_base=0.01, step_per_sequence=0.0,
                    prefill_per_token=0.0)
    line = readings.serving_summary(r)
    assert "每词元平均用时（含填充）" in line
    assert "每词元摊到" not in readings.serving_summary(SV.simulate([0.0], [1], [3]))


def test_serving_summary_gives_throughput_as_a_share_of_the_bound():
    # one request of 10 tokens at 20 ms per iteration: 50 tokens/s, a quarter of a 200 tokens/s bound
    r = SV.simulate([0.0], [10], [10], step_base=0.02, step_per_sequence=0.0, prefill_per_token=0.0)
    assert "50 词元/秒（吞吐上限的 25%）" in readings.serving_summary(r, bound=200.0)
    assert "吞吐上限" not in readings.serving_summary(r)
    with pytest.raises(ValueError, match="bound"):
        readings.serving_summary(r, bound=0.0)


def _case(**kw):
    args = dict(devices=512, dp=32, tp=1, pp=16, global_batch=1024, micro_batches=32, sequence=2048, layers=80,
                hidden=8192, heads=64)
    args.update(kw)
    return T.step_time(70e9, **args)


def test_training_summary_gives_the_step_or_every_reason_it_does_not_fit():
    ok = readings.training_summary(_case())
    assert ok.startswith("DP 32 × TP 1 × PP 16，微批次 32 个（每个 1 样本）：每步") and "不可行" not in ok
    memory = readings.training_summary(_case(micro_batches=8))
    assert "不可行" in memory and "超过显存 80 GB" in memory
    both = readings.training_summary(_case(dp=2, tp=16, micro_batches=1))
    assert "张量并行 16 路超过单节点 8 张卡" in both and both.count("；") == 1
