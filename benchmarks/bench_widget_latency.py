"""Benchmark 6: widget latency in a real browser, from a key press on a control to the new figure painted.

JupyterLab on loopback + headless Debian Chromium (tools/labdriver.py). In one page and one run it measures:

- the floor: a slider whose change sets an ``ipywidgets.Image`` to one of two PNGs rendered in advance (same
  figure size as the widgets), i.e. the bare round trip browser -> kernel -> browser -> decode -> paint;
- every widget of the book (``hetlab.book.views.ALL``): its first slider (arrow keys), else its first drop-down
  (the next or previous option chosen) or check box (a click), 24 changes alternating direction so every one
  changes the value;
- with ``--naive``, also the naive pattern for the three heaviest widgets (``ipywidgets.interact`` building a
  new pyplot figure per change) next to the book's widget.

Latency = time of the key press (performance.now() in the page) to the first animation frame after the new
image has been decoded. Goal (issue 18): every widget's median within 1.5x of the floor's median. Prints the
table and writes it to benchmarks/results/widget-latency.json.
"""
from __future__ import annotations

import argparse
import json
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

WATCH = """([cellIndex, label, kind]) => {
    const cell = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')[cellIndex];
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
    let target;
    if (kind === 'slider') {
        const slider = [...cell.querySelectorAll('.widget-slider')]
            .find(s => s.querySelector('.widget-label').textContent.trim() === label);
        target = slider.querySelector('.noUi-handle');
    } else if (kind === 'dropdown') {
        target = [...cell.querySelectorAll('.widget-dropdown')]
            .find(s => s.querySelector('.widget-label').textContent.trim() === label).querySelector('select');
    } else {
        target = [...cell.querySelectorAll('.widget-checkbox')]
            .find(s => s.textContent.trim() === label).querySelector('input');
    }
    target.setAttribute('data-hetlab-target', '1');
    return true;
}"""


