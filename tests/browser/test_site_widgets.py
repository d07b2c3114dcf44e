"""The website's widgets are honest: the ones that compute in the page agree with hetlab, the ones that step
through frames show a new figure for every position they offer, and the static ones offer no control.

The JavaScript models (book/_assets/hetlab/models.js) are run in headless Chromium on the built site and
compared with the Python library on at least 100 random inputs per flagship widget (random draws seeded, so a
failure repeats): the chapter-1 schedulers, chapter 4's granularity model, Amdahl and Gustafson, the pipeline
simulator and the memory-per-GPU model. Then each live widget's readout, after the reader changes a control,
must equal the notebook widget's readout for the same values (hetlab.book.views).
"""
from __future__ import annotations

import json
import math
import re

import labdriver  # on sys.path via conftest.py
import numpy as np
import pytest

from hetlab import formulas as F
from hetlab import schedulers as S
from hetlab.devices import Device
from hetlab.models import granularity as G
from hetlab.models import pipelines as sim
from hetlab.models import training as T
from hetlab.tasks import Task, TaskGraph

CASES = 120
SETTLE_MS = 120_000


@pytest.fixture(scope="module")
def page(built_site):
    with labdriver.static_server(built_site) as base, labdriver.browser() as browser:
        context = browser.new_context(viewport={"width": 1300, "height": 900})
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                      else route.abort())
        page = context.new_page()
        page.goto(f"{base}/chapters/08-typical-patterns.html", wait_until="load", timeout=SETTLE_MS)
        page.wait_for_function("() => window.HetlabModels && window.HetlabWidgets", timeout=SETTLE_MS)
        page.base = base
        yield page
        context.close()


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) or (math.isinf(a) and math.isinf(b))


def test_schedulers_match_hetlab_on_random_kitchens(page):
    rng = np.random.default_rng(1)
    cases = []
    for _ in range(CASES):
        n = int(rng.integers(1, 9))
        kinds = ["CPU", "GPU", "NPU"]
        tasks = [{"name": f"t{i}", "work": float(rng.choice([rng.integers(1, 30), rng.uniform(0.5, 30)])),
                  "kind": str(rng.choice(kinds))} for i in range(n)]
        devices = [{"name": k, "speed": float(rng.choice([rng.integers(5, 25), rng.uniform(1, 25)]))} for k in kinds]
        cases.append({"tasks": tasks, "devices": devices})
    got = page.evaluate("""(cases) => cases.map(c => Object.fromEntries(
        ["article_demo", "eft", "lpt", "optimal"].map(p => {
            const s = HetlabModels.POLICIES[p](c.tasks, c.devices);
            return [p, {deviceOf: s.deviceOf, start: s.start, end: s.end, makespan: s.makespan}];
        })))""", cases)
    python = {"article_demo": S.article_demo, "eft": S.eft, "lpt": S.lpt, "optimal": S.optimal}
    for case, js in zip(cases, got):
        graph = TaskGraph([Task(t["name"], t["work"], t["kind"]) for t in case["tasks"]])
        devices = [Device(d["name"], d["name"], d["speed"]) for d in case["devices"]]
        for policy, schedule in python.items():
            s = schedule(graph, devices)
            assert close(js[policy]["makespan"], s.makespan), (policy, case)
            if policy != "optimal":   # several assignments can be optimal; the others must agree task by task
                assert js[policy]["deviceOf"] == [int(d) for d in s.device_of], (policy, case)
                assert all(close(a, b) for a, b in zip(js[policy]["start"], s.start)), (policy, case)


