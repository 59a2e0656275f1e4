/* logdoctor's HTML report: draws each chart of the JSON block #logdoctor-data with uPlot.
   It only sets text (textContent), never markup: the data holds numbers and fixed labels. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("logdoctor-data").textContent);
  // one palette a side: the baseline (or the one deployment) in blue/orange, the candidate in red/green
  var COLOURS = [["#1f77b4", "#ff7f0e"], ["#d62728", "#2ca02c"]];
  var MARKS = { restart: "#7b3fb5", preemption: "#d62728", warning: "#e0a000", failure: "#111111" };
  window.logdoctorCharts = [];

  function markerPlugin(markers) {
    return {
      hooks: {
        draw: function (u) {
          var ctx = u.ctx;
          var top = u.bbox.top;
          var bottom = u.bbox.top + u.bbox.height;
          ctx.save();
          ctx.lineWidth = 1.5 * (window.devicePixelRatio || 1);
          markers.forEach(function (m) {
            var x = u.valToPos(m.t, "x", true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
            ctx.strokeStyle = MARKS[m.kind] || "#888888";
            ctx.setLineDash(m.side === 1 ? [4, 3] : []);
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, bottom);
            ctx.stroke();
          });
          ctx.restore();
        },
      },
    };
  }

  function fromZero(u, min, max) {
    return [Math.min(0, min), max > 0 ? max * 1.08 : 1];
  }

  function align(series) {
    // uPlot wants one x array; each series gets null where it has no point at that x.
    var xs = {};
    series.forEach(function (s) { s.points.forEach(function (p) { xs[p[0]] = true; }); });
    var x = Object.keys(xs).map(Number).sort(function (a, b) { return a - b; });
    var index = {};
    x.forEach(function (v, i) { index[v] = i; });
    var columns = [x];
    series.forEach(function (s) {
      var column = new Array(x.length).fill(null);
      s.points.forEach(function (p) { column[index[p[0]]] = p[1]; });
      columns.push(column);
    });
    return columns;
  }

  data.charts.forEach(function (chart) {
    var figure = document.getElementById(chart.id);
    var target = figure.querySelector(".plot");
    var columns = align(chart.series);
    var perSide = {};
    var series = [{ label: "t (s)" }];
    var rightAxis = false;
    chart.series.forEach(function (s) {
      var n = perSide[s.side] || 0;
      perSide[s.side] = n + 1;
      rightAxis = rightAxis || s.scale === "y2";
      series.push({
        label: s.label,
        scale: s.scale,
        stroke: COLOURS[s.side % 2][n % 2],
        width: 1.5,
        dash: s.side === 1 ? [6, 4] : undefined,
        spanGaps: true,
        points: { show: s.points.length < 60, size: 4 },
      });
    });
    var axes = [{ label: "s" }, { label: chart.unit, scale: "y", size: 60 }];
    if (rightAxis) {
      axes.push({ label: chart.unit + " per request", scale: "y2", side: 1, size: 60, grid: { show: false } });
    }
    var width = Math.max(320, Math.floor(target.getBoundingClientRect().width) || 560);
    var plot = new uPlot(
      {
        width: width,
        height: 220,
        // y axes start at zero: an auto range would draw 18 -> 15 tok/s as a fall to the floor
        scales: { x: { time: false }, y: { range: fromZero }, y2: { range: fromZero } },
        axes: axes,
        series: series,
        plugins: [markerPlugin(chart.markers)],
        legend: { live: false },
      },
      columns,
      target
    );
    var drawn = 0;
    for (var i = 1; i < plot.data.length; i++) {
      plot.data[i].forEach(function (v) { if (v !== null && v !== undefined) drawn++; });
    }
    figure.setAttribute("data-rendered", String(drawn));
    window.logdoctorCharts.push({ id: chart.id, points: drawn, markers: chart.markers.length });
  });
  document.body.setAttribute("data-charts-ready", String(window.logdoctorCharts.length));
})();
