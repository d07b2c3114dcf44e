"""Benchmark 6: widget latency in a real browser, from a slider key press to the new figure painted.

JupyterLab on loopback + headless Debian Chromium (tools/labdriver.py). For the three heaviest
widgets of the book (by time per redraw) it measures, in the same run:

- before: the naive pattern, ``ipywidgets.interact`` calling the plotting function, which builds
  a new pyplot figure on every change and re-displays it in an Output area;
- after: the book's ``hetlab.book.views`` widget (one figure reused, artists updated in place where it
  matters, layout solved once, light PNG compression, the bars of a Gantt chart drawn as one collection).

Latency = time of the key press (performance.now() in the page) to the first animation frame after
the new image has been decoded. 24 changes per widget, alternating right/left so every press changes
the value. Goal: median < 150 ms, P95 < 300 ms on a 2-core machine.

The floor, measured first in the same page with the same harness: a slider whose change sets an
``ipywidgets.Image`` to one of two PNGs rendered in advance (same figure size as the others), i.e. the
bare round trip browser -> kernel -> browser -> decode -> paint with no computing or drawing at all.
Every widget's median and P95 are also printed as a ratio to the floor's: what is left to gain.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import labdriver  # noqa: E402

SETUP = """import ipywidgets as w
import matplotlib.pyplot as plt
from hetlab.book import views
from hetlab import plotting
from hetlab.models import pipelines, serving
plotting.use_cjk_font()
def slider(d, lo, hi, step, value, kind=w.FloatSlider):
    return kind(min=lo, max=hi, step=step, value=value, description=d, continuous_update=False)"""

FLOOR = """import io
from matplotlib.figure import Figure
def _png(k):
    fig = Figure(figsize=(7, 3.2), layout='constrained')
    fig.add_subplot().plot([0, 1, 2], [0, k, 2 * k])
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png')
    return buffer.getvalue()
