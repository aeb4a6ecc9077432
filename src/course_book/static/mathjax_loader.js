// Load MathJax (served from this site, next to this file) once the page and its figures are
// drawn: typesetting the page first would delay every figure by most of a second.
(function () {
  var here = document.currentScript.src.replace(/[^/]*$/, "");
  function load() {
    var s = document.createElement("script");
    s.src = here + "mathjax/tex-mml-chtml.js";
    s.async = true;
    document.head.appendChild(s);
  }
  if (document.readyState === "complete") load();
  else window.addEventListener("load", load);
})();