def test_granularity_matches_hetlab(page):
    rng = np.random.default_rng(2)
    cases = [[float(rng.choice([rng.integers(1, 1000) * 100, rng.uniform(1, 1e6)])),
              float(rng.choice([rng.integers(1, 101) / 10, rng.uniform(0.01, 50)])), int(rng.integers(1, 300))]
             for _ in range(CASES)]
    got = page.evaluate("""(cases) => cases.map(([W, Os, P]) => {
        const r = HetlabModels.granularity(W, Os, P);
        return [r.nStar, r.tStar, r.k, r.tK, r.tM, r.t2P, HetlabModels.totalTimeOn(7, W, Os, P, "rounds"),
                HetlabModels.totalTimeOn(7, W, Os, P, "ideal")];
    })""", cases)
    for (W, Os, P), js in zip(cases, got):
        n_star = F.optimal_tasks(W, Os)
        k = G.optimal_task_count(W, Os, P)
        m = 3 * P // 2
        want = [n_star, F.total_time(max(n_star, 1.0), W, Os), k, G.total_time_on(k, W, Os, P),
                G.total_time_on(m, W, Os, P, model="rounds"), G.total_time_on(2 * P, W, Os, P, model="rounds"),
                G.total_time_on(7, W, Os, P, model="rounds"), G.total_time_on(7, W, Os, P)]
        assert all(close(a, float(b)) for a, b in zip(js, want)), ((W, Os, P), js, want)


def test_amdahl_and_gustafson_match_hetlab(page):
    rng = np.random.default_rng(3)
    cases = [[float(rng.choice([0.0, 1.0, rng.uniform(0, 1), round(rng.uniform(0, 1), 2)])),
              float(rng.choice([2 ** int(rng.integers(0, 13)), rng.uniform(1, 1e5)]))] for _ in range(CASES)]
    got = page.evaluate("""(cases) => cases.map(([p, N]) => [HetlabModels.amdahl(p, N),
        HetlabModels.amdahlLimit(p), HetlabModels.gustafson(p, N)])""", cases)
    for (p, N), js in zip(cases, got):
        want = [F.amdahl(p, N), F.amdahl_limit(p), F.gustafson(p, N)]
        js = [math.inf if v is None else v for v in js]
        assert all(close(a, float(b)) for a, b in zip(js, want)), ((p, N), js, want)


def test_pipeline_simulator_matches_hetlab(page):
    rng = np.random.default_rng(4)
    cases = []
    for _ in range(CASES):
        p = int(rng.integers(1, 9))
        times = [float(rng.choice([1.0, rng.uniform(0.2, 3.0)])) for _ in range(p)]
        cases.append([times, int(rng.integers(1, 17)), str(rng.choice(["gpipe", "1f1b"]))])
    got = page.evaluate("""(cases) => cases.map(([times, m, method]) => {
        const s = HetlabModels.pipelineSchedule(times, m, method);
        return {makespan: s.makespan, bubble: s.bubble, peaks: s.peaks,
                starts: Object.fromEntries(s.tasks.map(t => [`${t.kind}${t.mb}@S${t.stage}`, t.start]))};
    })""", cases)
    for (times, m, method), js in zip(cases, got):
        s = sim.pipeline_schedule(times, m, method=method)
        assert close(js["makespan"], s.makespan) and close(js["bubble"], s.info["bubble_fraction"]), (times, m, method)
        assert js["peaks"] == list(s.info["peak_activations"]), (times, m, method)
        for i, task in enumerate(s.graph.tasks):
            assert close(js["starts"][task.name], float(s.start[i])), (task.name, times, m, method)


