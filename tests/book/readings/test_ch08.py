"""hetlab.book.readings.ch08: what the memory widget says about a split."""
import pytest

from hetlab.book.readings.ch08 import memory_verdict


def test_a_pipeline_offers_only_stages_0_and_1():
    text = memory_verdict([115.6e9, 69.7e9, 62.0e9, 54.4e9], 45.6e9, pp=16)
    head, choice = text.split("\n", 1)
    assert head == "每卡合计（GB）：ZeRO-0 115.6，ZeRO-1 69.7，ZeRO-2* 62.0，ZeRO-3* 54.4；其中激活 45.6 GB"
    assert choice.startswith("放得下 80 GB 的可选阶段：ZeRO-1。") and "常驻" in choice and "归约散射" in choice


def test_without_a_pipeline_every_stage_that_fits_is_offered():
    text = memory_verdict([100e9, 79e9, 60e9, 40e9], 10e9, pp=1)
    assert "*" not in text and text.endswith("可选阶段：ZeRO-1、ZeRO-2、ZeRO-3")
    assert memory_verdict([900e9, 400e9, 300e9, 200e9], 40e9, pp=1).endswith("没有哪个可选的 ZeRO 阶段放得下 80 GB")


def test_nothing_fits_under_a_pipeline_still_explains_the_stars():
    text = memory_verdict([300e9, 200e9, 150e9, 100e9], 40e9, pp=4)
    assert "没有哪个可选" in text and "ZeRO-2/3 的账面数在流水线下省不下" in text


@pytest.mark.parametrize("kwargs, match", [({"totals": [1.0, 2.0, 3.0]}, "4 numbers"),
                                           ({"pp": 0}, "pp"), ({"activations": -1.0}, "activations"),
                                           ({"capacity": 0.0}, "capacity")])
def test_bad_input_is_refused_by_name(kwargs, match):
    args = {"totals": [4.0, 3.0, 2.0, 1.0], "activations": 1.0, "pp": 2, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        memory_verdict(args.pop("totals"), args.pop("activations"), **args)
