// Study annotation and review pages: keyboard shortcuts, fields that depend on a label,
// time spent on the item, and math in statements. Shortcuts are read from data-shortcut
// attributes that the template renders next to each control, so the keys shown on the page
// are the keys that work. No inline scripts anywhere (CSP).
(function () {
  "use strict";

  // Time on the item counts only while the tab is visible.
  let visibleSince = document.visibilityState === "visible" ? performance.now() : null;
  let visibleTotal = 0;
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      visibleSince = performance.now();
    } else if (visibleSince !== null) {
      visibleTotal += performance.now() - visibleSince;
      visibleSince = null;
    }
  });
  function elapsedMs() {
    return Math.round(visibleTotal + (visibleSince === null ? 0 : performance.now() - visibleSince));
  }

  function typesetMath() {
    if (typeof window.renderMathInElement !== "function") return;
    document.querySelectorAll(".statement, .guidelines").forEach(function (el) {
      window.renderMathInElement(el, {
        delimiters: [
          { left: "\\[", right: "\\]", display: true },
          { left: "\\(", right: "\\)", display: false },
        ],
        throwOnError: false,
      });
    });
  }

  // <div data-show-when="validator_label=incorrect"> is shown only while that radio is chosen.
  function conditionalBlocks() {
    return Array.prototype.map.call(document.querySelectorAll("[data-show-when]"), function (el) {
      const parts = el.getAttribute("data-show-when").split("=");
      return { el: el, name: parts[0], value: parts[1] };
    });
  }
  function refreshConditional() {
    conditionalBlocks().forEach(function (block) {
      const chosen = document.querySelector('input[name="' + block.name + '"]:checked');
      block.el.hidden = !(chosen && chosen.value === block.value);
    });
  }
  // Choosing something inside a hidden block implies the label that shows it
  // (a reason implies "incorrect", a missing case implies "incomplete").
  function revealFor(el) {
    conditionalBlocks().forEach(function (block) {
      if (block.el.contains(el)) {
        const owner = document.querySelector('input[name="' + block.name + '"][value="' + block.value + '"]');
        if (owner && !owner.checked) {
          owner.checked = true;
          owner.dispatchEvent(new Event("change", { bubbles: true }));
        }
      }
    });
    refreshConditional();
  }

  function isTyping(target) {
    if (!target || !target.closest) return false;
    return Boolean(target.closest(
      'textarea, select, [contenteditable="true"], input:not([type]), input[type="text"], input[type="number"], input[type="search"]'
    ));
  }

  function onKey(ev) {
    const target = ev.target;
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter" && target && target.id === "try-input") {
      ev.preventDefault();
      document.getElementById("try-form").requestSubmit();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (isTyping(target)) {
      if (ev.key === "Escape") target.blur();
      return;
    }
    if (ev.key === "?") {
      const help = document.getElementById("shortcuts");
      if (help) help.open = !help.open;
      ev.preventDefault();
      return;
    }
    const el = document.querySelector('[data-shortcut="' + CSS.escape(ev.key) + '"]');
    if (!el || el.disabled || el.closest("fieldset[disabled]")) return;
    ev.preventDefault();
    if (el.type === "radio") {
      revealFor(el);
      el.checked = true;
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (el.tagName === "TEXTAREA" || el.tagName === "INPUT") {
      revealFor(el);
      el.focus();
    } else if (el.tagName === "BUTTON") {
      if (el.type === "submit" && el.form) {
        el.form.requestSubmit(el);
      } else {
        revealFor(el);
        el.click();
      }
    }
  }

  // Drafts: what is typed is posted to the server (debounced, and once more when leaving the
  // page), so navigating away loses nothing; the page restores it from the annotation row.
  function setupDrafts(form) {
    const url = form.getAttribute("data-draft-url");
    if (!url) return;
    const status = document.getElementById("draft-status");
    let timer = null;
    let dirty = false;
    // the draft save on its way, if any: the form's submit cancels it (the label is the newer
    // word; a draft the server took after the label would be refused as "already submitted")
    let inflight = null;
    function show(text) { if (status) status.textContent = text; }
    function save() {
      timer = null;
      if (!dirty) return;
      dirty = false;
      const controller = new AbortController();
      inflight = controller;
      fetch(url, { method: "POST", body: new FormData(form), credentials: "same-origin", signal: controller.signal })
        .then(function (response) {
          if (inflight === controller) inflight = null;
          if (response.status === 204) {
            show("Draft saved at " + new Date().toLocaleTimeString() + ".");
          } else {
            return response.text().then(function (text) { show("Draft not saved: " + text); });
          }
        })
        .catch(function (error) {
          if (inflight === controller) inflight = null;
          if (error && error.name === "AbortError") return;  // the form was submitted meanwhile
          dirty = true; show("Draft not saved: the server did not answer; retrying."); schedule();
        });
    }
    function schedule() {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(save, 700);
    }
    function changed() { dirty = true; schedule(); }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    window.addEventListener("pagehide", function () {
      if (dirty && navigator.sendBeacon) {
        dirty = false;
        navigator.sendBeacon(url, new FormData(form));
      }
    });
    form.addEventListener("submit", function () {
      dirty = false;
      if (timer !== null) clearTimeout(timer);
      if (inflight !== null) inflight.abort();
    });
  }

  function init() {
    typesetMath();
    refreshConditional();
    document.addEventListener("change", function (ev) {
      if (ev.target && ev.target.type === "radio") refreshConditional();
    });
    document.addEventListener("keydown", onKey);
    const form = document.getElementById("label-form");
    if (form) {
      setupDrafts(form);
      form.addEventListener("submit", function () {
        const field = document.getElementById("elapsed-ms");
        if (field) field.value = String(elapsedMs());
      });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
