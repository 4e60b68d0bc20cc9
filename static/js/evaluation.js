// The evaluation page's charts, drawn with Chart.js from the json_script block
// #evaluation-data (no inline script: CSP). Every value is also printed in a table.
(function () {
  "use strict";
  // Okabe-Ito colours, one per suite origin; precision solid, recall dashed.
  var COLOURS = { generated: "#0072b2", imported: "#009e73", official: "#cc79a7", public: "#d55e00" };
  var FALLBACK = ["#56b4e9", "#e69f00", "#000000", "#f0e442"];

  function colour(origin, i) { return COLOURS[origin] || FALLBACK[i % FALLBACK.length]; }

  function datasets(series) {
    var out = [];
    Object.keys(series).forEach(function (origin, i) {
      var c = colour(origin, i);
      out.push({ label: origin + " precision", data: series[origin].precision, borderColor: c, backgroundColor: c,
                 spanGaps: false, tension: 0 });
      out.push({ label: origin + " recall", data: series[origin].recall, borderColor: c, backgroundColor: c,
                 borderDash: [6, 4], pointStyle: "rectRot", spanGaps: false, tension: 0 });
    });
    return out;
  }

  function labels(series) {
    var first = Object.keys(series)[0];
    return first ? series[first].labels : [];
  }

  function draw(id, type, series, xTitle) {
    var canvas = document.getElementById(id);
    if (!canvas || !window.Chart || !series || !Object.keys(series).length) { return; }
    var data = { labels: labels(series), datasets: datasets(series) };
    if (type === "bar") {
      // Difficulty levels differ per origin: take their union, in order of first appearance.
      var all = [];
      Object.keys(series).forEach(function (o) {
        series[o].labels.forEach(function (l) { if (all.indexOf(l) < 0) { all.push(l); } });
      });
      data.labels = all;
      data.datasets.forEach(function (d, k) {
        var origin = Object.keys(series)[Math.floor(k / 2)];
        var s = series[origin];
        var metric = k % 2 === 0 ? s.precision : s.recall;
        d.data = all.map(function (l) { var j = s.labels.indexOf(l); return j < 0 ? null : metric[j]; });
        if (k % 2 === 1) { d.backgroundColor = "rgba(255,255,255,0.6)"; d.borderWidth = 2; }
      });
    }
    new window.Chart(canvas, {
      type: type,
      data: data,
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        scales: { y: { min: 0, max: 1, title: { display: true, text: "value (gaps: undefined)" } },
                  x: { title: { display: true, text: xTitle }, reverse: id === "chart-redundancy" } },
        plugins: { legend: { position: "bottom" } }
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var node = document.getElementById("evaluation-data");
    if (!node) { return; }
    var charts = JSON.parse(node.textContent);
    draw("chart-difficulty", "bar", charts.difficulty, "difficulty");
    draw("chart-tau", "line", charts.tau, "pass threshold τ");
    draw("chart-redundancy", "line", charts.redundancy, "% of each suite kept");
  });
})();
