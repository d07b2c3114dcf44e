"""Claims of chapter 2 (02-concepts) that rest on random graphs or on the stream model, checked beyond the one
case shown."""
import math
from math import inf

import pytest

from hetlab import schedulers as S
from hetlab.devices import identical
from hetlab.schedulers import bounds as WS
from hetlab.tasks import random_dag
from hetlab.workloads.opgraphs import transformer_layer


def list_schedule(durations, edges, P):
    """The chapter's function, as printed in section 2.5."""
    preds = {t: [u for u, v in edges if v == t] for t in durations}
    done, free, todo = {}, [0.0] * P, list(durations)
    while todo:
        j = free.index(min(free))
        ready = [t for t in todo if all(done.get(u, inf) <= free[j] for u in preds[t])]
        if ready:
            todo.remove(ready[0])
            done[ready[0]] = free[j] = free[j] + durations[ready[0]]
        else:
            free[j] = min(f for f in done.values() if f > free[j])
    return max(done.values(), default=0.0)


@pytest.mark.parametrize("mean_degree", [0.0, 1.0, 3.0])
def test_the_chapters_list_schedule_is_the_engine_and_keeps_grahams_bound(mean_degree):
    """(W - D)/P + D is Graham's bound for greedy list scheduling (an idle moment still has the remaining
    critical path running), so every one of these graphs must satisfy it."""
    for seed in range(40):
        g, P = random_dag(25, mean_degree=mean_degree, seed=seed), 1 + seed % 7
        T = list_schedule({t.name: t.work for t in g.tasks}, g.edges, P)
        W, D = WS.work(g), WS.span(g)
        assert max(W / P, D) - 1e-9 <= T <= (W - D) / P + D + 1e-9
        assert T == pytest.approx(S.central_queue(g, identical(P), ready="list").makespan, abs=1e-9)


def test_peak_width_devices_always_reach_the_span_on_twenty_graphs():
    """Section 2.7 on the widget's 20 graphs (P = 1..9). With at least peak-width devices every task starts
    at its earliest time, so T_P = D on all 20 (a theorem). The text calls two things 'most' and 'few':
    after crossing W/D the gain per added device keeps shrinking on most graphs (16 of 20; the review
    ch02-1 recounted the same 4 exceptions, seeds 0, 2, 11, 18), and the first P that reaches D equals the
    peak width on few (7 of 20, also the review's count); the rest reach D earlier."""
    flat = reached = equal = 0
    exceptions = []
    for seed in range(20):
        g = random_dag(16, mean_degree=1.5, work=(5.0, 30.0), seed=seed)
        D, width = WS.span(g), WS.peak_width(g)
        T = [S.earliest_free(g, identical(p)).makespan for p in range(1, 10)]
        gains = [T[p - 2] - T[p - 1] for p in range(max(2, math.ceil(WS.parallelism(g))), 10)]
        shrinking = all(b <= a + 1e-9 for a, b in zip(gains, gains[1:]))
        flat += shrinking
        exceptions += [] if shrinking else [seed]
        reached += T[width - 1] == pytest.approx(D)
        first = next(p for p in range(1, 10) if T[p - 1] <= D + 1e-9)
        assert first <= width
        equal += first == width
    assert reached == 20
    assert flat == 16 and exceptions == [0, 2, 11, 18]
    assert equal == 7


def test_streams_on_one_gpu_do_not_act_like_two_gpus():
    """Two GPUs reach the span; one GPU shared by two streams of GPU-filling kernels takes the whole work;
    kernels that fill half the GPU on two streams take twice the span (two half-speed devices)."""
    layer = transformer_layer(tflops=312.0, bandwidth_tbs=2.039)
    W, D = WS.work(layer), WS.span(layer)
    assert S.earliest_free(layer, identical(2)).makespan == pytest.approx(D)
    assert S.serial(layer, identical(1)).makespan == pytest.approx(W)
    assert S.earliest_free(layer, identical(2, speed=0.5)).makespan == pytest.approx(2 * D)
    assert 1 - D / W == pytest.approx(0.13, abs=0.005)


def test_the_stored_h200_reading_says_what_the_chapter_says():
    """Section 2.6 reads streams.json: products that fill the GPU gain nothing from a second stream (ratio >= 0.95
    in both runs), the small one that leaves SMs idle finishes about a quarter sooner (ratio <= 0.8 in both)."""
    import json
    from importlib.resources import files

    reading = json.loads((files("hetlab") / "data/readings/h200-2026-12-04/streams.json").read_text())
    for run in reading["runs"]:
        big, _, small = run["shapes"]
        assert (big["m"], big["k"], big["n"]) == (2048, 4096, 4096) and big["ratio"] >= 0.95
        assert small["tflops_alone"] < 0.1 * big["tflops_alone"] and small["ratio"] <= 0.8


def _keyed_option(question_id):
    """The text of the option the sealed key marks correct (the letter and '. ' stripped)."""
    from hetlab.book import quiz

    q = quiz.question(question_id)
    (letter,) = quiz.check(question_id, "A").answer
    return next(o.split(". ", 1)[1] for o in q.options if o.startswith(f"{letter}."))


def test_quiz_c02_5_key_is_the_chapters_interval():
    """c02-5: W = 120, D = 30, P = 8. The chapter's two formulas, by hand: lower max(W/P, D) = max(15, 30) = 30,
    upper W/P + D = 45. A key sealed on another letter (round 2 sealed "15 到 45") fails here."""
    W, D, P = 120, 30, 8
    lower, upper = max(W / P, D), W / P + D
    assert _keyed_option("c02-5") == f"{lower:g} 到 {upper:g}" == "30 到 45"


def test_quiz_c02_6_key_is_the_average_parallelism():
    """c02-6: the speed-up T_1/T_P <= W/D = 120/30 = 4 for any P; the stem asks for that ceiling."""
    assert _keyed_option("c02-6").startswith(f"{120 / 30:g} 倍")
