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

  // <time data-local>: the exact moment on hover, in the reader's own time zone.
  function localTimes(root) {
    (root || document).querySelectorAll("time[data-local]").forEach(function (el) {
      var moment = new Date(el.getAttribute("datetime"));
      if (isNaN(moment)) return;
      el.title = moment.toLocaleString(undefined, {dateStyle: "medium", timeStyle: el.hasAttribute("data-clock") ? "medium" : "short"});
      // A log line's clock stamp, written in UTC, reads in the reader's own time zone.
      if (el.hasAttribute("data-clock")) el.textContent = moment.toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit", second: "2-digit"});
    });
  }
  // Relative times ("now", "3 minutes ago") written by the server go stale while the page stays
  // open: they are rewritten from their datetime every 15 s (Django's naturaltime words, for under a day).
  function ago(seconds) {
    if (seconds < 1) return "now";
    if (seconds < 60) return seconds === 1 ? "a second ago" : seconds + " seconds ago";
    var minutes = Math.floor(seconds / 60);
    if (minutes < 60) return minutes === 1 ? "a minute ago" : minutes + " minutes ago";
    var hours = Math.floor(minutes / 60);
    return hours === 1 ? "an hour ago" : hours + " hours ago";
  }
  function relativeTimes() {
    var now = Date.now();
    document.querySelectorAll("time[data-local]:not([data-clock])").forEach(function (el) {
      var moment = Date.parse(el.getAttribute("datetime"));
      if (isNaN(moment)) return;
      var seconds = Math.floor((now - moment) / 1000);
      if (seconds < 0 || seconds >= 86400) return;  // future moments and days keep the server's words
      el.textContent = ago(seconds);
    });
  }
  setInterval(relativeTimes, 15000);
  // A table wider than its box says so: a cue above it (it scrolls sideways inside the box,
  // which is the table itself on a narrow screen, or the wrapper it sits in).
  function scrollCues() {
    document.querySelectorAll("main table:not(.matrix)").forEach(function (table) {
      var wrapper = table.parentElement && table.parentElement.matches(".table-scroll, .overflow-auto") ? table.parentElement : null;
      var scroller = getComputedStyle(table).overflowX !== "visible" ? table : wrapper;
      if (!scroller) return;
      var outer = wrapper || table;
      var more = scroller.scrollWidth > scroller.clientWidth + 1;
      var cue = outer.previousElementSibling;
      if (!cue || !cue.classList.contains("scroll-cue")) {
        if (!more) return;
        cue = document.createElement("p");
        cue.className = "scroll-cue";
        cue.textContent = "More columns \u2192 scroll the table sideways";
        outer.parentNode.insertBefore(cue, outer);
      }
      cue.classList.toggle("on", more);
      scroller.classList.toggle("scrolls-x", more);
    });
  }
  document.addEventListener("DOMContentLoaded", scrollCues);
  window.addEventListener("resize", scrollCues);
  document.addEventListener("htmx:afterSettle", scrollCues);
  document.addEventListener("DOMContentLoaded", function () { localTimes(document); });
  document.addEventListener("htmx:afterSettle", function (event) { localTimes(event.detail.elt); });

  // Buttons with data-copy="<selector>" copy that element's text (a new API token).
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    var status = button.parentElement && button.parentElement.querySelector("[data-copy-status]");
    if (!source) return;
    var done = function (text) { if (status) status.textContent = text; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent.trim()).then(function () { done("Copied."); },
        function () { done("Copy failed: select the token and copy it by hand."); });
    } else {
      var range = document.createRange();
      range.selectNodeContents(source);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      done(document.execCommand && document.execCommand("copy") ? "Copied." : "Selected: press Ctrl-C to copy.");
    }
  });

  // Buttons with data-confirm ask before their form submits.
  document.addEventListener("submit", function (event) {
    var button = event.submitter || event.target.querySelector("[data-confirm]");
    var message = button && button.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });

  // A refused htmx request must never leave the previous result on screen (a 3 MB input refused
  // with 400 used to keep showing the last "accepts"). A partial answer (422 with the form and
  // its errors, a short reason) is swapped in like a success; a full error page or a network
  // failure becomes a one-line reason in the target instead.
  function refusal(target, text) {
    if (!target) return;
    var p = document.createElement("p");
    p.className = "trial refused error";
    p.setAttribute("role", "alert");
    p.textContent = text;
    // A target holding a form keeps what was typed: the reason goes above the fields instead.
    if (target.matches("form") || target.querySelector("textarea, select, input:not([type=hidden])")) {
      var previous = target.querySelector(":scope > .refused");
      if (previous) previous.remove();
      target.prepend(p);
    } else {
      target.replaceChildren(p);
    }
  }
  var REASONS = {
    400: "the request was refused as malformed or too large (requests over 2.5 MB are refused)",
    403: "you are not allowed to do this",
    404: "it no longer exists",
    409: "it changed meanwhile; reload the page",
    413: "the request is too large",
    429: "too many requests; wait a moment",
    500: "the server failed; try again",
    502: "the server is unreachable; try again",
    503: "a service is unavailable; try again"
  };
  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr || xhr.status < 400) return;
    var body = xhr.responseText || "";
    if (/<html[\s>]/i.test(body) || !body.trim()) {
      event.detail.shouldSwap = false;
      refusal(event.detail.target, "Refused (" + xhr.status + "): " + (REASONS[xhr.status] || xhr.statusText || "error") + ".");
    } else if (/</.test(body)) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    } else {
      event.detail.shouldSwap = false;
      refusal(event.detail.target, "Refused (" + xhr.status + "): " + body.trim().slice(0, 500));
    }
  });
  // The verdict panel: on a phone it is a sheet (CSS); a newly opened cell shows it again and
  // brings it into view, and its Close button hides it.
  document.addEventListener("htmx:afterSwap", function (event) {
    var panel = event.detail.target;
    if (!panel || panel.id !== "cell-detail") return;
    panel.classList.remove("closed");
    var rect = panel.getBoundingClientRect();
    if (rect.top < 0 || rect.bottom > window.innerHeight) panel.scrollIntoView({block: "nearest"});
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-close-panel]");
    if (!button) return;
    var panel = button.closest(".cell-panel");
    if (panel) panel.classList.add("closed");
  });
  document.addEventListener("htmx:sendError", function (event) {
    refusal(event.detail.target, "Not sent: the server did not answer. Check the connection and try again.");
  });
})();
