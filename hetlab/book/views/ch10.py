"""Chapter 10 (AI scenarios): a 70B training job, LLM serving under a burst, a phone SoC."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from hetlab import plotting as P
from hetlab import schedulers as S
from hetlab.book.readings import ch10 as readings
from hetlab.devices import phone_soc
from hetlab.models import pipelines as FR
from hetlab.models import roofline as RL
from hetlab.models import serving as SV
from hetlab.models import training as T
from hetlab.widgets import Explorer, checkbox, dropdown, int_slider
from hetlab.workloads import segmentation_model
from hetlab.workloads.requests import RequestStream, bursty_requests

__all__ = ['training_explorer', 'serving_explorer', 'phone_explorer', 'serving_workload', 'gpu_npu_split',
           'TRAINING_CASE', 'SERVING', 'SPLIT', 'SPLIT_CUT', 'FRAMES', 'PLACEMENTS', 'clamp_micro_batches', 'COSTS',
           'GPU_COSTS', 'SERVING_MODEL', 'training_figure', 'serving_figure', 'phone_figure', 'POLICY_COLOURS',
           'SEED', 'SEEDS', 'capacity', 'ttft_p99_over_seeds', 'load_sweep', 'steady_ttft_p99', 'load_figure',
           'LOAD_RATES']

#: The seed's training case: a 70B LLaMA-shaped model (80 layers, hidden 8192, 64 heads; Touvron et al. 2023)
#: on 512 A100 80 GB (NVIDIA datasheet: 312 TFLOP/s BF16 dense), 1024 sequences of 2048 tokens per step.
#: Other assumptions are step_time's defaults: 50% of peak at large micro-batches, NVLink 300 GB/s within a
#: node of 8, 25 GB/s per GPU between nodes, ZeRO-1, selective recomputation, 1F1B, half of the DP all-reduce
#: hidden behind compute.
TRAINING_CASE = dict(params=70e9, devices=512, global_batch=1024, sequence=2048, layers=80, hidden=8192, heads=64)

#: The served model: a 13B dense decoder (LLaMA 13B shape: 40 layers, hidden 5120; Touvron et al. 2023), 16-bit.
SERVING_MODEL = dict(params=13e9, layers=40, hidden=5120)
#: Its per-iteration costs on one A100 80 GB (312 TFLOP/s BF16 dense, 2.039 TB/s HBM) at 50% MFU for prefill and
#: 60% of the HBM bandwidth for decode, derived by :func:`hetlab.models.roofline.llm_iteration_costs`.
COSTS = RL.llm_iteration_costs(**SERVING_MODEL, mfu=0.5, mbu=0.6)
#: The serving scenario: 4 GPUs with those costs and the KV cache that fits beside the weights, at most 32
#: running sequences, least-loaded dispatch with stealing, tokenisation on 2 CPU workers at 2 ms per request.
GPU_COSTS = dict(step_base=COSTS["step_base"], step_per_sequence=COSTS["step_per_sequence"],
                 prefill_per_token=COSTS["prefill_per_token"], kv_capacity=COSTS["kv_capacity"])
SERVING = dict(gpus=4, max_batch=32, dispatch="least_loaded", steal=True, cpu_time=0.002, cpu_workers=2, **GPU_COSTS)
_RECOMPUTE = {"选择性重计算": "selective", "完全重计算": "full"}


def clamp_micro_batches(wanted: int, dp: int) -> int:
    """The largest micro-batch count not above ``wanted`` that divides the samples per replica."""
    options = T.micro_batch_options(TRAINING_CASE["global_batch"], dp)
    return max(m for m in options if m <= max(1, wanted))


def training_explorer() -> Explorer:
    """Speed-up of the 70B job on 512 GPUs against the number of micro-batches, for a chosen TP x PP."""
    def draw(ax, tp: int, pp: int, micro_batches: int, recompute: str) -> str:
        dp = TRAINING_CASE["devices"] // (tp * pp)
        options = T.micro_batch_options(TRAINING_CASE["global_batch"], dp)
        runs = [T.step_time(**TRAINING_CASE, dp=dp, tp=tp, pp=pp, micro_batches=m, recompute=_RECOMPUTE[recompute])
                for m in options]
        ms = np.array(options)
        speed = np.array([r.speedup for r in runs])
        ok = np.array([r.feasible for r in runs])
        ax.plot(ms, speed, color="0.6", lw=1)
        ax.plot(ms[ok], speed[ok], "o", color="#4C72B0", label=P.label("可行", "feasible"))
        if (~ok).any():
            ax.plot(ms[~ok], speed[~ok], "x", color="crimson", ms=8, label=P.label("显存放不下", "does not fit"))
        m = clamp_micro_batches(micro_batches, dp)
        per_replica = TRAINING_CASE["global_batch"] // dp
        note = "" if m == micro_batches else f"（m 须整除每副本的 {per_replica} 个样本，取 {m}）"
        if not runs[options.index(m)].feasible and ok.any():
            # clamp to the feasible micro-batch count nearest to the one asked for
            m = min(ms[ok], key=lambda k: (abs(np.log2(k / m)), -k))
            note += f"（该 m 显存放不下，改取最近的可行值 {m}）"
        chosen = runs[options.index(int(m))]
        ax.plot([m], [chosen.speedup], "o", mfc="none", mec="black", ms=13, label=P.label("当前选择", "current choice"))
        ax.axhline(40, color="0.4", ls=":", lw=1, label=P.label("案例中的“约 40 倍”", "the case's 40x"))
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 512)
        ax.set_xlabel(P.label("微批次数 m（每个数据并行副本）", "micro-batches m per replica"))
        ax.set_ylabel(P.label("加速比（相对假想单卡）", "speed-up over a hypothetical GPU"))
        ax.set_title(P.label(f"70B，512 张 A100：DP {dp} × TP {tp} × PP {pp}，{recompute}",
                             f"70B on 512 A100: DP {dp} x TP {tp} x PP {pp}, {_RECOMPUTE[recompute]}"))
        ax.legend(fontsize=8, loc="upper left")
        if not chosen.feasible:
            return readings.training_summary(chosen) + "；这一切分下任何 m 都放不下，请增大 TP 或 PP，或改用完全重计算"
        return readings.training_summary(chosen) + f"，效率 {chosen.efficiency:.0%}" + note

    return Explorer(draw, {"tp": dropdown("张量并行 TP", [1, 2, 4, 8], 1),
                           "pp": dropdown("流水线段数 PP", [4, 8, 16], 16),
                           "micro_batches": int_slider("微批次数 m（按可行值取整）", 1, 128, 32),
                           "recompute": dropdown("激活重计算", list(_RECOMPUTE), "选择性重计算")},
                    figsize=(7, 3.2))


#: The draw of the burst scenario the chapter shows: of 20 draws (:data:`SEEDS`) at 3 requests per second, this
#: one's TTFT P99 under both policies sits at the median (tests/chapters/test_ch10_claims.py checks it).
SEED = 15
#: The draws over which the chapter states its serving claims.
SEEDS = tuple(range(20))


@lru_cache(maxsize=64)
def serving_workload(rate: int, seed: int = SEED) -> RequestStream:
    """Ten minutes of bursty requests: bursts at 10x the calm rate, 10% of the time, 2 s on average."""
    return bursty_requests(rate, 600.0, burst_factor=10.0, burst_share=0.1, mean_burst=2.0, seed=seed)


def capacity(workload: RequestStream, max_batch: int = 32) -> float:
    """Output tokens per second the scenario's GPUs deliver at most with continuous batching on ``workload``
    (:func:`hetlab.models.serving.throughput_bound` with the workload's prompt-to-output ratio)."""
    costs = {k: v for k, v in GPU_COSTS.items() if k != "kv_capacity"}
    return SV.throughput_bound(max_batch=max_batch, gpus=SERVING["gpus"],
                               prompt_per_output=float(workload.prompt.sum() / workload.output.sum()), **costs)


def ttft_p99_over_seeds(rate: int = 3, seeds=SEEDS, policies=SV.POLICIES, **overrides) -> dict[str, np.ndarray]:
    """TTFT P99 (ms) of each policy on each draw of the burst scenario, ``{"static": [...], "continuous": [...]}``;
    ``overrides`` replace entries of :data:`SERVING` (or add ``cost``)."""
    out: dict[str, list[float]] = {p: [] for p in policies}
    for seed in seeds:
        w = serving_workload(rate, seed)
        for policy in policies:
            r = SV.simulate(w.arrivals, w.prompt, w.output, policy=policy, **{**SERVING, **overrides})
            out[policy].append(float(np.percentile(r.ttft, 99)) * 1e3)
    return {p: np.array(v) for p, v in out.items()}


#: One colour code for the serving figure and widget: red = request-level, blue = continuous batching
#: (solid = TTFT, dashed = whole request, black dotted = 200 ms, grey = P99).
POLICY_COLOURS = {"static": "#C44E52", "continuous": "#4C72B0"}
#: The cumulative shares at which the latency curves are drawn.
_SHARE = np.linspace(0, 1, 300)


@lru_cache(maxsize=512)
def _serving_curves(rate: int, policy: str, max_batch: int, steal: bool) -> tuple[int, np.ndarray, np.ndarray, str]:
    """``(requests, TTFT quantiles in ms, latency quantiles in ms, readout)`` of one setting of the serving
    scenario. The simulation of ten minutes of traffic takes 5-60 ms (benchmarks/bench_serving.py); cached, a
    slider moved back to a setting seen before redraws at the cost of the figure alone
    (benchmarks/bench_widget_latency.py)."""
    w = serving_workload(rate)
    r = SV.simulate(w.arrivals, w.prompt, w.output, policy=policy, **dict(SERVING, max_batch=max_batch, steal=steal))
    ttft, latency = np.quantile(r.ttft, _SHARE) * 1e3, np.quantile(r.latency, _SHARE) * 1e3
    for curve in (ttft, latency):
        curve.setflags(write=False)
    return len(w), ttft, latency, readings.serving_summary(r, capacity(w, max_batch)) + f"，窃取 {r.stolen} 次"


def _latency_cdf_axes(ax, *, longest_ms: float, legend: bool = True) -> None:
    """Axes of the latency CDFs (figure and widget): log milliseconds from 10 ms, the 200 ms target
    as a dotted line and the 0.99 share as a grey line, so each curve's P99 is where it crosses it."""
    from matplotlib.ticker import NullFormatter

    ax.axvline(200, color="0.3", ls=":", lw=1, label="200 ms")
    ax.axhline(0.99, color="0.6", lw=0.6)
    ax.set_xscale("log")
    # Minor ticks carry no label over these four decades; formatting them anyway took a quarter of a redraw.
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(10, longest_ms)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(P.label("毫秒（对数轴）", "ms (log)"))
    ax.set_ylabel(P.label("累计比例", "cumulative share"))
    if legend:
        ax.legend(fontsize=8, loc="lower right")


def serving_explorer() -> Explorer:
    """Time to first token and request latency under a 10x burst, request-level vs continuous batching."""
    art: dict = {}
    names = {"连续批处理": "continuous", "请求级批处理": "static"}

    def draw(ax, rate: int, policy: str, max_batch: int, steal: bool) -> str:
        requests, ttft, lat, readout = _serving_curves(rate, names[policy], max_batch, steal)
        colour = POLICY_COLOURS[names[policy]]
        if not art:
            art["ttft"], = ax.plot(ttft, _SHARE, color=colour, label=P.label("首字延迟 TTFT（实线）", "TTFT (solid)"))
            art["lat"], = ax.plot(lat, _SHARE, color=colour, ls="--",
                                  label=P.label("整个请求的延迟（虚线）", "request latency (dashed)"))
            _latency_cdf_axes(ax, longest_ms=3e5)
            art["legend"] = ax.get_legend().legend_handles[:2]      # the two curves' entries, recoloured below
            ax.set_title("")            # the title's font and place, once: each frame sets its text alone
            # Blitting (Explorer, clear=False): ticks and labels, two thirds of a render, are drawn once. Animated
            # are the artists that change and those painted over them (the 200 ms and 0.99 lines, the frame);
            # the ticks point outwards, off the curves, so a frame equals a full render pixel for pixel. A static
            # artist that changes makes the figure stale, which renders the background again: hence the legend's
            # recoloured entries are animated too, and ax.set_title (it also resets the side titles) is not
            # called per frame.
            for artist in (*ax.lines, *ax.spines.values(), ax.title, ax.get_legend(), *art["legend"]):
                artist.set_animated(True)
        art["ttft"].set_data(ttft, _SHARE)
        art["lat"].set_data(lat, _SHARE)
        for line in (art["ttft"], art["lat"], *art["legend"]):
            line.set_color(colour)
        ax.title.set_text(P.label(f"{requests} 个请求，4 张 GPU，{policy}，最大批 {max_batch}",
                                  f"{requests} requests, 4 GPUs, {names[policy]}, max batch {max_batch}"))
        return readout

    return Explorer(draw, {"rate": int_slider("平时每秒请求数（突发时 10 倍）", 1, 6, 3),
                           "policy": dropdown("批处理方式", list(names), "连续批处理"),
                           "max_batch": int_slider("最大批", 4, 64, 32, step=4),
                           "steal": checkbox("空闲 GPU 窃取请求", True)}, figsize=(7, 3.2), clear=False)


#: A placement for frame-level pipelining: the GPU takes the first SPLIT_CUT operators (pre-processing and the
#: first encoder blocks) of every frame, the NPU the remaining convolutions, the CPU all control operators.
SPLIT = "GPU 分担编码器前段"
SPLIT_CUT = 18
#: The phone widget's placements: scheduler name (or SPLIT) -> what the learner sees.
PLACEMENTS = {"by_affinity": "按亲和性", "eft": "EFT", "heft": "HEFT", "work_stealing": "工作窃取", SPLIT: SPLIT}
#: Frames in the pipelined view of the phone widget.
FRAMES = 10


def gpu_npu_split() -> dict[str, str]:
    """The chapter's split placement (:data:`SPLIT`): task name -> device of the segmentation model."""
    graph = segmentation_model()
    return FR.split_placement(graph, {"conv": "GPU", "image": "GPU", "control": "CPU"},
                              {"conv": "NPU", "image": "NPU", "control": "CPU"}, SPLIT_CUT)


@lru_cache(maxsize=16)
def _phone(policy: str):
    graph, devices = segmentation_model(), phone_soc()
    cpu = S.serial(graph, devices, device="CPU")
    if policy == SPLIT:
        return FR.stream(graph, devices, gpu_npu_split(), 1).validate(), cpu
    return S.POLICIES[policy](graph, devices).validate(), cpu


def _chinese_legend(ax):
    from matplotlib.patches import Patch

    kinds = [("control", "控制"), ("conv", "卷积"), ("image", "图像处理")]
    ax.legend(handles=[Patch(color=P.KIND_COLOURS[k], label=P.label(zh, k)) for k, zh in kinds],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def phone_explorer() -> Explorer:
    """The 120-operator segmentation model on a phone SoC: one frame, or ten frames pipelined."""
    def draw(ax, policy: str, pipelined: bool) -> str:
        s, cpu = _phone(policy)
        name = PLACEMENTS.get(policy, policy)
        graph, devices = segmentation_model(), phone_soc()
        placement = gpu_npu_split() if policy == SPLIT else s
        if pipelined:
            shown = FR.stream(graph, devices, placement, FRAMES)
            title = P.label(f"{name}，{FRAMES} 帧流水：{shown.makespan:.1f} ms",
                            f"{S.POLICY_LABELS.get(policy, policy)}, {FRAMES} frames pipelined: "
                            f"{shown.makespan:.1f} ms")
        else:
            shown = s
            title = P.label(f"{name}：每帧 {s.makespan:.1f} ms",
                            f"{S.POLICY_LABELS.get(policy, policy)}: {s.makespan:.1f} ms per frame")
        P.gantt(shown, ax, show_names=False, title=title, xlabel=P.label("时间（毫秒）", "time (ms)"))
        _chinese_legend(ax)
        power = s.energy / s.makespan
        busy = "，".join(f"{d.name} {b:.2f}" for d, b in zip(s.devices, s.busy))
        text = (f"{name}：单帧 {s.makespan:.2f} ms（{1000 / s.makespan:.1f} 帧/秒，"
                f"纯 CPU 的 {s.speedup(cpu):.1f} 倍），平均功耗 {power:.2f} W；每帧各处理器忙碌（ms）：{busy}")
        if pipelined:
            text += f"；{FRAMES} 帧流水共 {shown.makespan:.2f} ms（平均每帧 {shown.makespan / FRAMES:.2f} ms）"
        return text

    return Explorer(draw, {"policy": dropdown("放置方式", [(v, k) for k, v in PLACEMENTS.items()], "heft"),
                           "pipelined": checkbox("连续 10 帧流水", False)}, figsize=(8, 2.6))


def training_figure(tp: int = 8, pp: int = 16, recompute: str = "选择性重计算", micro_batches: int | None = None):
    """Static copy of the training widget's figure (speed-up against m) for one TP x PP; the circled point is
    ``micro_batches``, by default the fastest feasible one."""
    e = training_explorer()
    if micro_batches is None:
        dp = TRAINING_CASE["devices"] // (tp * pp)
        runs = [T.step_time(**TRAINING_CASE, dp=dp, tp=tp, pp=pp, micro_batches=m, recompute=_RECOMPUTE[recompute])
                for m in T.micro_batch_options(TRAINING_CASE["global_batch"], dp)]
        micro_batches = max((r for r in runs if r.feasible), key=lambda r: r.speedup, default=runs[-1]).micro_batches
    ax = P.new_axes(figsize=(7, 3.2))
    e.draw(ax, **dict(e.values, tp=tp, pp=pp, recompute=recompute, micro_batches=micro_batches))
    return ax.figure


def serving_figure(rate: int = 3):
    """TTFT and request-latency CDFs of request-level and continuous batching under the 10x burst scenario."""
    ax = P.new_axes(figsize=(7.5, 3.4))
    for policy, zh in [("static", "请求级批处理"), ("continuous", "连续批处理")]:
        colour = POLICY_COLOURS[policy]
        requests, ttft, latency, _ = _serving_curves(rate, policy, SERVING["max_batch"], SERVING["steal"])
        ax.plot(ttft, _SHARE, color=colour, label=P.label(f"{zh}：首字延迟", f"{policy}: TTFT"))
        ax.plot(latency, _SHARE, color=colour, ls="--", label=P.label(f"{zh}：整个请求", f"{policy}: request"))
    _latency_cdf_axes(ax, longest_ms=1e5, legend=False)
    ax.set_title(P.label(f"{requests} 个请求、10 倍突发、4 张 GPU：延迟的累计分布\n"
                         "（灰色横线：累计比例 0.99，与各曲线的交点即 P99）",
                         f"{requests} requests, 10x bursts, 4 GPUs: latency CDF"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return ax.figure


#: Offered loads (requests per second, Poisson) of the load sweep, and its horizon and steady-state window (s).
LOAD_RATES = (4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48)
_LOAD_HORIZON, _LOAD_WINDOW = 90.0, (15.0, 90.0)
_OUTPUT_MEAN = 100.0        # bursty_requests' mean output length (tokens)


@lru_cache(maxsize=4)
def load_sweep(seed: int = 1) -> dict[str, np.ndarray]:
    """Steady load at each of :data:`LOAD_RATES` for 90 s (prompt and output lengths as in the burst scenario):
    per policy, the output tokens per second of the requests finishing between 15 s and 90 s (the steady state,
    without the start and the drain) and the TTFT P99 (ms); ``"bound"`` is :func:`capacity` of each load."""
    out: dict[str, list[float]] = {"rate": [], "bound": []}
    lo, hi = _LOAD_WINDOW
    for rate in LOAD_RATES:
        w = bursty_requests(rate, _LOAD_HORIZON, burst_share=0.0, seed=seed)
        out["rate"].append(rate)
        out["bound"].append(capacity(w))
        for policy in SV.POLICIES:
            r = SV.simulate(w.arrivals, w.prompt, w.output, policy=policy, **SERVING)
            steady = (r.finish >= lo) & (r.finish < hi)
            out.setdefault(f"{policy}_tokens", []).append(float(r.output[steady].sum() / (hi - lo)))
            out.setdefault(f"{policy}_ttft", []).append(float(np.percentile(r.ttft, 99)) * 1e3)
    result = {k: np.array(v) for k, v in out.items()}
    # the knee: the bound in requests per second (tokens per second over the mean output length)
    result["knee"] = np.array(float(np.mean(result["bound"])) / _OUTPUT_MEAN)
    return result


def steady_ttft_p99(rate: float, seeds=SEEDS, policy: str = "continuous") -> np.ndarray:
    """TTFT P99 (ms) of ``policy`` under the steady load of figure 10-2 at ``rate`` requests/s, one value per seed:
    the figure is one draw, this is the spread over many."""
    out = []
    for seed in seeds:
        w = bursty_requests(rate, _LOAD_HORIZON, burst_share=0.0, seed=seed)
        r = SV.simulate(w.arrivals, w.prompt, w.output, policy=policy, **SERVING)
        out.append(float(np.percentile(r.ttft, 99)) * 1e3)
    return np.array(out)


def load_figure(seed: int = 1):
    """Throughput (left) and TTFT P99 (right) against a steady offered load, request-level vs continuous batching,
    with the throughput bound."""
    import matplotlib.pyplot as plt

    P.use_cjk_font()
    sweep = load_sweep(seed)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    for policy, zh in [("static", "请求级批处理"), ("continuous", "连续批处理")]:
        colour = POLICY_COLOURS[policy]
        left.plot(sweep["rate"], sweep[f"{policy}_tokens"], "o-", color=colour, label=P.label(zh, policy))
        right.plot(sweep["rate"], sweep[f"{policy}_ttft"], "o-", color=colour, label=P.label(zh, policy))
    left.plot(sweep["rate"], sweep["bound"], ls="--", color="0.3", label=P.label("吞吐上限", "throughput bound"))
    for ax in (left, right):
        ax.axvline(float(sweep["knee"]), color="0.6", ls="-.", lw=1,
                   label=P.label(f"上限 ÷ 平均输出 ≈ {float(sweep['knee']):.0f} 请求/秒", "bound / mean output"))
    left.set_xlabel(P.label("到达率（请求/秒）", "offered load (requests/s)"))
    left.set_ylabel(P.label("稳态吞吐（词元/秒）", "steady throughput (tokens/s)"))
    left.set_ylim(0, 4000)
    left.legend(fontsize=8, loc="lower right")
    left.set_title(P.label("吞吐：连续批处理贴着上限饱和", "throughput"), fontsize=10)
    right.axhline(200, color="0.3", ls=":", lw=1, label="200 ms")
    right.set_yscale("log")
    right.set_xlabel(P.label("到达率（请求/秒）", "offered load (requests/s)"))
    right.set_ylabel(P.label("首字延迟 P99（毫秒，对数轴）", "TTFT P99 (ms, log)"))
    right.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 0.22))
    right.set_title(P.label("首字延迟：拐点之前排队已在变长", "time to first token"), fontsize=10)
    return fig


def _frame_blocks(schedule, gap: float = 0.05):
    """Per device, the busy intervals of each frame (tasks named "k:name"), merged across gaps < ``gap`` ms."""
    runs: dict = {}
    for i, task in enumerate(schedule.graph.tasks):
        key = (int(schedule.device_of[i]), int(task.name.split(":", 1)[0]))
        runs.setdefault(key, []).append((float(schedule.start[i]), float(schedule.end[i])))
    blocks = []
    for (device, frame), spans in runs.items():
        spans.sort()
        lo, hi = spans[0]
        for a, b in spans[1:]:
            if a - hi > gap:
                blocks.append((device, frame, lo, hi))
                lo = a
            hi = max(hi, b)
        blocks.append((device, frame, lo, hi))
    return blocks


def phone_figure(frames: int = FRAMES):
    """Pipelined frames on the phone: HEFT's placement (top) and the GPU/NPU split (bottom), coloured by frame."""
    import matplotlib.pyplot as plt

    P.use_cjk_font()
    fig, axes = plt.subplots(2, 1, figsize=(8.5, 4.6), layout="constrained", sharex=True)
    graph, devices = segmentation_model(), phone_soc()
    colours = plt.get_cmap("tab10").colors
    for ax, policy in zip(axes, ["heft", SPLIT]):
        placement = gpu_npu_split() if policy == SPLIT else _phone("heft")[0]
        shown = FR.stream(graph, devices, placement, frames)
        blocks = _frame_blocks(shown)
        # blocks under 0.4 ms (CPU control operators, ~0.2 ms a frame) are drawn 0.4 ms wide so they stay
        # visible, but pale and thin, so that a row of them does not read as a busy processor
        for short in (False, True):
            part = [b for b in blocks if (b[3] - b[2] < 0.4) == short]
            ax.barh([len(devices) - 1 - b[0] for b in part], [max(b[3] - b[2], 0.4) for b in part],
                    left=[b[2] for b in part], height=0.25 if short else 0.6, alpha=0.35 if short else 1.0,
                    color=[colours[b[1] % 10] for b in part], edgecolor="white", linewidth=0 if short else 0.4)
        for device, frame, lo, hi in blocks:
            if hi - lo > 4:
                ax.text((lo + hi) / 2, len(devices) - 1 - device, str(frame), ha="center", va="center",
                        fontsize=7, color="white")
        ax.set_yticks(range(len(devices)), [d.name for d in reversed(devices)])
        ax.axvline(shown.makespan, color="black", ls="--", lw=0.8)
        name = PLACEMENTS.get(policy, policy)
        ax.set_title(P.label(f"{name}：{frames} 帧流水共 {shown.makespan:.1f} ms，"
                             f"至少两个处理器同时计算的时间占 {FR.overlap_share(shown):.0%}",
                             f"{S.POLICY_LABELS.get(policy, policy)}: {frames} frames in {shown.makespan:.1f} ms"),
                     fontsize=10)
    axes[1].set_xlabel(P.label("时间（毫秒）；颜色与数字表示第几帧（从 0 起）；虚线 = 最后一帧完成",
                                "time (ms); colour = frame; dashed = last frame done"))
    return fig


#: (chapter, factory) for each widget of this module.
VIEWS = [(10, training_explorer), (10, serving_explorer), (10, phone_explorer)]
