// Typeset the math of rendered statements with KaTeX's auto-render. The server leaves math as
// \( ... \) and \[ ... \] inside .math-inline / .math-block, escaped; KaTeX reads the text.
(function () {
  "use strict";
  var options = {
    delimiters: [
      { left: "\\[", right: "\\]", display: true },
      { left: "\\(", right: "\\)", display: false }
    ],
    throwOnError: false,
    strict: "ignore"
  };

  function typeset(root) {
    if (typeof window.renderMathInElement !== "function") return;
    (root || document).querySelectorAll(".markdown").forEach(function (el) {
      if (el.dataset.typeset === "1") return;
      window.renderMathInElement(el, options);
      el.dataset.typeset = "1";
    });
  }

  document.addEventListener("DOMContentLoaded", function () { typeset(document); });
  document.addEventListener("htmx:afterSwap", function (event) { typeset(event.target); });
})();