pngs = [_png(1), _png(2)]                     # pre-rendered: the key press only swaps the bytes
floor_image = w.Image(value=pngs[5 % 2], format='png')   # the slider starts at 5
floor_slider = slider('floor', 0, 10, 1, 5, w.IntSlider)
floor_slider.observe(lambda change: setattr(floor_image, 'value', pngs[change['new'] % 2]), names='value')
display(w.VBox([floor_slider, floor_image]))"""

CASES = [  # (name, slider label, after-cell source, before-cell source)
    ("granularity (ch.4)", "调度开销 Os", "views.granularity_explorer().widget",
     "w.interact(lambda W, Os: plotting.granularity_curve(W, Os), W=slider('W', 100.0, 100000.0, 100.0, 10000.0),"
     " Os=slider('调度开销 Os', 0.1, 10.0, 0.1, 1.0));"),
    ("pipeline (ch.8)", "微批次 m", "views.pipeline_explorer().widget",
     "w.interact(lambda m: plotting.gantt(pipelines.pipeline_schedule([1.0] * 4, m), show_names=m <= 6),"
     " m=slider('微批次 m', 1, 16, 1, 8, w.IntSlider));"),
    ("serving (ch.10)", "平时每秒请求数（突发时 10 倍）", "views.serving_explorer().widget",
     "def naive(rate):\n"
     "    wl = views.serving_workload(rate)\n"
     "    r = serving.simulate(wl.arrivals, wl.prompt, wl.output, **views.SERVING)\n"
     "    fig, ax = plt.subplots(figsize=(7, 3.2), layout='constrained')\n"
     "    ax.plot(sorted(r.latency * 1e3), [k / len(wl) for k in range(len(wl))]); ax.set_xscale('log')\n"
     "w.interact(naive, rate=slider('平时每秒请求数（突发时 10 倍）', 1, 6, 1, 3, w.IntSlider));"),
]

WATCH = """([cellIndex, label]) => {
    const cell = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')[cellIndex];
    const slider = [...cell.querySelectorAll('.widget-slider')]
        .find(s => s.querySelector('.widget-label').textContent.trim() === label);
    const area = cell.querySelector('.jp-OutputArea');
    const state = {painted: 0, src: [...area.querySelectorAll('img')].map(i => i.src).join()};
    window.__hetlab = state;
    new MutationObserver(() => {
        const imgs = [...area.querySelectorAll('img')];
        const src = imgs.map(i => i.src).join();
        if (!imgs.length || src === state.src) return;
        state.src = src;
        Promise.all(imgs.map(i => i.decode().catch(() => null))).then(() =>
            requestAnimationFrame(() => { state.painted = performance.now(); }));
    }).observe(area, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
    slider.querySelector('.noUi-handle').setAttribute('data-hetlab-target', '1');
    return true;
}"""


def measure(page, cell_index: int, label: str, presses: int = 24) -> list[float]:
    page.evaluate(WATCH, [cell_index, label])
    handle = page.locator("[data-hetlab-target='1']")
    handle.scroll_into_view_if_needed()
    handle.focus()
    out = []
    for k in range(presses):
        t0 = page.evaluate("() => performance.now()")
        page.keyboard.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
        page.wait_for_function("(t) => window.__hetlab.painted > t", arg=t0, timeout=30_000, polling="raf")
        out.append(page.evaluate("() => window.__hetlab.painted") - t0)
        page.wait_for_timeout(50)
    page.evaluate("() => document.querySelector(\"[data-hetlab-target='1']\").removeAttribute('data-hetlab-target')")
    return out


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> dict:
    reason = labdriver.chromium_missing_reason()
    if reason:
        print(f"[6] widget latency: skipped, {reason}")
        return {}
    cells = [new_code_cell(SETUP), new_code_cell(FLOOR)]
    for _, _, after, before in CASES:
        cells += [new_code_cell(after), new_code_cell(before)]
    path = Path(tempfile.mkdtemp()) / "latency.ipynb"
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                      "language": "python"}}), path)
    print("[6] widget latency in headless Chromium, key press -> new figure painted (24 changes each)")
    results = {}
    with labdriver.jupyterlab([path]) as (base, token, _), labdriver.browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        labdriver.open_notebook(page, base, token, path.name)
        labdriver.run_all(page)
        page.wait_for_timeout(2000)
        floor = summary(measure(page, 1, "floor"))
        results["floor"] = {"floor": floor}
        print(f"    {'floor (Image, PNG)':<20} pre-rendered PNG swapped on a key press: median {floor[0]:6.0f} ms,"
              f" P95 {floor[1]:6.0f} ms (the bare round trip)")
        for k, (name, label, _, _) in enumerate(CASES):
            after = summary(measure(page, 2 + 2 * k, label))
            before = summary(measure(page, 3 + 2 * k, label))
            results[name] = {"before": before, "after": after}
            print(f"    {name:<20} before (naive interact): median {before[0]:6.0f} ms, P95 {before[1]:6.0f} ms"
                  f" | after (hetlab.book.views): median {after[0]:6.0f} ms, P95 {after[1]:6.0f} ms"
                  f" | {before[0] / after[0]:.1f}x faster")
        page.close()
    print("    as a ratio to the floor (median / P95; 1.0x = nothing left to gain in the widget):")
    for name, r in results.items():
        if name != "floor":
            print(f"    {name:<20} before {r['before'][0] / floor[0]:5.1f}x / {r['before'][1] / floor[1]:5.1f}x"
                  f" | after {r['after'][0] / floor[0]:5.1f}x / {r['after'][1] / floor[1]:5.1f}x")
    ok = all(r["after"][0] < 150 and r["after"][1] < 300 for name, r in results.items() if name != "floor")
    print(f"    goal median < 150 ms and P95 < 300 ms: {'met' if ok else 'NOT met'}")
    return results


if __name__ == "__main__":
    main()
