"""Memory per device and step time of DP x TP x PP, and data-parallel steps (hetlab.models.training)."""
import math

import numpy as np
import pytest

from hetlab.models import training as T


# Rajbhandari et al. 2020 (ZeRO, SC'20), Figure 1: Psi = 7.5e9 parameters, K = 12, N_d = 64, GB = 1e9 bytes.
# Baseline (2 + 2 + K) Psi = 120 GB; P_os: 2 Psi + 2 Psi + K Psi / 64 = 31.4 GB;
# P_os+g: 2 Psi + (2 + K) Psi / 64 = 16.6 GB; P_os+g+p: (2 + 2 + K) Psi / 64 = 1.875 ~ 1.9 GB.
@pytest.mark.parametrize("stage, paper_gb", [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_paper_figure_1(stage, paper_gb):
    m = T.memory_per_device(7.5e9, dp=64, zero_stage=stage, activations=False)
    assert round(m["total"] / 1e9, 1) == paper_gb
    assert m["activations"] == 0 and m["total"] == pytest.approx(m["params"] + m["grads"] + m["optimizer"])


def test_zero_stages_shard_exactly_the_states_they_name():
    base = T.memory_per_device(1e9, dp=8, activations=False)
    assert (base["params"], base["grads"], base["optimizer"]) == (2e9, 2e9, 12e9)
    s1 = T.memory_per_device(1e9, dp=8, zero_stage=1, activations=False)
    s2 = T.memory_per_device(1e9, dp=8, zero_stage=2, activations=False)
    s3 = T.memory_per_device(1e9, dp=8, zero_stage=3, activations=False)
    assert (s1["params"], s1["grads"], s1["optimizer"]) == (2e9, 2e9, 1.5e9)
    assert (s2["params"], s2["grads"], s2["optimizer"]) == (2e9, 0.25e9, 1.5e9)
    assert (s3["params"], s3["grads"], s3["optimizer"]) == (0.25e9, 0.25e9, 1.5e9)


def test_tensor_and_pipeline_parallel_divide_the_model():
    whole = T.memory_per_device(8e9, activations=False)["total"]
    assert T.memory_per_device(8e9, tp=2, pp=4, activations=False)["total"] == pytest.approx(whole / 8)


def test_activation_formulas_of_korthikanti_2022():
    s, b, h, a = 2048, 1, 4096, 32
    sbh = s * b * h
    # Table 2 of the paper: 34 + 5as/h without parallelism; 10 + 24/t + 5as/(ht) with TP; /t with SP.
    assert T.activation_memory(sequence=s, micro_batch=b, hidden=h, heads=a) == sbh * (34 + 5 * a * s / h)
    assert T.activation_memory(sequence=s, micro_batch=b, hidden=h, heads=a, tp=8) == pytest.approx(
        sbh * (10 + 24 / 8 + 5 * a * s / (h * 8)))
    assert T.activation_memory(sequence=s, micro_batch=b, hidden=h, heads=a, tp=8, sequence_parallel=True) == \
        pytest.approx(sbh * (34 + 5 * a * s / h) / 8)
    assert T.activation_memory(sequence=s, micro_batch=b, hidden=h, heads=a, recompute="selective") == sbh * 34
    assert T.activation_memory(sequence=s, micro_batch=b, hidden=h, heads=a, recompute="full") == 2 * sbh


def test_activations_held_per_pipeline_schedule():
    shape = dict(layers=8, hidden=1024, sequence=512, heads=16, micro_batch=2, activations=True)
    one = T.activation_memory(sequence=512, micro_batch=2, hidden=1024, heads=16)
    # 4 stages of 2 layers; GPipe keeps all 16 micro-batches, 1F1B at most p = 4 on the first stage.
    gpipe = T.memory_per_device(1e8, pp=4, micro_batches=16, schedule="gpipe", **shape)["activations"]
    onef = T.memory_per_device(1e8, pp=4, micro_batches=16, schedule="1f1b", **shape)["activations"]
    inter = T.memory_per_device(1e8, pp=4, micro_batches=16, schedule="interleaved", chunks=2,
                                **shape)["activations"]
    assert gpipe == pytest.approx(one * 2 * 16) and onef == pytest.approx(one * 2 * 4)
    assert inter == pytest.approx(one * 2 * 4 * (1 + 3 / 8))


def test_ring_allreduce_is_reduce_scatter_plus_all_gather():
    r = T.ring_allreduce(8, 1e9, 25e9, 1e-5)
    # each phase: 7/8 GB over 25 GB/s + 7 latencies = 35 ms + 70 us
    assert r["reduce_scatter"] == pytest.approx(0.035 + 7e-5) and r["all_gather"] == r["reduce_scatter"]
    assert r["total"] == pytest.approx(2 * r["reduce_scatter"])
    # at large N the bandwidth term saturates at 2 M / B while the latency term keeps growing
    big = T.ring_allreduce(10_000, 1e9, 25e9, 1e-5)
    assert big["bandwidth_term"] < 2 * 1e9 / 25e9 and big["latency_term"] == pytest.approx(2 * 9999 * 1e-5)
    assert T.ring_allreduce(1, 1e9, 25e9, 1e-5)["total"] == 0


def test_bubble_fractions_of_narayanan_2021():
    assert T.bubble_fraction(4, 8, "gpipe") == pytest.approx(3 / 11)
    assert T.bubble_fraction(4, 8, "1f1b") == T.bubble_fraction(4, 8, "gpipe")
    # interleaved: bubble (p-1)/v stage times against m of work -> (p-1)/(vm+p-1)
    assert T.bubble_fraction(4, 8, "interleaved", chunks=2) == pytest.approx(3 / 19)
    with pytest.raises(ValueError, match="chunks"):
        T.bubble_fraction(4, 8, "1f1b", chunks=2)


def _case(**kw):
    args = dict(devices=512, dp=32, tp=1, pp=16, global_batch=1024, micro_batches=32, sequence=2048, layers=80,
                hidden=8192, heads=64)
    args.update(kw)
    return T.step_time(70e9, **args)


def test_step_time_parts_add_up():
    r = _case()
    # one micro-batch time = (compute + tp) / m; the step lasts (m + p - 1) of them plus exposed DP comm
    assert r.time == pytest.approx((r.compute + r.tp_comm) * (32 + 15) / 32 + r.dp_exposed)
    assert r.bubble / (r.compute + r.tp_comm + r.bubble) == pytest.approx(15 / 47)
    assert r.tp_comm == 0 and 0 <= r.dp_exposed <= r.dp_comm
    assert r.speedup == pytest.approx(512 * r.efficiency) and 0 < r.efficiency < 1


def test_hand_computed_single_device_step():
    # 1 device, 1e9 params, one micro-batch of 8 x 1024 = 8192 tokens: 6 * 1e9 * 8192 FLOPs at
    # 100 TFLOP/s * 0.5 * 8192 / (8192 + 256)
    r = T.step_time(1e9, devices=1, dp=1, global_batch=8, micro_batches=1, sequence=1024, layers=4, hidden=1024,
                    heads=8, peak_flops=100e12, peak_efficiency=0.5, half_tokens=256.0, device_memory=1e12)
    assert r.time == pytest.approx(6 * 1e9 * 8192 / (100e12 * 0.5 * 8192 / 8448))
    assert r.feasible and r.bubble == 0 and r.dp_comm == 0


def test_small_micro_batches_run_less_efficiently_and_bubble_shrinks_with_more_of_them():
    slow = _case(recompute="full", micro_batches=8)
    fast = _case(recompute="full", micro_batches=32)
    assert fast.time < slow.time
    # with one sample per micro-batch vs 4: kernel efficiency falls, so compute grows
    assert fast.compute > slow.compute


def test_overlap_is_capped_by_compute():
    r = T.step_time(1e9, devices=64, dp=64, global_batch=64, sequence=16, layers=4, hidden=512, heads=8,
                    inter_bandwidth=1e9, overlap=1.0)
    assert r.dp_exposed == pytest.approx(r.dp_comm - r.compute) and r.dp_exposed > 0


def test_infeasible_configurations_are_flagged_or_refused():
    assert not _case(micro_batches=8).feasible            # 110 GB of activations and states per A100
    assert _case(micro_batches=8).limits == ("memory",)
    wide = _case(dp=2, tp=16, micro_batches=1)           # 16-way tensor parallelism on 8-GPU nodes
    assert not wide.feasible and "tp_across_nodes" in wide.limits
    with pytest.raises(ValueError, match="micro_batches must be in \\[1, 32\\]"):
        _case(micro_batches=64)                            # 32 samples per replica cannot make 64 micro-batches
    with pytest.raises(ValueError, match="divide"):
        _case(micro_batches=24)
    with pytest.raises(ValueError, match="dp \\* tp \\* pp must equal devices"):
        _case(dp=16)
    with pytest.raises(ValueError, match="global_batch must be a multiple of dp"):
        _case(global_batch=1000)
    assert _case().feasible and _case().limits == ()


def test_training_step_record_checks_its_limits():
    r = _case()
    fields = {f: getattr(r, f) for f in r.__dataclass_fields__}
    assert T.TrainingStep(**fields) == r
    with pytest.raises(ValueError, match="limits must be \\(\\'memory\\',\\)"):
        T.TrainingStep(**dict(fields, device_memory=1e9))      # does not fit in 1 GB, yet no limit listed
    with pytest.raises(ValueError, match="limits must be a tuple"):
        T.TrainingStep(**dict(fields, limits=("heat",)))


@pytest.mark.parametrize("layers, heads, tp, pp, names", [
    (80, 64, 1, 16, None), (80, 64, 8, 16, None),
    (40, 40, 1, 16, ("layers = 40", "pp = 16")),          # LLaMA 13B's 40 layers cannot fill 16 equal stages
    (80, 40, 16, 1, ("heads = 40", "tp = 16")),           # 40 heads do not split over 16 ranks
])
def test_tensor_and_pipeline_splits_must_divide_heads_and_layers(layers, heads, tp, pp, names):
    shape = dict(layers=layers, hidden=128 * heads, heads=heads, sequence=2048)      # head dimension 128
    calls = [lambda: T.memory_per_device(70e9, dp=1, tp=tp, pp=pp, **shape),
             lambda: T.step_time(70e9, devices=tp * pp, dp=1, tp=tp, pp=pp, global_batch=8, **shape)]
    for call in calls:
        if names is None:
            call()
            continue
        with pytest.raises(ValueError) as info:
            call()
        assert all(n in str(info.value) for n in names)
    if heads % tp:
        with pytest.raises(ValueError, match="heads = 40 and tp = 16"):
            T.activation_memory(sequence=2048, micro_batch=1, hidden=128 * heads, heads=heads, tp=tp)


def test_heads_must_split_the_hidden_size():
    # 33 heads of 4096 / 33 = 124.1 dimensions: no such attention (the review's case)
    with pytest.raises(ValueError, match="hidden = 4096 and heads = 33"):
        T.activation_memory(sequence=2048, micro_batch=1, hidden=4096, heads=33)
    with pytest.raises(ValueError, match="hidden"):
        T.memory_per_device(7e9, layers=32, hidden=4100, heads=32, sequence=2048)


def test_bubble_of_one_stage_and_whole_stages():
    assert T.bubble_fraction(1, 8) == 0.0                   # no pipeline, no bubble
    with pytest.raises(TypeError, match="stages"):
        T.bubble_fraction(2.5, 8)


def test_interleaved_schedule_needs_micro_batches_in_groups_of_p():
    # Narayanan et al. 2021, 2.2.2: the interleaved schedule needs m to be a multiple of p
    assert T.bubble_fraction(4, 12, "interleaved", chunks=2) == pytest.approx(3 / 27)
    with pytest.raises(ValueError, match="micro_batches must be a multiple of stages = 4"):
        T.bubble_fraction(4, 6, "interleaved", chunks=2)


def _zero_walk(params, dp, tp, pp, stage, m):
    """Bytes one device sends, walking the step collective by collective (ring: (d-1)/d of the buffer each)."""
    g = w = 2.0 * params / (tp * pp)
    share = (dp - 1) / dp
    sent = 0.0
    for _ in range(m):
        if stage == 3:
            sent += 2 * share * w          # gather the parameters for the forward and again for the backward
        if stage >= 2:
            sent += share * g              # reduce-scatter this micro-batch's gradients into the shard
    if stage <= 1:
        sent += share * g                  # reduce-scatter the accumulated gradients once
        sent += share * (g if stage == 0 else w)   # all-gather: the summed gradients (all-reduce) or parameters
    if stage == 2:
        sent += share * w                  # all-gather the updated parameters
    return sent


@pytest.mark.parametrize("stage", range(4))
@pytest.mark.parametrize("dp, tp, pp, m", [(8, 1, 16, 16), (64, 8, 1, 1), (2, 2, 4, 7), (1, 1, 1, 5)])
def test_zero_traffic_matches_a_collective_by_collective_walk(stage, dp, tp, pp, m):
    got = T.zero_traffic(70e9, dp=dp, tp=tp, pp=pp, zero_stage=stage, micro_batches=m)
    assert got == pytest.approx(_zero_walk(70e9, dp, tp, pp, stage, m), rel=1e-12)


def test_zero_traffic_by_hand_and_the_pipeline_rule():
    # 70B over PP 16: 4.375e9 parameters per stage, 8.75 GB of gradients and of weights; DP 8 sends 7/8 of each
    one = T.zero_traffic(70e9, dp=8, pp=16, zero_stage=1, micro_batches=16)
    assert one == pytest.approx(7 / 8 * 17.5e9)
    assert T.zero_traffic(70e9, dp=8, pp=16, zero_stage=2, micro_batches=16) == pytest.approx(7 / 8 * 17 * 8.75e9)
    assert T.zero_traffic(70e9, dp=8, pp=16, zero_stage=3, micro_batches=16) == pytest.approx(7 / 8 * 48 * 8.75e9)
    # ZeRO paper, section 7: stages 1 and 2 move what data parallelism moves, stage 3 1.5 times that
    base = T.zero_traffic(7.5e9, dp=64)
    assert [T.zero_traffic(7.5e9, dp=64, zero_stage=z) / base for z in range(4)] == pytest.approx([1, 1, 1, 1.5])
    assert T.PIPELINE_ZERO_STAGES == (0, 1)          # DeepSpeed's PipelineEngine asserts zero_stage < 2
    with pytest.raises(ValueError, match="zero_stage must be in \\[0, 3\\]"):
        T.zero_traffic(1e9, dp=2, zero_stage=4)
    with pytest.raises(ValueError, match="micro_batches"):
        T.zero_traffic(1e9, dp=2, micro_batches=0)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 0, None, "7e9", True, 1e20])