def measure(page, cell_index: int, label: str, kind: str = "slider", first: str = "right",
            presses: int = 24) -> list[float]:
    """Latencies (ms) of ``presses`` key presses on one control (``kind``: slider, dropdown or checkbox)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate(WATCH, [cell_index, label, kind])
    target = page.locator("[data-hetlab-target='1']")
    target.scroll_into_view_if_needed()
    target.focus()
    keys = {"slider": ("ArrowRight", "ArrowLeft"), "dropdown": ("ArrowDown", "ArrowUp"), "checkbox": (" ", " ")}[kind]
    if first != "right":
        keys = keys[::-1]
    out = []
    options = target.evaluate("e => e.options ? e.options.length : 0")
    start = target.evaluate("e => e.selectedIndex === undefined ? 0 : e.selectedIndex")
    for k in range(presses):
        t0 = page.evaluate("() => performance.now()")
        if kind == "dropdown":       # a closed <select> does not take arrow keys in headless Chromium: choose
            step = (1 if k % 2 == 0 else -1) * (1 if first == "right" else -1)
            start = (start + step) % options
            target.select_option(index=start)
        elif kind == "checkbox":
            target.click()
        else:
            page.keyboard.press(keys[k % 2])
        try:    # a control that rounds to feasible values may leave the figure as it was: no new picture comes
            page.wait_for_function("(t) => window.__hetlab.painted > t", arg=t0, timeout=15_000, polling="raf")
        except PlaywrightTimeout:
            continue
        out.append(page.evaluate("() => window.__hetlab.painted") - t0)
        page.wait_for_timeout(50)
    page.evaluate("() => document.querySelector(\"[data-hetlab-target='1']\").removeAttribute('data-hetlab-target')")
    return out


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def widgets() -> list[tuple[int, str, list[tuple[str, str, str]]]]:
    """(chapter, factory, controls to try) for every widget of the book: its first slider, then its first
    drop-down or check box (a slider that rounds to feasible values may leave the figure unchanged), each as
    (label, kind, first direction)."""
    import ipywidgets as w

    from hetlab.book import views

    out = []
    for chapter, factory in views.ALL:
        explorer = factory()
        tries = []
        for c in explorer.controls.values():
            if isinstance(c, (w.IntSlider, w.FloatSlider)) and not any(k == "slider" for _, k, _ in tries):
                tries.append((c.description, "slider", "left" if c.value >= c.max else "right"))
            elif isinstance(c, w.Dropdown) and not any(k != "slider" for _, k, _ in tries):
                values = [o[1] if isinstance(o, tuple) else o for o in c.options]
                tries.append((c.description, "dropdown", "left" if values.index(c.value) == len(values) - 1
                              else "right"))
            elif isinstance(c, w.Checkbox) and not any(k != "slider" for _, k, _ in tries):
                tries.append((c.description, "checkbox", "right"))
        tries.sort(key=lambda t: t[1] != "slider")
        out.append((chapter, factory.__name__, tries))
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive", action="store_true", help="also the naive interact versions of three widgets")
    parser.add_argument("--only", nargs="*", default=None, help="factory names to measure (default: all)")
    args = parser.parse_args(argv or [])
    reason = labdriver.chromium_missing_reason()
    if reason:
        print(f"[6] widget latency: skipped, {reason}")
        return {}
    book = [x for x in widgets() if args.only is None or x[1] in args.only]
    cells = [new_code_cell(SETUP), new_code_cell(FLOOR)]
    cells += [new_code_cell(f"views.{name}().widget") for _, name, _ in book]
    naive = CASES if args.naive else []
    for _, _, after, before in naive:
        cells += [new_code_cell(after), new_code_cell(before)]
    path = Path(tempfile.mkdtemp()) / "latency.ipynb"
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                      "language": "python"}}), path)
    print("[6] widget latency in headless Chromium, key press -> new figure painted (24 changes each)")
    results: dict = {"widgets": {}}
    with labdriver.jupyterlab([path]) as (base, token, _), labdriver.browser() as browser:
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        labdriver.open_notebook(page, base, token, path.name)
        labdriver.run_all(page)
        page.wait_for_timeout(2000)
        floor = summary(measure(page, 1, "floor"))
        results["floor"] = floor
        print(f"    {'floor (Image, PNG)':<26} pre-rendered PNG swapped on a key press: median {floor[0]:6.0f} ms,"
              f" P95 {floor[1]:6.0f} ms (the bare round trip)")
        print(f"    {'widget':<26} {'ch':>3}  {'control':<28} {'median':>7} {'P95':>7} {'/floor':>7}  goal <= 1.5x")
        for k, (chapter, name, tries) in enumerate(book):
            for label, kind, first in tries:
                times = measure(page, 2 + k, label, kind, first)
                if len(times) >= 12:
                    break
            else:
                print(f"    {name:<26} {chapter:>3}  no control changed the figure on 12 of 24 presses")
                continue
            median, p95 = summary(times)
            ratio = median / floor[0]
            results["widgets"][name] = {"chapter": chapter, "control": label, "median_ms": round(median, 1),
                                        "p95_ms": round(p95, 1), "ratio": round(ratio, 2)}
            print(f"    {name:<26} {chapter:>3}  {label[:26]:<28} {median:7.0f} {p95:7.0f} {ratio:6.2f}x"
                  f"  {'met' if ratio <= 1.5 else 'NOT met'}")
        for k, (name, label, _, _) in enumerate(naive):
            at = 2 + len(book) + 2 * k
            after, before = summary(measure(page, at, label)), summary(measure(page, at + 1, label))
            results[f"naive {name}"] = {"before": before, "after": after}
            print(f"    {name:<26} naive interact: median {before[0]:6.0f} ms | hetlab.book.views: median "
                  f"{after[0]:6.0f} ms | {before[0] / after[0]:.1f}x faster")
        page.close()
    met = [n for n, r in results["widgets"].items() if r["ratio"] <= 1.5]
    print(f"    within 1.5x of the floor: {len(met)} of {len(results['widgets'])} widgets")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "widget-latency.json").write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
