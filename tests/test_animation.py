"""Chapter 1's kernel-free player: matplotlib's to_jshtml with one frame per dispatched dish."""
import re

import pytest

from hetlab.book import views
from hetlab.workloads import article_tasks


def test_player_embeds_one_frame_per_dispatch_and_stays_light():
    player = views.orchestration_player()
    frames = re.findall(r'frames\[(\d+)\] = "data:image/png;base64,', player.html)
    assert player.frames == len(article_tasks()) + 1 == len(frames)          # 8 dishes: frames 0..8
    assert "<script" in player.html and "animation" in player.html           # plays without a kernel
    assert len(player.html) < 400_000, "the player is stored in the notebook; keep it small"
    assert player.widget.data == player.html


def test_player_follows_the_validated_demo_schedule():
    s = views.kitchen_schedule("article_demo")
    assert s.makespan == pytest.approx(8 / 3)        # NPU: t2 (15/15 = 1) then t5 (25/15): 1 + 5/3
    assert s.info["preference_reroutes"] == 0


def test_player_rejects_bad_arguments():
    with pytest.raises(ValueError, match="policy must be one of"):
        views.orchestration_player("HEFT")
    with pytest.raises(ValueError, match="dpi must be in"):
        views.orchestration_player(dpi=5)
    with pytest.raises(TypeError, match="interval must be an integer"):
        views.orchestration_player(interval=0.5)


def test_player_is_self_contained_chinese_and_readable():
    import base64
    import io

    from PIL import Image

    html = views.orchestration_player().html
    assert "http://" not in html and "https://" not in html, "no CDN: the player must work offline"
    assert 'class="fa ' not in html, "no Font Awesome icons (blank without the CDN stylesheet)"
    for english in (">Once<", ">Loop<", ">Reflect<", 'title="Play"', 'title="First frame"'):
        assert english not in html
    for chinese in ("▶\ufe0e 播放", "</svg> 暂停", "</svg> 首帧", "</svg> 末帧", ">播放一次<", ">循环<", ">往返<"):
        assert chinese in html
    assert not any(symbol in html for symbol in "\u23ee\u23f8\u23ed"), "symbols no installed font draws (tofu)"
    data = re.search(r'frames\[0\] = "data:image/png;base64,(.*?)"\n', html, re.S).group(1)
    width, height = Image.open(io.BytesIO(base64.b64decode(data.replace("\\\n", "")))).size
    assert width >= 900 and height >= 300, (width, height)
