// The staff queue dashboard (/rq/): django-rq's job lists call jQuery's `.actions()`, which Django's
// admin stopped providing, and Django's own actions.js expects a counter element these pages lack.
// This wires the same behaviour without either: the header box selects every row, a row's box marks
// its row. The form posts as plain HTML, so the actions work without this file too.
(function () {
  "use strict";
  function wire() {
    const toggle = document.getElementById("action-toggle");
    const boxes = Array.from(document.querySelectorAll("tr input.action-select"));
    const mark = (box) => box.closest("tr").classList.toggle("selected", box.checked);
    boxes.forEach((box) => box.addEventListener("change", () => {
      mark(box);
      if (toggle) toggle.checked = boxes.every((b) => b.checked);
    }));
    if (toggle) toggle.addEventListener("change", () => boxes.forEach((box) => {
      box.checked = toggle.checked;
      mark(box);
    }));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wire);
  else wire();
})();
