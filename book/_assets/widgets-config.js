// Loaded before require.js on every page with embedded widgets (book/_config.yml, nb_ipywidgets_js).
// 1. require.js resolves module names under _static/vendor/npm/: the widget manager loads its icon fonts
//    relative to its own module URL, and scripts/build_site.py put them there.
var require = {
  baseUrl: new URL("_static/vendor/npm/", new URL(document.documentElement.dataset.content_root || "./",
                                                 document.baseURI)).href,
};
// 2. ipywidgets 8's controls typeset labels with MathJax 2's MathJax.Hub.Queue, which MathJax 3 lacks:
//    give every MathJax object (the configuration first, then MathJax itself) a Hub that forwards to
//    MathJax 3's typesetPromise once MathJax has started (its start-up typesets the whole page anyway).
(function () {
  const hub = {
    Queue(job) {
      const mj = window.MathJax;
      if (!mj || !mj.startup || !mj.typesetPromise) return;
      const element = Array.isArray(job) ? job[2] : undefined;
      mj.startup.promise.then(() => mj.typesetPromise(element ? [element] : undefined)).catch(() => {});
    },
  };
  let current = window.MathJax;
  const withHub = (value) => {
    if (value && typeof value === "object" && !value.Hub) {
      Object.defineProperty(value, "Hub", {value: hub, enumerable: false, configurable: true});
    }
    return value;
  };
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: () => current,
    set: (value) => { current = withHub(value); },
  });
  withHub(current);
})();
