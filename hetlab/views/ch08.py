"""Chapter 8 (DP/MP/PP): pipeline timelines."""
from __future__ import annotations

import numpy as np

from .. import formulas as F
from .. import plotting as P
from .. import simulators as sim
from ..widgets import Explorer, dropdown, int_slider, slider

__all__ = ['pipeline']


def pipeline() -> Explorer:
    """Pipeline parallel timeline: stages, micro-batches, GPipe or 1F1B, and one slow stage."""
    def draw(ax, stages: int, micro_batches: int, method: str, slow: float) -> str:
        times = np.ones(stages)
        times[stages // 2] *= slow
        s = sim.pipeline_schedule(times, micro_batches, method=method).validate()
        P.pipeline_timeline(s, ax)
        formula = F.gpipe_bubble_fraction(stages, micro_batches)
        return (f"period max t_i = {F.pipeline_period(times):.2f}, bubble {s.info['bubble_fraction']:.3f} "
                f"(equal stages: (p-1)/(m+p-1) = {formula:.3f}), peak activations {max(s.info['peak_activations'])}")

    return Explorer(draw, {"stages": int_slider("stages", 1, 8, 4),
                           "micro_batches": int_slider("micro-batches", 1, 16, 8),
                           "method": dropdown("method", ["gpipe", "1f1b"]),
                           "slow": slider("slow stage x", 1.0, 3.0, 0.25, 1.0)}, figsize=(8, 3.2))


#: (chapter, factory) for each widget of this module.
VIEWS = [(8, pipeline)]
