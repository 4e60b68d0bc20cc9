// Site-wide behaviour. Page-specific scripts live beside this file; no inline scripts (CSP).
(function () {
  "use strict";

  // Line wrapping of code and test data: a button toggles the "wrap" class on the code boxes
  // of its scope (its own .code-box, or every <pre> under data-wrap-scope).
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-wrap-toggle]");
    if (!button) return;
    var scopeSelector = button.getAttribute("data-wrap-scope");
    var scope = scopeSelector ? document.querySelector(scopeSelector) : button.closest(".code-box");
    if (!scope) return;
    var on = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    scope.classList.toggle("wrap-on", on);
    scope.classList.toggle("wrap-off", !on);
  });

  // Buttons with data-confirm ask before their form submits.
  document.addEventListener("submit", function (event) {
    var button = event.submitter || event.target.querySelector("[data-confirm]");
    var message = button && button.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
})();
