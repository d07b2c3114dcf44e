/* The book's models, ported from the Python library hetlab for the widgets that compute in the page.
 *
 * Each function mirrors one hetlab function (named in its comment) with the same arithmetic in the same
 * order, so the page shows the numbers the notebooks print. tests/browser/test_site_widgets.py checks every
 * function here against hetlab on at least 100 random inputs. No DOM, no network: also loads under node.
 */
(function (root) {
  "use strict";

  // --- chapter 4: granularity (hetlab.formulas, hetlab.models.granularity) ---------------------------
  /** formulas.optimal_tasks: N* = sqrt(W) / sqrt(Os). */
  function optimalTasks(W, Os) { return Math.sqrt(W) / Math.sqrt(Os); }
  /** formulas.total_time: N Os + W / N. */
  function totalTime(N, W, Os) { return N * Os + W / N; }
  /** models.granularity.total_time_on: "ideal" N Os + W / min(N, P); "rounds" N Os + ceil(N / P) W / N. */
  function totalTimeOn(N, W, Os, P, model) {
    if (model === "rounds") return N * Os + Math.ceil(N / P) * W / N;
    return N * Os + W / Math.min(N, P);
  }
  /** models.granularity.optimal_task_count: the better of floor/ceil of sqrt(W / Os), clamped to P. */
  function optimalTaskCount(W, Os, P) {
    const root = Math.sqrt(W / Os);
    const lo = Math.max(1, Math.floor(root));
    const hi = lo + 1;
    const best = lo * Os + W / lo <= hi * Os + W / hi ? lo : hi;
    return P === undefined || P === null ? best : Math.min(best, P);
  }
  /** numpy.geomspace(a, b, n). */
  function geomspace(a, b, n) {
    const la = Math.log10(a), lb = Math.log10(b), out = [];
    for (let k = 0; k < n; k++) out.push(Math.pow(10, la + (lb - la) * k / (n - 1)));
    out[0] = a; out[n - 1] = b;
    return out;
  }
  /** What views.ch04.granularity draws and prints for (W, Os, P). */
  function granularity(W, Os, P) {
    const nStar = optimalTasks(W, Os);
    const top = Math.max(10, 4 * nStar);
    const n = geomspace(1, top, 300);
    const whole = [...new Set(geomspace(1, top, 400).map(Math.round))].sort((a, b) => a - b);
    const tStar = totalTime(Math.max(nStar, 1), W, Os);
    const k = optimalTaskCount(W, Os, P);
    const tK = totalTimeOn(k, W, Os, P, "ideal");
    const m = Math.floor(3 * P / 2);
    const right = whole.filter((x) => x >= Math.min(Math.max(nStar, 1), P));
    const tail = Math.max(...right.map((x) => totalTimeOn(x, W, Os, P, "rounds")));
    return {
      nStar, tStar, k, tK, m,
      tM: totalTimeOn(m, W, Os, P, "rounds"),
      t2P: totalTimeOn(2 * P, W, Os, P, "rounds"),
      ymax: Math.min(totalTime(1, W, Os), Math.max(4 * tStar, 1.5 * tK, tail)) * 1.05,
      curves: {
        total: n.map((x) => [x, totalTime(x, W, Os)]),
        overhead: n.map((x) => [x, x * Os]),
        work: n.map((x) => [x, W / x]),
        devices: n.map((x) => [x, totalTimeOn(x, W, Os, P, "ideal")]),
        rounds: whole.map((x) => [x, totalTimeOn(x, W, Os, P, "rounds")]),
      },
    };
  }

  // --- chapter 6: Amdahl and Gustafson (hetlab.formulas) -----------------------------------------------
  /** formulas.amdahl: 1 / ((1 - p) + p / N). */
  function amdahl(p, N) { return 1.0 / ((1.0 - p) + p / N); }
  /** formulas.amdahl_limit: 1 / (1 - p), Infinity at p = 1. */
  function amdahlLimit(p) { return 1.0 / (1.0 - p); }
  /** formulas.gustafson: (1 - p) + p N. */
  function gustafson(p, N) { return (1.0 - p) + p * N; }

  // --- chapter 8: pipelines (hetlab.models.simulators.pipeline_schedule) ----------------------------------
  /** One training step of a pipeline, one stage per device, free transfers: each stage runs its sequence
   * (GPipe: all forwards then all backwards; 1F1B: p - s - 1 warm-up forwards, then one forward one backward),
   * each task as soon as its stage is free and its input is done. Returns tasks, makespan, bubble share and
   * the peak number of micro-batches whose activations a stage holds. */
  function pipelineSchedule(stageTimes, m, method, backwardRatio) {
    const p = stageTimes.length, ratio = backwardRatio === undefined ? 2.0 : backwardRatio;
    const tasks = new Map();
    const key = (kind, k, s) => `${kind}${k}@S${s}`;
    for (let s = 0; s < p; s++) {
      for (let k = 0; k < m; k++) {
        tasks.set(key("F", k, s), {kind: "F", mb: k, stage: s, time: stageTimes[s],
                                   pred: s > 0 ? key("F", k, s - 1) : null});
        if (ratio > 0) {
          tasks.set(key("B", k, s), {kind: "B", mb: k, stage: s, time: stageTimes[s] * ratio,
                                     pred: s === p - 1 ? key("F", k, s) : key("B", k, s + 1)});
        }
      }
    }
    const sequences = [];
    for (let s = 0; s < p; s++) {
      const fw = [], bw = [];
      for (let k = 0; k < m; k++) { fw.push(key("F", k, s)); if (ratio > 0) bw.push(key("B", k, s)); }
      if (method === "gpipe" || ratio === 0) { sequences.push(fw.concat(bw)); continue; }
      const warm = Math.min(p - s - 1, m);
      let seq = fw.slice(0, warm);
      for (let k = 0; k < m - warm; k++) seq.push(fw[warm + k], bw[k]);
      sequences.push(seq.concat(bw.slice(m - warm)));
    }
    // Run the plan: a stage takes its next task once the task's input is done (Kahn over both kinds of edge).
    const position = new Array(p).fill(0), free = new Array(p).fill(0);
    let progress = true, placed = 0;
    while (progress) {
      progress = false;
      for (let s = 0; s < p; s++) {
        while (position[s] < sequences[s].length) {
          const t = tasks.get(sequences[s][position[s]]);
          const pred = t.pred ? tasks.get(t.pred) : null;
          if (pred && pred.end === undefined) break;
          t.start = Math.max(free[s], pred ? pred.end : 0);
          t.end = t.start + t.time;
          free[s] = t.end;
          position[s]++; placed++; progress = true;
        }
      }
    }
    if (placed !== tasks.size) throw new Error("pipeline plan deadlocked");
    let makespan = 0, busy = 0;
    for (const t of tasks.values()) { makespan = Math.max(makespan, t.end); busy += t.time; }
    const peaks = [];
    for (let s = 0; s < p; s++) {
      if (ratio === 0) { peaks.push(1); continue; }
      const events = [];
      for (let k = 0; k < m; k++) {
        events.push([tasks.get(key("F", k, s)).start, 1], [tasks.get(key("B", k, s)).end, -1]);
      }
      events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      let live = 0, peak = 0;
      for (const [, d] of events) { live += d; peak = Math.max(peak, live); }
      peaks.push(peak);
    }
    return {tasks: [...tasks.values()], makespan, bubble: 1.0 - busy / (p * makespan), peaks, stages: p,
            microBatches: m};
  }
  /** models.training.bubble_fraction for GPipe/1F1B: (p - 1) / (m + p - 1). */
  function bubbleFraction(p, m) { return (p - 1) / (m + p - 1); }

  // --- chapter 8: memory per GPU (hetlab.models.training) ------------------------------------------------
  /** training.activation_memory: bytes one layer keeps for one micro-batch (Korthikanti et al. 2022). */
  function activationMemory(s, b, h, a, t, recompute) {
    const sbh = s * b * h;
    if (recompute === "full") return 2.0 * sbh;
    const attention = recompute === "selective" ? 0.0 : 5.0 * a * s / h;
    return sbh * (10.0 + 24.0 / t + attention / t);
  }
  /** training.memory_per_device (1F1B, micro_batches = pp, no sequence parallelism): bytes per device. */
  function memoryPerDevice(params, o) {
    const shard = params / (o.tp * o.pp);
    const stage = o.zeroStage;
    const states = {
      params: 2.0 * shard / (stage >= 3 ? o.dp : 1),
      grads: 2.0 * shard / (stage >= 2 ? o.dp : 1),
      optimizer: 12.0 * shard / (stage >= 1 ? o.dp : 1),
    };
    const perLayer = activationMemory(o.sequence, o.microBatch, o.hidden, o.heads, o.tp, o.recompute);
    const inFlight = Math.min(o.pp, o.pp);          // 1F1B with micro_batches = pp
    let activations = perLayer * (o.layers / o.pp) * inFlight;
    // full recomputation also holds the layer being recomputed: its whole activations for one micro-batch
    if (o.recompute === "full") activations += activationMemory(o.sequence, o.microBatch, o.hidden, o.heads, o.tp, "none");
    const modelStates = states.params + states.grads + states.optimizer;
    return {...states, modelStates, activations, total: modelStates + activations};
  }
  /** views.ch08.MODELS: parameters, layers, hidden size, heads. */
  const MODELS = {"7B": [7e9, 32, 4096, 32], "13B": [13e9, 40, 5120, 40], "70B": [70e9, 80, 8192, 64],
                  "175B": [175e9, 96, 12288, 96]};

  // --- chapter 1: the kitchen's schedulers (hetlab.schedulers) -----------------------------------------
  // tasks: [{name, work, kind}], devices: [{name, speed}]; run time = work / speed (no affinity, no edges).
  function costs(tasks, devices) { return tasks.map((t) => devices.map((d) => t.work / d.speed)); }
  function finish(policy, tasks, devices, deviceOf, start, end) {
    return {policy, tasks, devices, deviceOf, start, end, makespan: end.length ? Math.max(...end) : 0};
  }
  /** schedulers.article_demo: listed order, each task to the device free earliest (ties: first name). */
  function articleDemo(tasks, devices) {
    const c = costs(tasks, devices), free = devices.map(() => 0);
    const deviceOf = [], start = [], end = [];
    tasks.forEach((t, i) => {
      let j = 0;
      for (let k = 1; k < devices.length; k++) {
        if (free[k] < free[j] || (free[k] === free[j] && devices[k].name < devices[j].name)) j = k;
      }
      deviceOf.push(j); start.push(free[j]); end.push(free[j] + c[i][j]); free[j] = end[i];
    });
    return finish("article_demo", tasks, devices, deviceOf, start, end);
  }
  /** The list scheduler behind schedulers.eft and schedulers.lpt: highest priority first (ties: lower
   * index), each task on the device where it finishes first (ties: earlier device). */
  function listSchedule(policy, tasks, devices, priority) {
    const c = costs(tasks, devices), free = devices.map(() => 0);
    const order = tasks.map((_, i) => i).sort((a, b) => priority[b] - priority[a] || a - b);
    const deviceOf = [], start = [], end = [];
    for (const i of order) {
      let j = 0;
      for (let k = 1; k < devices.length; k++) if (free[k] + c[i][k] < free[j] + c[i][j]) j = k;
      deviceOf[i] = j; start[i] = free[j]; end[i] = free[j] + c[i][j]; free[j] = end[i];
    }
    return finish(policy, tasks, devices, deviceOf, start, end);
  }
  function eft(tasks, devices) { return listSchedule("eft", tasks, devices, tasks.map((_, i) => -i)); }
  function lpt(tasks, devices) {
    return listSchedule("lpt", tasks, devices, costs(tasks, devices).map((row) => Math.min(...row)));
  }
  /** schedulers.optimal for independent tasks: depth-first branch and bound over assignments, largest
   * tasks first, from the better of LPT and EFT; each device runs its tasks in index order. */
  function optimal(tasks, devices) {
    const c = costs(tasks, devices), n = tasks.length, m = devices.length;
    if (n === 0) return finish("optimal", tasks, devices, [], [], []);
    const fastest = c.map((row) => Math.min(...row));
    const order = tasks.map((_, i) => i).sort((a, b) => fastest[b] - fastest[a] || a - b);
    const suffix = new Array(n + 1).fill(0);
    for (let k = n - 1; k >= 0; k--) suffix[k] = suffix[k + 1] + fastest[order[k]];
    const seed = [lpt(tasks, devices), eft(tasks, devices)].reduce((a, b) => (b.makespan < a.makespan ? b : a));
    let best = seed.makespan * (1 + 1e-12), bestChoice = order.map((i) => seed.deviceOf[i]);
    const loads = new Array(m).fill(0), choice = new Array(n).fill(0);
    const column = (j) => c.map((row) => row[j]).join(",");
    const columns = devices.map((_, j) => column(j));
    function search(k, current) {
      if (k === n) { if (current < best) { best = current; bestChoice = choice.slice(); } return; }
      const row = c[order[k]], tried = new Set();
      const js = devices.map((_, j) => j).sort((a, b) => (loads[a] + row[a]) - (loads[b] + row[b]) || a - b);
      for (const j of js) {
        const id = columns[j] + "|" + loads[j];
        if (tried.has(id)) continue;
        tried.add(id);
        loads[j] += row[j];
        const span = Math.max(current, loads[j]);
        const total = loads.reduce((x, y) => x + y, 0);
        if (Math.max(span, (total + suffix[k + 1]) / m) < best) { choice[k] = j; search(k + 1, span); }
        loads[j] -= row[j];
      }
    }
    search(0, 0);
    const deviceOf = new Array(n), start = new Array(n), end = new Array(n), free = new Array(m).fill(0);
    order.forEach((i, k) => { deviceOf[i] = bestChoice[k]; });
    for (let i = 0; i < n; i++) {
      const j = deviceOf[i];
      start[i] = free[j]; end[i] = free[j] + c[i][j]; free[j] = end[i];
    }
    return finish("optimal", tasks, devices, deviceOf, start, end);
  }
  /** By the names of hetlab.schedulers.POLICIES. */
  const POLICIES = {article_demo: articleDemo, eft, lpt, optimal};
  /** workloads.ARTICLE_TASKS and devices.kitchen(). */
  const ARTICLE_TASKS = [[10, "CPU"], [20, "GPU"], [15, "NPU"], [8, "CPU"], [12, "GPU"], [25, "NPU"], [18, "CPU"],
                         [6, "GPU"]].map(([work, kind], i) => ({name: `t${i}`, work, kind}));
  const KITCHEN = [{name: "CPU", speed: 10.0}, {name: "GPU", speed: 20.0}, {name: "NPU", speed: 15.0}];
  /** Indices in start order (numpy argsort, kind="stable"). */
  function startOrder(schedule) {
    return schedule.start.map((_, i) => i).sort((a, b) => schedule.start[a] - schedule.start[b] || a - b);
  }

  const api = {optimalTasks, totalTime, totalTimeOn, optimalTaskCount, geomspace, granularity, amdahl,
               amdahlLimit, gustafson, pipelineSchedule, bubbleFraction, activationMemory, memoryPerDevice,
               MODELS, articleDemo, eft, lpt, optimal, POLICIES, ARTICLE_TASKS, KITCHEN, startOrder};
  root.HetlabModels = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
