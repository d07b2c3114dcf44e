/* The site's widgets, mounted on the <div class="hetlab-widget"> blocks that scripts/build_site.py writes in place
 * of each notebook widget:
 *   data-mode="live":   the model runs here (models.js) and the figure is drawn as SVG (charts.js);
 *   data-mode="frames": the controls step through positions whose figures were drawn by hetlab at build time;
 *   data-mode="static": one figure and a note (no control is shown that would do nothing).
 * Controls and readouts are in Chinese and mirror the notebook's widget (hetlab.book.views).
 */
(function (root) {
  "use strict";
  const M = () => root.HetlabModels;
  const C = () => root.HetlabCharts;
  const COLOURS = {CPU: "#4C72B0", GPU: "#55A868", NPU: "#C44E52", forward: "#4C72B0", backward: "#DD8452"};

  /** Python's format(x, "g"): 6 significant digits, exponent below 1e-4 and from 1e6. */
  function g(x) {
    if (x === 0) return "0";
    const e = Math.floor(Math.log10(Math.abs(x)));
    if (e < -4 || e >= 6) {
      const [m, ex] = x.toExponential(5).split("e");
      const exp = Number(ex);
      return `${String(Number(m))}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    }
    return String(Number(x.toPrecision(6)));
  }
  const pct = (x, d) => `${(100 * x).toFixed(d)}%`;

  // --- the live widgets: controls, and a render function returning the chart and the readout -----------
  const LIVE = {};

  LIVE.orchestration = {
    controls: [
      {name: "step", label: "已派出的菜", type: "range", min: 0, max: 8, step: 1, value: 8, play: 700},
      {name: "policy", label: "调度策略", type: "select", value: "article_demo",
       options: [["演示调度（最早空闲）", "article_demo"], ["EFT（第 5 章会讲）", "eft"],
                 ["LPT（第 5 章会讲）", "lpt"], ["最优解（第 5 章会讲）", "optimal"]]},
    ],
    render(v) {
      const tasks = M().ARTICLE_TASKS, devices = M().KITCHEN;
      const s = M().POLICIES[v.policy](tasks, devices);
      const order = M().startOrder(s), n = tasks.length, step = v.step;
      const name = this.controls[1].options.find((o) => o[1] === v.policy)[0];
      const shown = order.slice(0, step);
      const done = step ? Math.max(...shown.map((i) => s.end[i])) : 0;
      let title;
      if (step >= n) title = `${name}：${n} 道菜全部派出，完工时间 ${s.makespan.toFixed(2)}`;
      else if (step === 0) title = `${name}：已派出 0/${n} 道菜`;
      else title = `${name}：已派出 ${step}/${n} 道菜，目前最晚出锅于 ${done.toFixed(2)}`;
      const rows = devices.length;
      const bars = shown.map((i) => ({x0: s.start[i], x1: s.end[i], y0: rows - 1 - s.deviceOf[i] - 0.35,
                                      y1: rows - 1 - s.deviceOf[i] + 0.35, color: COLOURS[tasks[i].kind],
                                      text: tasks[i].name, title: `${tasks[i].name}：${s.start[i].toFixed(2)}–${s.end[i].toFixed(2)}`}));
      const last = order[step - 1];   // one dish per frame: the readout names only the newest dispatch
      const text = step === 0 ? `分解：一张大单拆成 ${n} 道互不依赖的菜，还没有派出去` : `分配 + 编排：第 ${step} 道，` +
        `${tasks[last].name}（偏好 ${tasks[last].kind}）→ ${devices[s.deviceOf[last]].name}，${s.start[last].toFixed(2)} 开工`;
      return {text, chart: {
        title, xlabel: "时间（时间单位）", height: 150,
        x: {min: 0, max: s.makespan * 1.02}, bars,
        y: {min: -0.6, max: rows - 0.4, categorical: true,
            ticks: devices.map((d, j) => ({value: rows - 1 - j, label: d.name}))},
        vlines: step ? [{x: done, dash: "5 4", width: 1}] : [],
        legend: ["CPU", "GPU", "NPU"].map((k) => ({kind: "box", color: COLOURS[k], label: `偏好 ${k}`})),
      }};
    },
  };

  LIVE.granularity = {
    controls: [
      {name: "W", label: "总工作量 W", type: "range", min: 100, max: 100000, step: 100, value: 10000, digits: 0},
      {name: "Os", label: "调度开销 Oₛ", type: "range", min: 0.1, max: 10, step: 0.1, value: 1.0, digits: 1},
      {name: "P_devices", label: "设备数 P", type: "range", min: 1, max: 256, step: 1, value: 8},
    ],
    render(v) {
      const W = v.W, Os = v.Os, P = v.P_devices, r = M().granularity(W, Os, P);
      const top = r.curves.total[r.curves.total.length - 1][0], nS = Math.max(r.nStar, 1);
      const text = `设备无限多：N* = √(W/Oₛ) = ${r.nStar.toFixed(2)}，T(N*) = ${r.tStar.toFixed(2)}；` +
        `只有 P = ${P} 台设备：最优整数任务数 ${r.k}，T = ${r.tK.toFixed(2)}；` +
        `按轮执行时 N = ${r.m} 的 T = ${r.tM.toFixed(1)}，N = ${2 * P} 的 T = ${r.t2P.toFixed(1)}`;
      const legend = [
        {color: "#222", label: "总耗时 T(N)"}, {color: "#1f77b4", dash: "6 4", label: "调度开销 N·Os"},
        {color: "#ff7f0e", dash: "6 4", label: "均摊执行 W/N"},
        {color: "#9467bd", dash: "8 3", label: "P 台设备、完美摊开：N·Os + W/min(N, P)"},
        {color: "#2ca02c", label: "P 台设备、按轮执行：N·Os + ⌈N/P⌉·W/N"},
        {color: "#9467bd", kind: "box", label: "P 台设备时的最优整数 N"}];
      return {text, chart: {
        title: `粒度 U 形曲线：W = ${g(W)}, Os = ${g(Os)}, P = ${P}`,
        xlabel: "任务数 N（对数轴）", ylabel: "时间（与 W 同单位）", height: 250,
        x: {min: 1, max: top, scale: "log"}, y: {min: 0, max: r.ymax},
        lines: [
          {points: r.curves.total, color: "#222", width: 2.2}, {points: r.curves.overhead, color: "#1f77b4", dash: "6 4"},
          {points: r.curves.work, color: "#ff7f0e", dash: "6 4"},
          {points: r.curves.devices, color: "#9467bd", dash: "8 3"},
          {points: r.curves.rounds, color: "#2ca02c", width: 1.3}],
        markers: [{x: nS, y: r.tStar, color: "crimson", text: `N* = ${r.nStar.toFixed(1)}\nT = ${r.tStar.toFixed(1)}`},
                  {x: r.k, y: r.tK, color: "#9467bd", shape: "square"}],
        legend,
      }};
    },
  };

  const POWERS = Array.from({length: 13}, (_, k) => 2 ** k);
  LIVE.amdahl = {
    controls: [
      {name: "p", label: "可并行比例 p", type: "range", min: 0, max: 1, step: 0.01, value: 0.95, digits: 2},
      {name: "N", label: "设备数 N", type: "select", value: 1024, options: POWERS.map((n) => [String(n), n])},
      {name: "gustafson", label: "同时画 Gustafson 扩展加速比 (1−p) + pN", type: "checkbox", value: false},
    ],
    render(v) {
      const p = v.p, N = v.N, m = M();
      const n = [...new Set(m.geomspace(1, 4096, 160).map(Math.round))];
      const s = m.amdahl(p, N);
      const lines = [{points: n.map((k) => [k, m.amdahl(p, k)]), color: "#1f77b4", width: 2},
                     {points: [[1, 1], [4096, 4096]], color: "#999", dash: "5 4", width: 1}];
      const legend = [{color: "#1f77b4", label: `p = ${p.toFixed(2)}`}, {color: "#999", dash: "5 4", label: "线性加速（虚线）"}];
      const hlines = [];
      if (p < 1) {
        hlines.push({y: m.amdahlLimit(p), color: "crimson", dash: "2 3"});
        legend.push({color: "crimson", dash: "2 3", label: `上限 1/(1-p) = ${m.amdahlLimit(p).toFixed(1)}（点线）`});
      }
      const markers = [{x: N, y: s, color: "crimson"}];
      let extra = "";
      if (v.gustafson) {
        const gs = m.gustafson(p, N);
        lines.push({points: n.map((k) => [k, m.gustafson(p, k)]), color: "#2ca02c", width: 2});
        legend.push({color: "#2ca02c", label: "Gustafson：(1−p) + pN（问题随设备数扩大）"});
        markers.push({x: N, y: Math.max(gs, 1), color: "#2ca02c"});
        extra = `；Gustafson 扩展加速比 (1-p) + pN = ${gs.toFixed(1)}`;
      }
      const ceiling = p < 1 ? m.amdahlLimit(p).toFixed(3) : "无上限";
      const ticks = [1, 4, 16, 64, 256, 1024, 4096];
      return {text: `S = 1/((1-p) + p/N) = ${s.toFixed(3)}；设备无限多时的上限 1/(1-p) = ${ceiling}${extra}`, chart: {
        title: v.gustafson ? "Amdahl 定律与 Gustafson 定律" : "Amdahl 定律", xlabel: "设备数 N", ylabel: "加速比 S",
        x: {min: 1, max: 4096, scale: "log", ticks}, y: {min: 1, max: 4096, scale: "log", ticks},
        lines, hlines, markers, legend, height: 240,
      }};
    },
  };

  LIVE.pipeline = {
    controls: [
      {name: "stages", label: "段数 p", type: "range", min: 1, max: 8, step: 1, value: 4},
      {name: "micro_batches", label: "微批次 m", type: "range", min: 1, max: 16, step: 1, value: 8},
      {name: "method", label: "调度方式", type: "select", value: "1F1B", options: [["GPipe", "GPipe"], ["1F1B", "1F1B"]]},
      {name: "slow", label: "第 ⌊p/2⌋ 段耗时倍数", type: "range", min: 1, max: 3, step: 0.25, value: 1.0, digits: 2},
    ],
    render(v) {
      const times = new Array(v.stages).fill(1), slowStage = Math.floor(v.stages / 2);
      times[slowStage] *= v.slow;   // stage p // 2 (from 0): a middle stage for p >= 3, the last for p = 2
      const s = M().pipelineSchedule(times, v.micro_batches, v.method === "GPipe" ? "gpipe" : "1f1b");
      const formula = M().bubbleFraction(v.stages, v.micro_batches), p = v.stages;
      const bars = s.tasks.map((t) => ({x0: t.start, x1: t.end, y0: p - 1 - t.stage - 0.35, y1: p - 1 - t.stage + 0.35,
                                        color: t.kind === "F" ? COLOURS.forward : COLOURS.backward,
                                        title: `${t.kind}${t.mb}@S${t.stage}：${t.start.toFixed(2)}–${t.end.toFixed(2)}`}));
      return {text: `第 ${slowStage} 段每个微批次 t = ${(3 * Math.max(...times)).toFixed(2)}（前向 + 反向），其余各段 3；` +
        `模拟气泡 ${s.bubble.toFixed(3)}（等长各段的公式 (p-1)/(m+p-1) = ${formula.toFixed(3)}），` +
        `各段峰值激活份数 [${s.peaks.join(", ")}]`, chart: {
        title: `${v.method}：${p} 段，${v.micro_batches} 个微批次，气泡占比 ${pct(s.bubble, 1)}`,
        xlabel: "时间（前向 = 1 个时间单位，反向 = 2）", height: Math.max(120, 40 + 26 * p),
        x: {min: 0, max: s.makespan * 1.02}, bars,
        y: {min: -0.6, max: p - 0.4, categorical: true,
            ticks: Array.from({length: p}, (_, k) => ({value: p - 1 - k, label: `第 ${k} 段`}))},
        vlines: [{x: s.makespan, dash: "5 4", width: 1}],
        legend: [{kind: "box", color: COLOURS.forward, label: "前向 F"}, {kind: "box", color: COLOURS.backward, label: "反向 B"}],
      }};
    },
  };

  const RECOMPUTE = {"不重计算": "none", "选择性重计算": "selective", "完全重计算": "full"};
  LIVE.memory = {
    controls: [
      {name: "model", label: "模型", type: "select", value: "70B", options: ["7B", "13B", "70B", "175B"].map((k) => [k, k])},
      {name: "dp", label: "数据并行 DP", type: "select", value: 8, options: [1, 2, 4, 8, 16, 32, 64].map((k) => [String(k), k])},
      {name: "tp", label: "张量并行 TP（≤ 单机 8 卡）", type: "select", value: 1, options: [1, 2, 4, 8].map((k) => [String(k), k])},
      {name: "pp", label: "流水线并行 PP", type: "select", value: 1, options: [1, 2, 4, 8, 16].map((k) => [String(k), k])},
      {name: "recompute", label: "激活重计算", type: "select", value: "选择性重计算",
       options: Object.keys(RECOMPUTE).map((k) => [k, k])},
      {name: "micro_batch", label: "每个微批次的样本数", type: "range", min: 1, max: 8, step: 1, value: 1},
    ],
    rows(v) {
      const [psi, layers, hidden, heads] = M().MODELS[v.model];
      const pp = Math.min(v.pp, layers);
      return [0, 1, 2, 3].map((z) => M().memoryPerDevice(psi, {dp: v.dp, tp: v.tp, pp, zeroStage: z, layers, hidden,
        heads, sequence: 2048, microBatch: v.micro_batch, recompute: RECOMPUTE[v.recompute]}));
    },
    render(v) {
      const [, layers, , heads] = M().MODELS[v.model], pp = Math.min(v.pp, layers);
      if (layers % pp || heads % v.tp) {   // Megatron-LM splits whole layers and whole attention heads
        return {chart: null, text: `${v.model} 的 ${layers} 层、${heads} 个注意力头切不成 PP ${pp} × TP ${v.tp}：` +
          "每段流水线须是整数层，每路张量并行须是整数个头；请换一个 PP 或 TP"};
      }
      const rows = this.rows(v);
      // With a pipeline, ZeRO-2/3's savings cost a collective per micro-batch or are given back within the step
      // (training.PIPELINE_ZERO_STAGES = 0, 1): hatched (faint) bars, starred labels, never offered.
      const barred = [0, 1, 2, 3].filter((z) => pp > 1 && z > 1);
      const parts = [["params", "参数", "#4C72B0"], ["grads", "梯度", "#DD8452"], ["optimizer", "优化器状态", "#55A868"],
                     ["activations", "激活", "#C44E52"]];
      const bars = [];
      rows.forEach((r, z) => {
        let left = 0;
        for (const [key, zh, colour] of parts) {
          const w = r[key] / 1e9;
          bars.push({x0: left, x1: left + w, y0: 3 - z - 0.4, y1: 3 - z + 0.4, color: colour, title: `${zh} ${w.toFixed(1)} GB`,
                     opacity: barred.includes(z) ? 0.35 : undefined});
          left += w;
        }
      });
      const most = Math.max(...rows.map((r) => r.total / 1e9));
      return {text: memoryVerdict(rows.map((r) => r.total), rows[0].activations, barred), chart: {
        title: `${v.model} 模型：DP ${v.dp} × TP ${v.tp} × PP ${pp} = ${v.dp * v.tp * pp} 张 GPU，序列 2048`,
        xlabel: "每张 GPU 的显存（GB，1 GB = 1e9 字节）", height: 170,
        x: {min: 0, max: Math.max(100, most * (barred.length ? 1.3 : 1.05))}, bars,
        y: {min: -0.6, max: 3.6, categorical: true,
            ticks: [0, 1, 2, 3].map((z) => ({value: 3 - z, label: `ZeRO-${z}${barred.includes(z) ? "*" : ""}`}))},
        vlines: [{x: 80, color: "crimson", dash: "6 4"}],
        notes: barred.map((z) => ({x: rows[z].total / 1e9, y: 3 - z, text: "流水线下省不下"})),
        legend: parts.map(([, zh, colour]) => ({kind: "box", color: colour, label: zh}))
          .concat([{color: "crimson", dash: "6 4", label: "A100 显存 80 GB"}]),
      }};
    },
  };

  /** readings.ch08.memory_verdict: the bytes per GPU of ZeRO 0-3 and the stages that fit in 80 GB. */
  function memoryVerdict(totals, activations, barred) {
    const cap = 80e9;
    const listed = totals.map((t, z) => `ZeRO-${z}${barred.includes(z) ? "*" : ""} ${(t / 1e9).toFixed(1)}`).join("，");
    const fits = totals.map((t, z) => z).filter((z) => totals[z] <= cap && !barred.includes(z));
    const head = `每卡合计（GB）：${listed}；其中激活 ${(activations / 1e9).toFixed(1)} GB`;
    let choice = fits.length ? `放得下 80 GB 的可选阶段：${fits.map((z) => `ZeRO-${z}`).join("、")}`
      : "没有哪个可选的 ZeRO 阶段放得下 80 GB";
    if (barred.some((z) => totals[z] <= cap)) {
      choice += "。*ZeRO-2/3 的账面数在流水线下省不下：要么每个微批次多一次归约散射\n" +
        "（ZeRO-3 还要收集参数），要么一步之内让参数和梯度常驻，显存约回到 ZeRO-1";
    } else if (barred.length) {
      choice += "。*ZeRO-2/3 的账面数在流水线下省不下（每个微批次多一次归约散射，或一步之内常驻）";
    }
    return `${head}\n${choice}`;
  }

  // --- controls ----------------------------------------------------------------------------------------
  const ICONS = {
    play: '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path d="M4 2.5v11l9-5.5z" fill="currentColor"/></svg>',
    pause: '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path d="M4 2.5h3v11H4zm5 0h3v11H9z" fill="currentColor"/></svg>',
  };

  function formatValue(spec, value) {
    if (spec.labels) return spec.labels[value];
    return spec.digits === undefined ? String(value) : Number(value).toFixed(spec.digits);
  }

  /** Build one control; ``onChange(value)`` runs on every change (keys, drag, select). */
  function control(spec, onChange) {
    const wrap = document.createElement("label");
    wrap.className = "hetlab-control";
    const name = document.createElement("span");
    name.className = "hetlab-control-name";
    name.textContent = spec.label;
    wrap.appendChild(name);
    let input, read = () => input.value;
    if (spec.type === "select") {
      input = document.createElement("select");
      spec.options.forEach(([label, value], k) => {
        const o = document.createElement("option");
        o.value = String(k); o.textContent = label;
        if (value === spec.value) o.selected = true;
        input.appendChild(o);
      });
      read = () => spec.options[Number(input.value)][1];
    } else if (spec.type === "checkbox") {
      input = document.createElement("input");
      input.type = "checkbox"; input.checked = !!spec.value;
      read = () => input.checked;
      wrap.classList.add("hetlab-control-check");
      wrap.insertBefore(input, name);
    } else {
      input = document.createElement("input");
      input.type = "range"; input.min = spec.min; input.max = spec.max; input.step = spec.step;
      input.value = spec.value;
      read = () => Number(input.value);
    }
    input.setAttribute("aria-label", spec.label);
    if (spec.type !== "checkbox") wrap.appendChild(input);
    let out = null;
    if (spec.type === "range") {
      out = document.createElement("output");
      out.textContent = formatValue(spec, spec.value);
      wrap.appendChild(out);
    }
    const changed = () => { const v = read(); if (out) out.textContent = formatValue(spec, v); onChange(v); };
    input.addEventListener("input", changed);
    input.addEventListener("change", changed);
    return {element: wrap, input, set(v) { input.value = v; changed(); }};
  }

  function playButton(ctrl, spec) {
    const b = document.createElement("button");
    b.type = "button"; b.className = "hetlab-play";
    let timer = null;
    const show = () => {
      b.innerHTML = timer ? `${ICONS.pause}<span>暂停</span>` : `${ICONS.play}<span>播放</span>`;
      b.title = timer ? "暂停" : "从头播放";
    };
    b.addEventListener("click", () => {
      if (timer) { clearInterval(timer); timer = null; show(); return; }
      let k = Number(ctrl.input.value) >= spec.max ? spec.min : Number(ctrl.input.value);
      ctrl.set(k);
      timer = setInterval(() => {
        k += spec.step;
        if (k > spec.max) { clearInterval(timer); timer = null; show(); return; }
        ctrl.set(k);
      }, spec.play);
      show();
    });
    show();
    return b;
  }

  function mountLive(box) {
    const def = LIVE[box.dataset.widget];
    if (!def) return false;
    const values = {};
    const stored = box.dataset.values ? JSON.parse(box.dataset.values) : {};
    const controls = box.querySelector(".hetlab-controls"), figure = box.querySelector(".hetlab-figure");
    const readout = box.querySelector(".hetlab-readout");
    let pending = false;
    const draw = () => {
      pending = false;
      const out = def.render(values);
      if (out.chart) C().plot(figure, out.chart);
      else figure.textContent = "";
      readout.textContent = out.text;
      box.dataset.drawn = String(Number(box.dataset.drawn || 0) + 1);
    };
    const schedule = () => { if (!pending) { pending = true; requestAnimationFrame(draw); } };
    for (const spec0 of def.controls) {
      const spec = {...spec0};
      if (spec.name in stored) spec.value = stored[spec.name];
      values[spec.name] = spec.value;
      const ctrl = control(spec, (v) => { values[spec.name] = v; schedule(); });
      if (spec.play) controls.appendChild(playButton(ctrl, spec));
      controls.appendChild(ctrl.element);
    }
    draw();
    let width = figure.clientWidth;
    new ResizeObserver(() => { if (figure.clientWidth !== width) { width = figure.clientWidth; schedule(); } })
      .observe(figure);
    box.hetlab = {values, render: () => def.render(values)};
    return true;
  }

  // --- precomputed positions ---------------------------------------------------------------------------
  function mountFrames(box) {
    const manifest = JSON.parse(box.querySelector("script.hetlab-frames").textContent);
    const img = box.querySelector(".hetlab-figure img"), readout = box.querySelector(".hetlab-readout");
    const controls = box.querySelector(".hetlab-controls");
    const base = new URL(manifest.base, document.baseURI);
    const index = manifest.controls.map((c) => c.values.indexOf(c.value));
    const show = () => {
      const key = index.join(",");
      const frame = manifest.frames[key];
      if (!frame) return;
      const src = new URL(frame[0], base).href;
      if (img.src !== src) img.src = src;
      readout.textContent = frame[1];
      box.dataset.shown = key;
      // Fetch the neighbouring positions while the reader looks at this one.
      manifest.controls.forEach((c, k) => [-1, 1].forEach((d) => {
        const near = index.slice(); near[k] += d;
        const f = manifest.frames[near.join(",")];
        if (f) { const pre = new Image(); pre.src = new URL(f[0], base).href; }
      }));
    };
    manifest.controls.forEach((c, k) => {
      let spec;
      if (c.kind === "select") {
        spec = {label: c.label, type: "select", value: k, options: c.labels.map((l, j) => [l, j])};
        spec.value = index[k];
      } else if (c.kind === "checkbox") {
        spec = {label: c.label, type: "checkbox", value: !!c.value};
      } else {
        spec = {label: c.label, type: "range", min: 0, max: c.values.length - 1, step: 1, value: index[k], labels: c.labels};
      }
      const ctrl = control(spec, (v) => {
        index[k] = c.kind === "checkbox" ? c.values.indexOf(v) : Number(v);
        show();
      });
      controls.appendChild(ctrl.element);
    });
    show();
    return true;
  }

  function mountAll() {
    document.querySelectorAll(".hetlab-widget").forEach((box) => {
      if (box.dataset.mounted) return;
      const mode = box.dataset.mode;
      try {   // one broken widget must not take the others on the page with it
        const ok = mode === "live" ? mountLive(box) : mode === "frames" ? mountFrames(box) : true;
        box.dataset.mounted = ok ? "1" : "failed";
      } catch (error) {
        box.dataset.mounted = "failed";
        console.error(`hetlab widget ${box.dataset.widget}: ${error}`);
      }
    });
  }

  root.HetlabWidgets = {LIVE, mountAll, g};
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})(window);