def test_params_rejected_with_a_message_naming_it(bad):
    with pytest.raises((ValueError, TypeError), match="params"):
        T.memory_per_device(bad, activations=False)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="zero_stage must be in \\[0, 3\\]"):
        T.memory_per_device(1e9, zero_stage=4, activations=False)
    with pytest.raises(ValueError, match="layers, hidden, sequence, heads"):
        T.memory_per_device(1e9)
    with pytest.raises(TypeError, match="dp"):
        T.memory_per_device(1e9, dp=2.0, activations=False)
    with pytest.raises(ValueError, match="schedule"):
        T.bubble_fraction(4, 8, "zigzag")
    with pytest.raises(ValueError, match="overlap must be in \\[0, 1\\]"):
        _case(overlap=1.5)
    with pytest.raises(ValueError, match="bandwidth"):
        T.ring_allreduce(4, 1.0, math.inf)


def test_micro_batch_options_are_the_divisors_of_samples_per_replica():
    assert T.micro_batch_options(1024, 32) == [1, 2, 4, 8, 16, 32]
    assert T.micro_batch_options(12, 1) == [1, 2, 3, 4, 6, 12]
    for m in T.micro_batch_options(1024, 16):
        assert _case(dp=16, tp=2, micro_batches=m).micro_batch * m == 64
    with pytest.raises(ValueError, match="multiple of dp"):
        T.micro_batch_options(10, 4)


