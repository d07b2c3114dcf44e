/* A small SVG chart for the widgets that compute in the page: lines, markers, rectangles (Gantt bars,
 * stacked bars), reference lines, a legend. Drawn at the container's pixel width with 12 px text, so
 * labels stay legible on a phone (a scaled-down picture would shrink them). Colours follow the page's
 * light or dark theme through CSS (hetlab.css, .hetlab-chart). No dependencies, no network.
 */
(function (root) {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const FONT = 12;

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  /** Width of a label in pixels, roughly (CJK characters are square, Latin ones about half as wide). */
  function textWidth(text, size) {
    let w = 0;
    for (const ch of String(text)) w += /[\u2e80-\u9fff\uff00-\uffef]/.test(ch) ? 1 : 0.58;
    return w * (size || FONT);
  }

  function fmt(v) {
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e5 || a < 1e-3) return v.toExponential(0).replace("e+", "e");
    return String(Number(v.toPrecision(4)));
  }

  function niceTicks(lo, hi, count) {
    const span = hi - lo || 1;
    const raw = span / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }

  function axis(spec, lo, hi) {
    const scale = spec.scale || "linear";
    const f = scale === "linear" ? (v) => v : (v) => Math.log(Math.max(v, 1e-300));
    const a = f(lo), b = f(hi);
    let ticks = spec.ticks;
    if (!ticks) {
      if (scale === "linear") ticks = niceTicks(lo, hi, spec.count || 5);
      else {
        ticks = [];
        for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
          const v = Math.pow(10, e);
          if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push(v);
        }
      }
    }
    return {f, a, b, ticks: ticks.map((t) => (typeof t === "object" ? t : {value: t, label: (spec.format || fmt)(t)}))};
  }

  /** Draw ``spec`` into ``container`` (replacing what was there); returns the <svg>. */
  function plot(container, spec) {
    const width = Math.max(280, Math.round(container.clientWidth || 640));
    const legend = spec.legend || [];
    const narrow = width < 520;
    // The legend goes under the plot, in as many rows as it needs at this width.
    const rows = [];
    let row = [], used = 0;
    for (const item of legend) {
      const w = 26 + textWidth(item.label) + 14;
      if (row.length && used + w > width - 16) { rows.push(row); row = []; used = 0; }
      row.push([item, w]); used += w;
    }
    if (row.length) rows.push(row);
    const yLabels = (spec.y.ticks || []).map((t) => (typeof t === "object" ? t.label : fmt(t)));
    const left = Math.min(width * 0.35, Math.max(44, 14 + Math.max(0, ...yLabels.map((t) => textWidth(t))))) +
      (spec.ylabel ? 18 : 0);
    const titleLines = wrap(spec.title || "", width - 16, FONT + 1);
    const top = 8 + titleLines.length * (FONT + 5);
    const plotHeight = spec.height || (narrow ? 190 : 230);
    const bottom = (spec.xlabel ? 36 : 22) + rows.length * (FONT + 8) + 6;
    const right = spec.right || 14;
    const height = top + plotHeight + bottom;
    const x = axis(spec.x, spec.x.min, spec.x.max), y = axis(spec.y, spec.y.min, spec.y.max);
    const px = (v) => left + (x.f(v) - x.a) / (x.b - x.a) * (width - left - right);
    const py = (v) => top + plotHeight - (y.f(v) - y.a) / (y.b - y.a) * plotHeight;
    container.textContent = "";
    const svg = el("svg", {class: "hetlab-chart", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
                           "aria-label": spec.title || ""}, container);
    titleLines.forEach((line, k) => el("text", {x: width / 2, y: 6 + (k + 1) * (FONT + 4), "text-anchor": "middle",
                                                class: "hetlab-chart-title"}, svg, line));
    const clipId = "c" + Math.random().toString(36).slice(2);
    const clip = el("clipPath", {id: clipId}, el("defs", {}, svg));
    el("rect", {x: left, y: top, width: width - left - right, height: plotHeight}, clip);
    const grid = el("g", {class: "hetlab-chart-grid"}, svg);
    for (const t of x.ticks) {
      const X = px(t.value);
      if (X < left - 0.5 || X > width - right + 0.5) continue;
      el("line", {x1: X, x2: X, y1: top, y2: top + plotHeight}, grid);
      el("text", {x: X, y: top + plotHeight + FONT + 4, "text-anchor": "middle", class: "hetlab-chart-tick"}, svg, t.label);
    }
    for (const t of y.ticks) {
      const Y = py(t.value);
      if (Y < top - 0.5 || Y > top + plotHeight + 0.5) continue;
      if (!spec.y.categorical) el("line", {x1: left, x2: width - right, y1: Y, y2: Y}, grid);
      el("text", {x: left - 6, y: Y + FONT / 3, "text-anchor": "end", class: "hetlab-chart-tick"}, svg, t.label);
    }
    el("rect", {x: left, y: top, width: width - left - right, height: plotHeight, class: "hetlab-chart-frame"}, svg);
    const body = el("g", {"clip-path": `url(#${clipId})`}, svg);
    for (const b of spec.bars || []) {
      const x0 = px(b.x0), x1 = px(b.x1), y0 = py(b.y0), y1 = py(b.y1);
      const r = el("rect", {x: Math.min(x0, x1), y: Math.min(y0, y1), width: Math.abs(x1 - x0),
                            height: Math.abs(y1 - y0), fill: b.color, class: "hetlab-chart-bar",
                            "fill-opacity": b.opacity}, body);
      if (b.title) el("title", {}, r, b.title);
      if (b.text && Math.abs(x1 - x0) > textWidth(b.text, 11) + 4) {
        el("text", {x: (x0 + x1) / 2, y: (y0 + y1) / 2 + 4, "text-anchor": "middle", class: "hetlab-chart-bartext",
                    fill: b.textColor || "#fff"}, body, b.text);
      }
    }
    for (const n of spec.notes || []) {     // a grey note just right of (x, y), e.g. after a bar
      el("text", {x: px(n.x) + 6, y: py(n.y) + 4, class: "hetlab-chart-note", style: "fill:#777;font-size:11px"}, svg,
         n.text);
    }
    for (const l of spec.vlines || []) {
      el("line", {x1: px(l.x), x2: px(l.x), y1: top, y2: top + plotHeight, stroke: l.color || "currentColor",
                  "stroke-dasharray": l.dash, "stroke-width": l.width || 1.2}, body);
    }
    for (const l of spec.hlines || []) {
      el("line", {x1: left, x2: width - right, y1: py(l.y), y2: py(l.y), stroke: l.color || "currentColor",
                  "stroke-dasharray": l.dash, "stroke-width": l.width || 1.2}, body);
    }
    for (const s of spec.lines || []) {
      const d = s.points.filter(([a, b]) => isFinite(a) && isFinite(b))
        .map(([a, b], k) => `${k ? "L" : "M"}${px(a).toFixed(1)},${py(b).toFixed(1)}`).join("");
      el("path", {d, fill: "none", stroke: s.color, "stroke-width": s.width || 1.8, "stroke-dasharray": s.dash,
                  "stroke-linejoin": "round"}, body);
    }
    for (const m of spec.markers || []) {
      const X = px(m.x), Y = py(m.y);
      if (m.shape === "square") el("rect", {x: X - 4.5, y: Y - 4.5, width: 9, height: 9, fill: m.color}, body);
      else el("circle", {cx: X, cy: Y, r: 5, fill: m.color}, body);
      const lines = m.text ? m.text.split("\n") : [];
      lines.forEach((line, k) => el("text", {
        x: X + (X > width * 0.7 ? -8 : 8), y: Y - 10 - (lines.length - 1 - k) * (FONT + 2),
        "text-anchor": X > width * 0.7 ? "end" : "start", style: `fill:${m.color}`, class: "hetlab-chart-note"}, svg,
        line));
    }
    if (spec.xlabel) {
      el("text", {x: left + (width - left - right) / 2, y: top + plotHeight + 2 * FONT + 10, "text-anchor": "middle",
                  class: "hetlab-chart-label"}, svg, spec.xlabel);
    }
    if (spec.ylabel) {
      el("text", {transform: `translate(${FONT + 2},${top + plotHeight / 2}) rotate(-90)`, "text-anchor": "middle",
                  class: "hetlab-chart-label"}, svg, spec.ylabel);
    }
    let ly = top + plotHeight + (spec.xlabel ? 36 : 22) + FONT;
    for (const r of rows) {
      let lx = 8;
      for (const [item, w] of r) {
        if (item.kind === "box") el("rect", {x: lx, y: ly - FONT + 2, width: 18, height: FONT - 2, fill: item.color}, svg);
        else el("line", {x1: lx, x2: lx + 18, y1: ly - FONT / 3, y2: ly - FONT / 3, stroke: item.color,
                         "stroke-width": 2, "stroke-dasharray": item.dash}, svg);
        el("text", {x: lx + 24, y: ly, class: "hetlab-chart-legend"}, svg, item.label);
        lx += w;
      }
      ly += FONT + 8;
    }
    return svg;
  }

  /** Break a title into lines that fit ``width`` pixels (at punctuation or spaces where possible). */
  function wrap(text, width, size) {
    if (!text) return [];
    const lines = [];
    let line = "";
    for (const part of String(text).split(/(?<=[，；：、 ])/)) {
      if (line && textWidth(line + part, size) > width) { lines.push(line); line = ""; }
      line += part;
    }
    if (line) lines.push(line);
    return lines;
  }

  root.HetlabCharts = {plot, textWidth, niceTicks, fmt};
})(typeof window !== "undefined" ? window : globalThis);
