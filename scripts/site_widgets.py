"""The website's version of every notebook widget (hetlab.book.views), one of three kinds:

- ``live``: the model is ported to JavaScript (book/_assets/hetlab/models.js) and the page recomputes the
  figure on every key press; tests/browser/test_site_widgets.py checks the port against hetlab;
- ``frames``: hetlab draws the figure at build time for a grid of control positions (every option of a
  drop-down, a few telling values of a slider); the page's controls only stop at those positions;
- ``static``: one figure, with a one-line note and launch links instead of controls that would do nothing.

A factory this file does not know (a new or renamed widget) gets frames at automatic positions (ends and
default of each slider, every option), or, when hetlab no longer has it, the picture stored in the notebook
as a static figure; tests/test_site.py lists every factory of ``hetlab.book.views`` that is not named here.
Frames are cached in .cache/site-frames, per widget and positions, and redrawn when the hetlab sources change
(HETLAB_SITE_STALE_FRAMES=1 keeps earlier drawings: a quick preview while hetlab is being edited).
"""
from __future__ import annotations

import hashlib
import html
import io
import itertools
import json
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("HETLAB_SITE_FRAMES_CACHE", ROOT / ".cache" / "site-frames"))
DPI = 96
#: The most frames one widget may have (a few MB of PNG at most, a few seconds to draw).
MAX_FRAMES = 100
FORMAT = 3   # bump when the frame files or the manifest change

#: Widgets whose model runs in the page (widgets.js LIVE), by factory name.
LIVE = {"orchestration", "granularity", "amdahl", "pipeline", "memory"}
#: Frames: positions per control (controls not listed: automatic; a list of one value fixes the control).
FRAMES: dict[str, dict[str, list]] = {
    "serial_vs_parallel": {"spread": [0.0, 0.2, 0.5, 1.0]},
    "parallelism_combo": {"data": [1, 2, 4, 8], "tensor": [1, 2, 4], "pipeline": [1, 2, 4]},
    "tasks_vs_devices": {"tasks": [1, 2, 4, 8, 16], "devices": [1, 2, 3, 4, 8]},
    "peak_compute": {"cores": [8, 64, 108, 128], "ghz": [1.4, 2.45, 3.5], "fma": [2, 4], "lanes": [1, 8, 16],
                     "precision": ["FP64"]},
    "roofline": {"log_intensity": [-1.0, 0.0, 1.0, 2.0, 3.0], "bandwidth": [200.0, 1555.0, 3000.0],
                 "peak": [19.5, 156.0, 312.0]},
    "variance": {"noise": [0.0, 0.3, 1.0], "slowdown": [1.0, 4.0], "seed": [0, 2, 7, 14]},   # ch5 5.3 try-it
    "policies": {"tasks": [3, 8, 24], "steal_latency": [0.0, 0.5]},     # ch5 5.8 try-it: the fewest dishes, 3
    "barrier": {"workers": [2, 4, 8, 16, 32], "noise": [0.0, 0.3, 0.6, 1.0], "seed": [0]},
    "lock": {"critical_share": [0.02, 0.05, 0.1, 0.2, 0.3, 0.5], "noise": [0.0, 0.3, 1.0]},
    "comm_peak": {"p": [0.9, 0.95, 0.99, 0.999]},
    "efficiency": {"p": [0.5, 0.9, 0.95, 0.99, 1.0], "N": [1, 4, 16, 64, 256, 1024, 4096]},
    "metrics": {"tasks": [8, 16, 32, 64, 96], "spread": [0.0, 0.5, 1.0, 1.5]},
    "imbalance": {"tasks": [8, 16, 32, 64], "spread": [0.0, 0.5, 1.5]},
    "balance": {"tasks": [8, 20, 40, 80]},
    "workflow": {"bandwidth": [10, 100], "seed": [0, 1, 2, 3]},
    "training": {"micro_batches": [8, 64], "tp": [1, 2, 8]},
    "serving": {"max_batch": [32], "rate": [1, 3, 6]},
    "phone": {},
    "article_policies": {"gpu_speed": [5, 10, 20, 40]},
    "scaling_reality": {"p": [0.95, 0.99], "grad_gb": [0.5, 2.0], "alpha_us": [5.0, 20.0],
                        "log2_n": [0.0, 4.0, 7.0, 10.0]},
    "transfer_cost": {"log2_n": [4.0, 7.0, 10.0, 13.0], "cpu_gflops": [100.0, 2000.0], "copies": [0, 1, 2]},
    "bucket_whiteboard": {"bucket_mb": [1.0, 25.0, 300.0, 3000.0], "n_devices": [8, 64, 256],
                          "bandwidth_gbs": [10.0, 50.0, 100.0], "backward_s": [0.3]},
    "isoefficiency": {"efficiency": [0.5, 0.65, 0.8, 0.95]},
    "host_costs": {"workers": [1, 4, 8, 15], "handoff_us": [0.0, 40.0, 80.0, 200.0], "hold_us": [10.0, 34.0, 60.0]},
    "pool_rounds": {"workers": [1, 2, 4, 8, 16], "overhead_us": [10.0, 100.0, 300.0, 1000.0, 2000.0]},
}
#: Widgets shown as a static figure on the site.
STATIC: set[str] = set()


