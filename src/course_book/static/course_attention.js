// Attention, Step by Step: small behaviours of the site the theme does not have.
(function () {
  "use strict";

  // A collapsed dropdown's whole title opens it (issue 25, item 8). A solution's title is a
  // link to its exercise ("Solution to Exercise 7"): sphinx-togglebutton ignores clicks on
  // that link, so the reader jumped to the exercise and the solution stayed closed. While the
  // dropdown is closed, a click on the link opens it instead; once open, the link works.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(".admonition-title a");
    if (!link) return;
    var title = link.closest(".admonition-title");
    var box = title.parentElement;
    var button = title.querySelector(".toggle-button");
    if (!button || !box.classList.contains("toggle-hidden")) return;
    event.preventDefault();
    event.stopPropagation();
    button.click();
  }, true);

  // The right-hand "Contents" follows the reading (issue 25, item 12). The theme lights an
  // entry only when its heading crosses a band at the top of the window, so fast scrolling
  // skipped entries (the toolbox stayed on "Cross-entropy" through "Adam") and the last ones,
  // whose headings never reach the band, never lit. Here the entry lit is the last heading
  // above 30 % of the window, or the last entry once the page is scrolled to its end.
  function followContents() {
    var nav = document.getElementById("pst-page-toc-nav");
    if (!nav) return;
    var links = Array.prototype.slice.call(nav.querySelectorAll("a[href^='#']"));
    var entries = Array.prototype.slice.call(nav.querySelectorAll(".toc-entry"));
    var targets = links.map(function (a) {
      var t = document.getElementById(decodeURIComponent(a.hash.slice(1)));
      return t && (t.querySelector("h1, h2, h3, h4, h5, h6") || t);
    });
    if (!links.length) return;
    function light(link) {
      links.forEach(function (a) {
        var on = a === link;
        a.classList.toggle("active", on);
        if (on) a.setAttribute("aria-current", "true"); else a.removeAttribute("aria-current");
      });
      entries.forEach(function (e) { e.classList.toggle("active", !!link && e.contains(link)); });
    }
    function update() {
      var header = document.getElementById("pst-header");
      var line = (header ? header.getBoundingClientRect().height : 0) + 0.3 * window.innerHeight;
      var current = null;
      targets.forEach(function (t, i) {
        if (t && t.getBoundingClientRect().top <= line) current = links[i];
      });
      var end = document.documentElement.scrollHeight - 2;
      if (window.innerHeight + window.scrollY >= end) current = links[links.length - 1];
      if (current) light(current);
    }
    var pending = false;
    function later() {  // after the theme's own observer has run in this frame
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () {
        requestAnimationFrame(function () { pending = false; update(); });
      });
    }
    window.addEventListener("scroll", later, { passive: true });
    window.addEventListener("resize", later);
    later();
  }

  // Accessibility fixes of the theme's markup (issue 24, item 35; axe-core, WCAG 2.x AA).
  function accessible() {
    // The search buttons show "Search Ctrl+K" but were named "Search" (label-content-name-
    // mismatch): their name comes from what they show.
    document.querySelectorAll(".search-button-field[aria-label]").forEach(function (b) {
      b.removeAttribute("aria-label");
    });
    // myst-nb's "Show code cell source" summaries were all named "Toggle hidden content": their
    // name comes from what they show (and says which, in the page's language).
    document.querySelectorAll("details > summary[aria-label]").forEach(function (s) {
      if (s.textContent.trim()) s.removeAttribute("aria-label");
    });
    // (The colour-mode button's icons are marked as decoration in the HTML itself, by the
    // build: course_book.book._accessible_theme_switch.)
    // A box that scrolls sideways (a wide table) can be reached and scrolled by keyboard.
    document.querySelectorAll("div.ca-table, .pst-scrollable-table-container, " +
                              "div.cell_output .output.text_html, " +
                              'mjx-container[display="true"]').forEach(function (box) {
      if (box.scrollWidth > box.clientWidth && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
      }
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", accessible);
  else accessible();
  window.addEventListener("load", accessible);
  window.addEventListener("load", followContents);
})();