def test_kernel_efficiency_matches_the_chapter_formula():
    assert T.kernel_efficiency(2048) == pytest.approx(0.5 * 2048 / (2048 + 256))
    assert T.kernel_efficiency(4096) > T.kernel_efficiency(2048)
    with pytest.raises(ValueError, match="peak_efficiency"):
        T.kernel_efficiency(10, peak_efficiency=2)


def test_backward_share_default_unchanged_and_caps():
    data_parallel_step = T.data_parallel_step
    base = data_parallel_step(1.0, 64, grad_size=1.0, bandwidth=10.0, latency=1e-4, overlap=0.8)
    same = data_parallel_step(1.0, 64, grad_size=1.0, bandwidth=10.0, latency=1e-4, overlap=0.8, backward_share=1.0)
    capped = data_parallel_step(1.0, 64, grad_size=1.0, bandwidth=10.0, latency=1e-4, overlap=0.8, backward_share=2 / 3)
    assert base == same and capped > base
    comm = 2 * 63 * 1e-4 + 2 * 63 / 64 * 1.0 / 10.0          # ring all-reduce: 2 (n - 1) alpha + 2 (n - 1) / n G / B
    assert capped == pytest.approx(1 / 64 + comm - (2 / 3) / 64, abs=1e-12)
    with pytest.raises(ValueError):
        data_parallel_step(1.0, 8, grad_size=1.0, bandwidth=10.0, overlap=0.5, backward_share=1.5)


