"""LLM serving as a discrete-event simulation (hetlab.models.serving)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetlab.models import serving as SV
from hetlab.workloads.requests import bursty_requests, skewed_requests

COST = dict(step_base=0.02, step_per_sequence=2e-4, prefill_per_token=5e-5)


def _minimum_latency(prompt, output, cpu_time=0.0):
    # alone on a GPU: pre-processing, one prefill iteration (yields token 1), then output - 1 decode iterations,
    # each with a batch of at least one sequence
    b, s, p = COST["step_base"], COST["step_per_sequence"], COST["prefill_per_token"]
    return cpu_time + (b + s + p * prompt) + (output - 1) * (b + s)


@pytest.mark.parametrize("policy", SV.POLICIES)
def test_one_request_at_a_time_has_the_closed_form_latency(policy):
    # requests 100 s apart never share a GPU: latency = prefill + tokens x decode step
    # = p * prompt + output * (b + s), e.g. 5e-5 * 300 + 40 * 0.0202 = 0.823 s
    prompt, output = np.array([300, 10, 1]), np.array([40, 7, 1])
    r = SV.simulate([0.0, 100.0, 200.0], prompt, output, policy=policy, cpu_time=0.003, **COST)
    expected = 0.003 + 5e-5 * prompt + output * (0.02 + 2e-4)
    assert np.allclose(r.latency, expected)
    assert r.latency[0] == pytest.approx(0.003 + 0.823)
    assert np.allclose(r.admitted, r.arrivals + 0.003)
    assert np.allclose(r.prefilled - r.arrivals, 0.003 + 0.02 + 2e-4 + 5e-5 * prompt)
    # continuous batching streams the first token; request-level batching returns the whole answer at the end
    assert np.allclose(r.ttft, r.prefilled - r.arrivals if policy == "continuous" else r.latency)
    assert r.tpot == pytest.approx(0.0202)


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 40))
    gaps = draw(st.lists(st.floats(0, 0.5), min_size=n, max_size=n))
    prompt = draw(st.lists(st.integers(1, 300), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    return np.cumsum(gaps), np.array(prompt), np.array(output)


@settings(max_examples=40, deadline=None)
@given(workloads(), st.sampled_from(SV.POLICIES), st.integers(1, 3), st.integers(1, 6), st.booleans(),
       st.sampled_from(SV.DISPATCH), st.sampled_from([0.0, 0.05]), st.sampled_from([400, 100_000]))
def test_properties(w, policy, gpus, max_batch, steal, dispatch, wait, kv):
    arrivals, prompt, output = w
    kwargs = dict(policy=policy, gpus=gpus, max_batch=max_batch, steal=steal, dispatch=dispatch, max_wait=wait,
                  kv_capacity=kv, cpu_time=0.001, cpu_workers=2, **COST)
    r = SV.simulate(arrivals, prompt, output, **kwargs)
    assert (r.served == 1).all()                                   # every request served exactly once
    assert ((r.gpu_of >= 0) & (r.gpu_of < gpus)).all()
    assert (r.latency >= _minimum_latency(prompt, output) - 1e-9).all()   # cannot beat running alone
    assert (r.ready >= r.arrivals + 0.001 - 1e-12).all() and (r.first_token >= r.ready).all()
    assert (r.finish >= r.first_token).all() and (r.first_token >= r.prefilled).all()
    assert (r.admitted >= r.ready).all() and (r.prefilled > r.admitted).all()
    assert np.array_equal(r.first_token, r.finish if policy == "static" else r.prefilled)
    assert 0 <= r.busy_fraction <= 1 + 1e-9
    # Little's law as a sample path: the GPUs' batch-size x time integral equals the requests' time in batches
    # (request-level batches hold finished requests until the batch ends, and finish is that end)
    assert r.slot_time.sum() == pytest.approx(np.sum(r.finish - r.admitted), rel=1e-9, abs=1e-12)
    again = SV.simulate(arrivals, prompt, output, **kwargs)
    assert np.array_equal(again.finish, r.finish) and np.array_equal(again.gpu_of, r.gpu_of)   # deterministic


def test_kv_cache_bounds_the_running_batch():
    # 8 requests at once, each needing 100 + 50 = 150 KV tokens; 300 tokens of cache fit 2 at a time
    r = SV.simulate(np.zeros(8), np.full(8, 100), np.full(8, 50), kv_capacity=300, max_batch=8, **COST)
    done = np.sort(r.finish)
    assert len(np.unique(np.round(done, 9))) == 4            # four waves of two
    assert r.mean_batch == pytest.approx(2.0)


def test_continuous_batching_lets_short_requests_leave_early():
    # one long (100 tokens) and one short (2 tokens) request together: request-level batching holds the short
    # one until the long one ends; iteration-level batching returns it after its own 2 tokens
    args = ([0.0, 0.0], [10, 10], [100, 2])
    static = SV.simulate(*args, policy="static", max_batch=2, **COST)
    cont = SV.simulate(*args, policy="continuous", max_batch=2, **COST)
    assert static.finish[1] == static.finish[0] and static.ttft[1] == static.latency[1]
    assert cont.finish[1] < cont.finish[0] / 10
    # both hold the GPU for the long request's 100 iterations: the same busy time, the same tokens
    assert static.busy.sum() == pytest.approx(cont.busy.sum(), rel=0.01)


def test_continuous_batching_beats_request_level_under_a_burst():
    w = bursty_requests(rate=3, duration=300, burst_share=0.1, mean_burst=2.0, seed=0)
    args = dict(gpus=4, max_batch=32, dispatch="least_loaded", **COST)
    static = SV.simulate(w.arrivals, w.prompt, w.output, policy="static", **args)
    cont = SV.simulate(w.arrivals, w.prompt, w.output, policy="continuous", **args)
    assert np.percentile(cont.ttft, 99) < 0.2 < np.percentile(static.ttft, 99)
    assert cont.p99 < static.p99


def test_stealing_rescues_a_skewed_round_robin():
    # every 4th request is long and round robin sends them all to GPU 0, which falls behind
    w = skewed_requests(400, every=4, long_output=200, short_output=20, gap=0.1)
    off = SV.simulate(w.arrivals, w.prompt, w.output, gpus=4, max_batch=8, **COST)
    on = SV.simulate(w.arrivals, w.prompt, w.output, gpus=4, max_batch=8, steal=True, **COST)
    assert off.stolen == 0 and on.stolen > 0
    assert on.p99 < off.p99 / 2
    assert np.bincount(off.gpu_of).tolist() == [100, 100, 100, 100]


def test_dynamic_batching_waits_to_fill_a_batch():
    # two requests 10 ms apart: with max_wait 50 ms they share one batch starting when the second arrives
    r = SV.simulate([0.0, 0.01], [10, 10], [5, 5], policy="static", max_batch=2, max_wait=0.05, **COST)
    assert r.finish[0] == r.finish[1] and np.array_equal(r.admitted, [0.01, 0.01])
    assert r.prefilled[1] - r.arrivals[1] == pytest.approx(0.02 + 2 * 2e-4 + 5e-5 * 20)


def test_cpu_preprocessing_is_a_fifo_queue():
    # one CPU worker, 10 ms per request, three simultaneous arrivals: ready at 10, 20, 30 ms
    r = SV.simulate([0.0, 0.0, 0.0], [1, 1, 1], [1, 1, 1], cpu_time=0.01, cpu_workers=1, gpus=3, **COST)
    assert np.allclose(r.ready, [0.01, 0.02, 0.03])
    r2 = SV.simulate([0.0, 0.0, 0.0], [1, 1, 1], [1, 1, 1], cpu_time=0.01, cpu_workers=3, gpus=3, **COST)
    assert np.allclose(r2.ready, 0.01)


@pytest.mark.parametrize("kwargs, match", [
    (dict(arrivals=[np.nan]), "arrivals"), (dict(arrivals=[np.inf]), "arrivals"), (dict(arrivals=[-1.0]), "arrivals"),
    (dict(arrivals=[]), "arrivals"), (dict(arrivals=None), "arrivals"), (dict(prompt=[0]), "prompt"),
    (dict(output=[1.5]), "output"), (dict(output=[1, 2]), "output"), (dict(policy="fifo"), "policy"),
    (dict(gpus=0), "gpus"), (dict(gpus=True), "gpus"), (dict(max_batch=2.0), "max_batch"),
    (dict(kv_capacity=10), "kv_capacity"), (dict(step_base=0), "step_base"), (dict(cpu_time=-1), "cpu_time"),
    (dict(dispatch="random"), "dispatch"), (dict(steal=1), "steal"), (dict(max_wait=np.inf), "max_wait"),
])
def test_bad_inputs_name_the_parameter(kwargs, match):
    args = dict(arrivals=[0.0], prompt=[10], output=[5])
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        SV.simulate(args.pop("arrivals"), args.pop("prompt"), args.pop("output"), **args)


def test_single_cpu_worker_matches_lindleys_recursion():
    rng = np.random.default_rng(4)
    arrivals = np.sort(rng.exponential(0.01, 500).cumsum())
    r = SV.simulate(arrivals, np.full(500, 5), np.full(500, 2), cpu_time=0.012, cpu_workers=1, gpus=8, **COST)
    free, expected = 0.0, []
    for a in arrivals:                      # the textbook loop: wait for the worker, then serve
        free = max(a, free) + 0.012
        expected.append(free)
    assert np.allclose(r.ready, expected)


def test_single_request_cost_sum_vs_max():
    costs = dict(step_base=0.02, step_per_sequence=0.0, prefill_per_token=1e-3)
    # one request, prompt 100 tokens (0.1 s of compute), output 1 token: one prefill iteration
    add = SV.simulate([0.0], [100], [1], cost="sum", **costs)
    roof = SV.simulate([0.0], [100], [1], cost="max", **costs)
    assert add.ttft[0] == pytest.approx(0.02 + 0.1)
    assert roof.ttft[0] == pytest.approx(0.1)
    # a short prompt is memory-bound under max: the weight read sets the pace
    short = SV.simulate([0.0], [5], [1], cost="max", **costs)
    assert short.ttft[0] == pytest.approx(0.02)


def test_cost_default_is_sum_and_max_never_slower():
    w = bursty_requests(5, 60, seed=3)
    base = SV.simulate(w.arrivals, w.prompt, w.output, gpus=2)
    add = SV.simulate(w.arrivals, w.prompt, w.output, gpus=2, cost="sum")
    assert np.array_equal(base.ttft, add.ttft) and np.array_equal(base.latency, add.latency)
    for policy in SV.POLICIES:
        a = SV.simulate(w.arrivals, w.prompt, w.output, gpus=1, policy=policy, cost="sum")
        m = SV.simulate(w.arrivals, w.prompt, w.output, gpus=1, policy=policy, cost="max")
        assert m.busy_fraction <= a.busy_fraction + 1e-12


def test_cost_rejects_unknown():
    with pytest.raises(ValueError, match="cost must be one of 'sum', 'max'"):
        SV.simulate([0.0], [1], [1], cost="roofline")


def test_latency_percentiles_are_numpys_and_check_q():
    r = SV.simulate(np.linspace(0.0, 0.5, 20), np.full(20, 10), np.full(20, 5), gpus=2, **COST)
    assert r.percentile(0) <= r.p50 <= r.p99 <= r.percentile(100)
    assert r.p99 == np.percentile(r.finish - r.arrivals, 99)
    with pytest.raises(ValueError, match=r"q must be in \[0, 100\]"):
        r.percentile(150)


def test_kv_cache_bytes_counts_a_key_and_a_value_per_layer_head_and_token():
    # Llama-2-7B (32 layers, 32 heads of 128 = hidden 4096), 16-bit: 2 x 32 x 4096 x 2 bytes = 0.5 MiB per token
    assert SV.kv_cache_bytes(layers=32, kv_heads=32, head_dim=128) == 2 * 32 * 4096 * 2 == 2 ** 19
    # Llama-2-70B shares 8 key/value heads among its 64 query heads: an eighth of the multi-head cache
    gqa = SV.kv_cache_bytes(layers=80, kv_heads=8, head_dim=128, tokens=4096)
    assert gqa * 8 == SV.kv_cache_bytes(layers=80, kv_heads=64, head_dim=128, tokens=4096)
    assert gqa == 2 * 80 * 8 * 128 * 2 * 4096 == 1_342_177_280
    # linear in tokens and in sequences; an 8-bit cache is half a 16-bit one
    one = SV.kv_cache_bytes(layers=4, kv_heads=2, head_dim=8)
    assert SV.kv_cache_bytes(layers=4, kv_heads=2, head_dim=8, tokens=10, batch=3) == 30 * one
    assert SV.kv_cache_bytes(layers=4, kv_heads=2, head_dim=8, bytes_per_value=1) == one / 2


@pytest.mark.parametrize("kwargs, match", [
    ({"layers": 0}, "layers"), ({"kv_heads": 2.5}, "kv_heads"), ({"head_dim": -1}, "head_dim"),
    ({"tokens": 0}, "tokens"), ({"batch": True}, "batch"), ({"bytes_per_value": 0}, "bytes_per_value"),
    ({"bytes_per_value": 16}, "bytes_per_value"),
])
def test_kv_cache_bytes_rejects_bad_sizes(kwargs, match):
    args = {"layers": 2, "kv_heads": 2, "head_dim": 4, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        SV.kv_cache_bytes(**args)


def test_throughput_bound_by_hand():
    # 4 GPUs, 32 sequences each: 32 tokens per iteration of 20 ms + 32 x 0.2 ms, plus two prompt tokens to
    # prefill per output token at 0.05 ms: 128 / (0.02 + 0.0064 + 0.0032) = 4324.3 tokens/s
    bound = SV.throughput_bound(max_batch=32, gpus=4, prompt_per_output=2.0, **COST)
    assert bound == pytest.approx(128 / 0.0296)
    with pytest.raises(ValueError, match="prompt_per_output"):
        SV.throughput_bound(max_batch=32, prompt_per_output=-1.0, **COST)


def test_saturated_continuous_batching_reaches_the_throughput_bound():
    # outputs of 50-150 tokens (mean 100, spread so that finishes do not come in cohorts), prompts twice as long,
    # arriving at 100 per second, above the ~43 per second 4 GPUs can finish: in the steady state (finishing
    # between 20 s and 50 s) output tokens flow at the bound, within 0.5%
    i = np.arange(6000)
    output = 50 + (37 * i) % 101
    r = SV.simulate(i * 0.01, 2 * output, output, gpus=4, max_batch=32, **COST)
    window = (r.finish >= 20.0) & (r.finish < 50.0)
    bound = SV.throughput_bound(max_batch=32, gpus=4, prompt_per_output=2.0, **COST)
    assert r.output[window].sum() / 30.0 == pytest.approx(bound, rel=0.005)