def canonical(name: str | None) -> str | None:
    """The name this file knows a factory by: views.amdahl and views.amdahl_explorer are the same widget."""
    return None if name is None else name.removesuffix("_explorer")


def mode_of(name: str | None) -> str:
    name = canonical(name)
    if name in LIVE:
        return "live"
    if name in STATIC or name is None:
        return "static"
    return "frames"


def _factory(name: str):
    from hetlab.book import views

    factory = getattr(views, name, None)
    return factory if callable(factory) else None


def _values_of(control, name: str = "") -> tuple[str, list, list[str]]:
    """(kind, every value, labels) of a control at automatic positions (a random seed stays at its default)."""
    import ipywidgets as w

    if hasattr(control, "options"):
        pairs = [o if isinstance(o, tuple) else (str(o), o) for o in control.options]
        return "select", [v for _, v in pairs], [str(label) for label, _ in pairs]
    if isinstance(control, w.Checkbox):
        return "checkbox", [False, True], ["否", "是"]
    lo, hi, value = control.min, control.max, control.value
    if "seed" in name:
        values = [value]
    elif isinstance(control, w.IntSlider) and hi - lo <= 4:
        values = list(range(lo, hi + 1))
    else:
        values = sorted({lo, value, hi})
    return "range", values, []


def positions(name: str, explorer) -> list[dict]:
    """The controls of ``explorer`` with the positions the site offers: [{name, label, kind, values, labels, value}]."""
    import ipywidgets as w

    wanted = FRAMES.get(canonical(name), {})
    out = []
    for key, control in explorer.controls.items():
        kind, values, labels = _values_of(control, key)
        if key in wanted:
            values = list(wanted[key])
            if kind == "select":
                pairs = dict(zip([repr(v) for v in _values_of(control)[1]], _values_of(control)[2]))
                labels = [pairs.get(repr(v), str(v)) for v in values]
        if control.value not in values and len(values) > 1:   # the notebook's default is always one position
            values = sorted(values + [control.value]) if kind == "range" else values + [control.value]
            if kind == "select":
                labels = labels + [str(control.value)]
        if kind == "range":
            fmt = getattr(control, "readout_format", ".2f") if isinstance(control, w.FloatSlider) else "d"
            labels = [format(v, fmt) for v in values]
        if len(values) == 1:
            explorer.update(**{key: values[0]})
        out.append({"name": key, "label": control.description, "kind": kind, "values": values, "labels": labels,
                    "value": values[0] if len(values) == 1 else control.value})
    return out


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((ROOT / "hetlab").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def _quantize(png: bytes) -> bytes:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    buffer = io.BytesIO()
    # 64 colours keep text and flat colours crisp at about a third of the RGB size (as chapter 1's player).
    image.quantize(colors=64).save(buffer, format="png", optimize=True)
    return buffer.getvalue()


def render_frames(name: str, folder: str) -> dict:
    """Draw every position of widget ``name`` into ``folder``; return its manifest. Runs in a worker process."""
    import time

    import matplotlib

    matplotlib.use("Agg")
    began = time.perf_counter()
    factory = _factory(name)
    explorer = factory()
    explorer.dpi = DPI
    controls = positions(name, explorer)
    varying = [c for c in controls if len(c["values"]) > 1]
    count = 1
    for c in varying:
        count *= len(c["values"])
    if count > MAX_FRAMES:
        raise ValueError(f"site widget {name!r}: {count} positions, more than {MAX_FRAMES}; "
                         "name fewer in scripts/site_widgets.py FRAMES")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    frames = {}
    for combo in itertools.product(*[range(len(c["values"])) for c in varying]):
        text = explorer.update(**{c["name"]: c["values"][k] for c, k in zip(varying, combo)})
        file = "-".join(map(str, combo)) + ".png"
        (out / file).write_bytes(_quantize(explorer.png()))
        frames[",".join(map(str, combo))] = [file, text]
    width, height = explorer.figure.get_size_inches()
    return {"controls": varying, "fixed": [c for c in controls if len(c["values"]) == 1], "frames": frames,
            "inches": [float(width), float(height)], "seconds": round(time.perf_counter() - began, 1)}


class Frames:
    """Frames of every widget a build needs, drawn in parallel (or read from the cache)."""

    def __init__(self, static_dir: Path):
        self.static_dir = static_dir
        self.digest = None
        self.manifests: dict[str, dict] = {}
        self.failed: dict[str, str] = {}

    def _key(self, name: str) -> str:
        spec = json.dumps([FORMAT, DPI, name, FRAMES.get(canonical(name), {})], sort_keys=True, default=str)
        return hashlib.sha256(spec.encode()).hexdigest()[:20]

    def _fresh(self, manifest: dict) -> bool:
        """Drawn from today's hetlab sources (or HETLAB_SITE_STALE_FRAMES=1: any earlier drawing, for previews)."""
        if os.environ.get("HETLAB_SITE_STALE_FRAMES"):
            return True
        if self.digest is None:
            self.digest = _sources_digest()
        return manifest.get("sources") == self.digest

    def prepare(self, names: list[str]) -> None:
        """Draw (or reuse) the frames of ``names``; a widget that cannot be drawn is recorded in ``failed``."""
        todo = []
        if self.digest is None and not os.environ.get("HETLAB_SITE_STALE_FRAMES"):
            self.digest = _sources_digest()    # before drawing: an edit made while drawing redraws next time
        for name in dict.fromkeys(names):
            if _factory(name) is None:
                self.failed[name] = "hetlab.book.views has no such factory"
                continue
            cached = CACHE / name / self._key(name)
            manifest = None
            if (cached / "manifest.json").exists():
                manifest = json.loads((cached / "manifest.json").read_text(encoding="utf-8"))
            if manifest is not None and self._fresh(manifest):
                self.manifests[name] = manifest
            else:
                todo.append((name, cached))
        if todo:
            workers = max(1, min(len(todo), (os.cpu_count() or 2), 2))
            with ProcessPoolExecutor(max_workers=workers) as pool:
                jobs = {name: (pool.submit(render_frames, name, str(CACHE / f".tmp-{cached.name}")), cached)
                        for name, cached in todo}
                for name, (job, cached) in jobs.items():
                    try:
                        manifest = job.result()
                    except Exception as error:  # a broken widget must not break the site: it is shown static
                        self.failed[name] = f"{type(error).__name__}: {error}"
                        continue
                    if cached.parent.exists():     # keep only the newest version of each widget
                        shutil.rmtree(cached.parent)
                    cached.parent.mkdir(parents=True)
                    (CACHE / f".tmp-{cached.name}").rename(cached)
                    manifest["sources"] = self.digest or _sources_digest()
                    (cached / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
                    self.manifests[name] = manifest
        for name in self.manifests:
            target = self.static_dir / "frames" / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(CACHE / name / self._key(name), target, ignore=shutil.ignore_patterns("manifest.json"))


def _stored_picture(nb: dict, model_id: str | None) -> tuple[str | None, str]:
    """The PNG (base64) and the readout the notebook stored for a widget view, found in its widget state."""
    import re

    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = state.get("state", {})
    seen, queue, png, texts = set(), [model_id], None, []
    while queue:
        mid = queue.pop(0)
        if not mid or mid in seen or mid not in models:
            continue
        seen.add(mid)
        model = models[mid]
        st = model.get("state", {})
        if model.get("model_name") == "ImageModel" and png is None:
            for buf in model.get("buffers", []):
                if buf.get("path") == ["value"]:
                    png = buf.get("data")
        if model.get("model_name") == "HTMLModel" and st.get("value"):
            texts.append(re.sub(r"<[^>]+>", "", st["value"]))
        for child in st.get("children", []):
            queue.append(str(child).replace("IPY_MODEL_", ""))
    return png, html.unescape("\n".join(texts))


def widget_html(frames: Frames, name: str | None, args: str, number: str, section: str, nb: dict,
                model_id: str | None, context) -> tuple[str, str]:
    """The HTML block replacing one widget output, and its mode ("live", "frames" or "static")."""
    from site_notebooks import launch_links, phone_class

    mode = mode_of(name)
    if mode == "frames" and (name in frames.failed or name not in frames.manifests):
        mode = "static"
    caption = f"图 {number}　{html.escape(section or '交互图')}"
    links = launch_links(context)
    if mode == "live":
        note = ("在网页中实时计算：拖动滑块、按方向键或换一个选项，图和读数立即重算"
                "（JavaScript 版模型，测试逐项对照 hetlab 库）。")
        body = ('<div class="hetlab-controls"></div><div class="hetlab-figure"></div>'
                '<pre class="hetlab-readout" aria-live="polite"></pre>')
        return (f'<figure class="hetlab-widget" data-mode="live" data-widget="{canonical(name)}">{body}'
                f'<figcaption>{caption}<br><span class="hetlab-widget-note">{note}</span></figcaption></figure>'), mode
    if mode == "frames":
        m = frames.manifests[name]
        count = len(m["frames"])
        start = ",".join(str(c["values"].index(c["value"])) for c in m["controls"])
        file, text = m["frames"].get(start, next(iter(m["frames"].values())))
        manifest = {"base": f"../_static/frames/{name}/", "controls": m["controls"], "frames": m["frames"]}
        fixed = "、".join(f"{c['label']} = {c['labels'][0]}" for c in m["fixed"])
        note = (f"网页版：hetlab 在构建网站时画好了 {count} 种组合，控件只停在这些位置"
                f"{'（其余参数取 ' + html.escape(fixed) + '）' if fixed else ''}；要任意取值，请{links}。")
        width = int(m["inches"][0] * DPI)
        css = phone_class(width, DPI)
        data = json.dumps(manifest, ensure_ascii=False).replace("</", "<\\/")
        return (f'<figure class="hetlab-widget" data-mode="frames" data-widget="{name}">'
                f'<div class="hetlab-controls"></div><div class="hetlab-figure hetlab-scroll">'
                f'<img class="hetlab-figure-img {css}" src="../_static/frames/{name}/{file}" '
                f'alt="图 {number}：{html.escape(section)}（交互图，当前位置）"></div>'
                f'<pre class="hetlab-readout" aria-live="polite">{html.escape(text)}</pre>'
                f'<script type="application/json" class="hetlab-frames">{data}</script>'
                f'<figcaption>{caption}<br><span class="hetlab-widget-note">{note}</span></figcaption></figure>'), mode
    png, text = _stored_picture(nb, model_id)
    picture = ""
    if png:
        picture = (f'<div class="hetlab-figure hetlab-scroll"><img class="hetlab-figure-img hetlab-minw-560" '
                   f'src="data:image/png;base64,{png}" alt="图 {number}：{html.escape(section)}（静态图）"></div>')
    readout = f'<pre class="hetlab-readout">{html.escape(text)}</pre>' if text else ""
    note = f"网页上是静态图（默认参数），这里没有可拖动的控件；要交互，请{links}。"
    return (f'<figure class="hetlab-widget" data-mode="static" data-widget="{name or ""}">{picture}{readout}'
            f'<figcaption>{caption}<br><span class="hetlab-widget-note">{note}</span></figcaption></figure>'), "static"
