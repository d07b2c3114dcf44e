/* The ☰ (chapter list) and TOC buttons of the article header.
 *
 * pydata-sphinx-theme 0.17 binds its drawer only to the *first* .primary-toggle / .secondary-toggle of the page,
 * a hidden button in its own header, while sphinx-book-theme 1.3 shows its own buttons with the same classes
 * (pydata-sphinx-theme issue #2451): on a phone the visible buttons did nothing. Here each visible button
 * forwards to the bound one, which opens the drawer; on a wide screen, where the chapter list is already
 * shown, ☰ hides or shows it instead. */
(function () {
  "use strict";
  const WIDE = 960;

  function bind() {
    for (const kind of ["primary", "secondary"]) {
      const buttons = [...document.querySelectorAll(`.${kind}-toggle`)];
      if (buttons.length < 2) continue;
      const bound = buttons[0];
      for (const button of buttons.slice(1)) {
        button.addEventListener("click", (event) => {
          event.preventDefault();
          event.stopImmediatePropagation();
          if (kind === "primary" && window.innerWidth >= WIDE) {
            const hidden = document.documentElement.classList.toggle("hetlab-no-primary");
            button.setAttribute("aria-expanded", String(!hidden));
            return;
          }
          bound.click();
        }, true);
      }
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", bind);
  else bind();
})();
