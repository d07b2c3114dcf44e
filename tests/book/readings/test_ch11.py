"""hetlab.book.readings.ch11: the widget's readout sentence."""
import pytest

from hetlab import schedulers as S
from hetlab.book.readings.ch11 import POLICY_DEFINITIONS, baseline_report, policy_readout
from hetlab.devices import Device, identical, kitchen
from hetlab.workloads import article_tasks


def _kitchen(gpu):
    return [Device(d.name, d.kind, gpu if d.name == "GPU" else d.speed) for d in kitchen()]


def test_readout_at_gpu_40_by_hand():
    # t5 ties to the CPU at 1.0 and ends at 3.5; CPU alone 11.4 -> 3.26x, GPU alone 114/40 = 2.85 -> 0.81x.
    devices = _kitchen(40.0)
    run = S.article_demo(article_tasks(), devices)
    best = S.optimal(article_tasks(), devices)
    text = policy_readout("article_demo", "演示程序", run, best)
    assert "GPU 速度 40" in text and "完工时间 3.500" in text
    assert "3.26x（以 CPU 串行为基线）" in text and "0.81x（以最快的 GPU 串行为基线）" in text
    assert text.endswith(POLICY_DEFINITIONS["article_demo"])


def test_readout_names_the_npu_when_it_is_fastest():
    # GPU 10 < NPU 15: the second baseline is the NPU alone, 114/15 = 7.6 over 4.3 = 1.77x.
    devices = _kitchen(10.0)
    text = policy_readout("article_demo", "演示程序", S.article_demo(article_tasks(), devices),
                          S.optimal(article_tasks(), devices))
    assert "1.77x（以最快的 NPU 串行为基线）" in text


def test_readout_rejects_bad_input():
    run = S.article_demo(article_tasks(), kitchen())
    with pytest.raises(ValueError, match="policy"):
        policy_readout("nope", "x", run, run)
    with pytest.raises(TypeError, match="run"):
        policy_readout("lpt", "LPT", 1.0, run)
    other = S.lpt(article_tasks(), identical(3))
    with pytest.raises(ValueError, match="best"):
        policy_readout("lpt", "LPT", run, other)
    with pytest.raises(ValueError, match="run"):
        policy_readout("lpt", "LPT", other, other)


def test_baseline_report_has_chinese_headers_and_the_article_numbers():
    # the article's run: 114 units of work, CPU alone 114/10 = 11.40, 11.40 / 2.667 = 4.27x
    text = baseline_report(S.article_demo(article_tasks(), kitchen()))
    head, cpu = text.splitlines()[:2]
    assert "T_serial" not in text and "串行时间" in head
    assert cpu.split()[:3] == ["CPU", "11.40", "4.27x"]
    with pytest.raises(TypeError, match="schedule"):
        baseline_report("CPU")