def test_memory_per_gpu_matches_hetlab(page):
    rng = np.random.default_rng(5)
    models = {"7B": (7e9, 32, 4096, 32), "13B": (13e9, 40, 5120, 40), "70B": (70e9, 80, 8192, 64),
              "175B": (175e9, 96, 12288, 96)}   # LLaMA 7B/13B/70B and GPT-3 175B (the widget's table)
    cases = []
    while len(cases) < CASES:   # Megatron-LM splits whole layers and whole heads: only such splits are models
        c = {"model": str(rng.choice(list(models))), "dp": int(2 ** rng.integers(0, 7)),
             "tp": int(2 ** rng.integers(0, 4)), "pp": int(2 ** rng.integers(0, 5)),
             "zeroStage": int(rng.integers(0, 4)),
             "microBatch": int(rng.integers(1, 9)), "recompute": str(rng.choice(["none", "selective", "full"]))}
        _, layers, _, heads = models[c["model"]]
        if layers % c["pp"] == 0 and heads % c["tp"] == 0:
            cases.append(c)
    got = page.evaluate("""(cases) => cases.map(c => {
        const [psi, layers, hidden, heads] = HetlabModels.MODELS[c.model];
        return HetlabModels.memoryPerDevice(psi, {...c, layers, hidden, heads, sequence: 2048});
    })""", cases)
    js_models = page.evaluate("() => HetlabModels.MODELS")
    assert {k: tuple(v) for k, v in js_models.items()} == models
    for c, js in zip(cases, got):
        psi, layers, hidden, heads = models[c["model"]]
        want = T.memory_per_device(psi, dp=c["dp"], tp=c["tp"], pp=c["pp"], zero_stage=c["zeroStage"], layers=layers,
                                   hidden=hidden, heads=heads, sequence=2048, micro_batch=c["microBatch"],
                                   recompute=c["recompute"])
        for key, name in [("params", "params"), ("grads", "grads"), ("optimizer", "optimizer"),
                          ("activations", "activations"), ("total", "total"), ("modelStates", "model_states")]:
            assert close(js[key], want[name]), (c, key, js[key], want[name])


# --- the widgets on the pages ----------------------------------------------------------------------------

def _factory(name: str):
    from hetlab.book import views

    for candidate in (name, f"{name}_explorer"):
        if hasattr(views, candidate):
            return getattr(views, candidate)
    raise AssertionError(f"hetlab.book.views has no widget {name!r} (nor {name}_explorer)")


#: For each live widget: control positions to set in the page (name -> value), as the reader would.
LIVE_POSITIONS = {
    "orchestration": [{"step": 3}, {"step": 0}, {"policy": "lpt", "step": 5}, {"policy": "optimal", "step": 8}],
    "granularity": [{"W": 2000}, {"Os": 3.0}, {"P_devices": 7}, {"W": 100000, "Os": 0.1, "P_devices": 256}],
    "amdahl": [{"p": 0.5}, {"N": 16}, {"p": 1.0}, {"p": 0.99, "N": 4096}],
    "pipeline": [{"stages": 6}, {"micro_batches": 3}, {"method": "GPipe"}, {"slow": 2.5, "stages": 5}],
    "memory": [{"model": "175B"}, {"dp": 64}, {"tp": 8, "pp": 16}, {"recompute": "完全重计算", "micro_batch": 4},
               {"model": "13B"}],
}

SET_CONTROL = """([widget, name, value]) => {
    const box = document.querySelector(`.hetlab-widget[data-mode=live][data-widget="${widget}"]`);
    const specs = HetlabWidgets.LIVE[widget].controls;
    const k = specs.findIndex(s => s.name === name);
    const input = box.querySelectorAll('.hetlab-control input, .hetlab-control select')[k];
    if (input.tagName === 'SELECT') input.value = String(specs[k].options.findIndex(o => o[1] === value));
    else if (input.type === 'checkbox') input.checked = value;
    else input.value = value;
    input.dispatchEvent(new Event('input', {bubbles: true}));
    return box.dataset.drawn;
}"""


def test_live_widget_controls_mirror_the_notebook_widget(page):
    """Same controls as the notebook's widget: names, labels, ranges, options and starting values."""
    import ipywidgets as w

    js = page.evaluate("() => Object.fromEntries(Object.entries(HetlabWidgets.LIVE).map(([k, v]) => [k, v.controls]))")
    for name, controls in js.items():
        explorer = _factory(name)()
        python = [c for c in controls if c["name"] in explorer.controls]
        assert [c["name"] for c in python] == list(explorer.controls), name
        for spec in python:
            control = explorer.controls[spec["name"]]
            assert spec["label"] == control.description and spec["value"] == control.value, (name, spec["name"])
            if isinstance(control, w.Dropdown):
                pairs = [tuple(o) if isinstance(o, tuple) else (str(o), o) for o in control.options]
                assert [tuple(o) for o in spec["options"]] == pairs, (name, spec["name"])
            else:
                assert (spec["min"], spec["max"], spec["step"]) == (control.min, control.max, control.step), \
                    (name, spec["name"])