def test_data_parallel_step_by_hand():
    # One device: no communication at all.
    assert T.data_parallel_step(2.0, 1, grad_size=1.0, bandwidth=1.0) == pytest.approx(2.0)
    steps = T.data_parallel_step(1.0, np.array([2, 8]), grad_size=1.0, bandwidth=10.0)
    np.testing.assert_allclose(steps, [0.5 + 0.1, 0.125 + 2 * 7 / 8 / 10])
    hidden = T.data_parallel_step(1.0, 8, grad_size=1.0, bandwidth=10.0, overlap=1.0)
    assert hidden == pytest.approx(0.125 + 0.175 - 0.125)   # overlap hides at most the compute time


@pytest.mark.parametrize("call, name", [
    (lambda: T.data_parallel_step(1.0, 2.5, 1.0, 1.0), "n_devices"),
    (lambda: T.data_parallel_step(1.0, 4, math.inf, 1.0), "grad_size"),        # was NaN
])
def test_bad_data_parallel_input_is_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


def test_step_latencies_are_the_books_nvlink_and_network_alphas():
    # a ring all-reduce over n devices pays 2 (n - 1) step latencies: DP over 32 replicas on the network pays
    # 62 x 14 us more than with no latency; TP 8 on NVLink pays 14 x 3.4 us per all-reduce, 4 per layer and
    # micro-batch, 5 layers per stage, m = 128 micro-batches
    from hetlab.communication import NETWORK_STEP_LATENCY, NVLINK_STEP_LATENCY

    assert (NVLINK_STEP_LATENCY, NETWORK_STEP_LATENCY) == (3.4e-6, 14e-6)
    zero = dict(intra_latency=0.0, inter_latency=0.0)
    assert _case().dp_comm - _case(**zero).dp_comm == pytest.approx(62 * 14e-6)
    tp8 = dict(dp=4, tp=8, micro_batches=128)
    assert _case(**tp8).tp_comm - _case(**tp8, **zero).tp_comm == pytest.approx(4 * 5 * 128 * 14 * 3.4e-6)
    assert _case(**tp8).dp_comm - _case(**tp8, **zero).dp_comm == pytest.approx(6 * 14e-6)
    with pytest.raises(ValueError, match="inter_latency"):
        _case(inter_latency=-1e-6)


