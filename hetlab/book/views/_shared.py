"""Pieces the views of several chapters share (chapters 1 and 11): the article's kitchen under any policy,
and the legend of a Gantt chart coloured by each dish's preferred cook."""
from __future__ import annotations

from functools import lru_cache

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.devices import Device, kitchen
from hetlab.workloads import article_tasks


@lru_cache(maxsize=256)
def kitchen_with_gpu(policy: str, gpu_speed: float = 20.0):
    """The article's dishes under ``policy`` on its kitchen with the GPU cook at ``gpu_speed``, validated."""
    devices = [Device(d.name, d.kind, gpu_speed if d.kind == "GPU" else d.speed) for d in kitchen()]
    return S.POLICIES[policy](article_tasks(), devices).validate()


def preference_legend(ax) -> None:
    """Bars are coloured by the dish's *preferred* cook; the row is the cook that actually made it.

    Relabels the legend :func:`plotting.gantt` drew ("CPU" -> "偏好 CPU") in place: cheaper than a new legend.
    """
    legend = ax.get_legend()
    if legend is not None:
        for text in legend.get_texts():
            kind = text.get_text()
            text.set_text(P.label(f"偏好 {kind}", f"prefers {kind}"))