@pytest.mark.parametrize("widget,page_name", [("orchestration", "01-visual-demo"), ("granularity", "04-granularity"),
                                              ("amdahl", "06-sync-communication"), ("pipeline", "08-typical-patterns"),
                                              ("memory", "08-typical-patterns")])
def test_live_widget_readout_equals_the_notebook_widget(page, widget, page_name):
    page.goto(f"{page.base}/chapters/{page_name}.html", wait_until="load", timeout=SETTLE_MS)
    box = f'.hetlab-widget[data-mode=live][data-widget="{widget}"]'
    page.wait_for_function(f"() => document.querySelector('{box}') && document.querySelector('{box}').dataset.drawn",
                           timeout=SETTLE_MS)
    explorer = _factory(widget)()
    text = page.locator(f"{box} .hetlab-readout").inner_text()
    assert text == explorer.text, (widget, "default")
    assert page.locator(f"{box} svg.hetlab-chart").count() == 1
    for position in LIVE_POSITIONS[widget]:
        for name, value in position.items():
            drawn = page.evaluate(SET_CONTROL, [widget, name, value])
            page.wait_for_function(f"(d) => document.querySelector('{box}').dataset.drawn !== d", arg=drawn,
                                   timeout=SETTLE_MS)
        want = explorer.update(**position)
        assert page.locator(f"{box} .hetlab-readout").inner_text() == want, (widget, position)


def test_every_site_widget_is_live_frames_or_static_and_frames_change_the_figure(built_site, page):
    report = json.loads((built_site.parent / "site-report.json").read_text(encoding="utf-8"))
    modes = [mode for p in report["pages"].values() for _, mode in p["widgets"]]
    assert modes.count("live") >= 5, modes
    counts = {}
    for html in sorted((built_site / "chapters").glob("*.html")):
        text = html.read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-view+json" not in text, f"{html.name}: an ipywidgets view is left"
        for mode in re.findall(r'class="hetlab-widget" data-mode="(\w+)"', text):
            counts[mode] = counts.get(mode, 0) + 1
        if 'data-mode="frames"' not in text:
            continue
        page.goto(f"{page.base}/chapters/{html.name}", wait_until="load", timeout=SETTLE_MS)
        frames = page.locator('.hetlab-widget[data-mode=frames]')
        for k in range(frames.count()):
            box = frames.nth(k)
            box.scroll_into_view_if_needed()
            image = box.locator("img")
            manifest = json.loads(box.locator("script.hetlab-frames").inner_text())
            inputs = box.locator(".hetlab-control input, .hetlab-control select")
            assert inputs.count() == len(manifest["controls"]) > 0, html.name
            before = image.get_attribute("src")
            first = inputs.nth(0)
            if first.evaluate("e => e.tagName") == "SELECT":
                options = first.locator("option").count()
                first.select_option(index=(int(first.input_value()) + 1) % options)
            elif first.get_attribute("type") == "checkbox":
                first.click()
            else:
                first.focus()
                first.press("End" if first.input_value() != first.get_attribute("max") else "Home")
            page.wait_for_function("([img, src]) => img.src !== src && img.complete && img.naturalWidth > 0",
                                   arg=[image.element_handle(), before], timeout=SETTLE_MS)
            shown = box.evaluate("b => b.dataset.shown")
            assert box.locator(".hetlab-readout").inner_text() == manifest["frames"][shown][1].strip()
    for html in (built_site / "chapters").glob("*.html"):
        for block in re.findall(r'data-mode="static".*?</figure>', html.read_text(encoding="utf-8"), re.S):
            assert "<input" not in block and "<select" not in block and "Binder" in block
    print(f"site widgets: {counts}")