def test_speedup_baseline_never_recomputes():
    # like for like: the hypothetical single device does 6 x params x tokens FLOPs at 50% of 312 TFLOP/s,
    # whatever the parallel configuration recomputes (the review's 31.8x was 8 x params against 8 x params)
    single = 6 * 70e9 * 1024 * 2048 / (312e12 * 0.5)
    for recompute in ("selective", "full"):
        r = _case(recompute=recompute, micro_batches=2)
        assert r.speedup == pytest.approx(single / r.time)


def test_full_recomputation_holds_one_layer_being_recomputed():
    # DP 32 x PP 16, m = 1 (b = 32): stored layer inputs 2 s b h per layer x 5 layers, plus the layer being
    # recomputed, s b h (34 + 5 a s / h) = 2048 x 32 x 8192 x 114 = 61.2 GB (Korthikanti et al. 2022, eq. 1)
    sbh = 2048 * 32 * 8192
    r = _case(recompute="full", micro_batches=1)
    assert r.memory["activations"] == pytest.approx(5 * 2 * sbh + sbh * (34 + 5 * 64 * 2048 / 8192))
    assert r.memory["activations"] - 5 * 2 * sbh == pytest.approx(61.2e9, rel=1e-3)
    assert not r.feasible and r.memory["total"] == pytest.approx(85.7e9, rel=1e-3)
    assert _case(recompute="full", micro_batches=2).feasible          # b = 16 halves the working set
