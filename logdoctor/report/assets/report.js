/* logdoctor's HTML report: draws each chart of the JSON block #logdoctor-data with uPlot.
   It only sets text (textContent), never markup: the data holds numbers and fixed labels. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("logdoctor-data").textContent);
  // one palette a side: the baseline (or the one deployment) in blue/orange, the candidate in red/green
  var COLOURS = [["#1f77b4", "#ff7f0e"], ["#d62728", "#2ca02c"]];
  var MARKS = { restart: "#7b3fb5", preemption: "#d62728", warning: "#e0a000", failure: "#111111" };
  window.logdoctorCharts = [];
  window.logdoctorPlots = {}; // chart id -> its uPlot, for a reader (or a test) that looks at the drawing

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
    // uPlot wants one x array. A series gets undefined where it merely has no point at that x (uPlot joins
    // across it) and keeps the null its data has where its line breaks (a gap of several stats intervals).
    var xs = {};
    series.forEach(function (s) { s.points.forEach(function (p) { xs[p[0]] = true; }); });
    var x = Object.keys(xs).map(Number).sort(function (a, b) { return a - b; });
    var index = {};
    x.forEach(function (v, i) { index[v] = i; });
    var columns = [x];
    series.forEach(function (s) {
      var column = new Array(x.length).fill(undefined);
      s.points.forEach(function (p) { column[index[p[0]]] = p[1]; });
      columns.push(column);
    });
    return columns;
  }

  function two(n) { return (n < 10 ? "0" : "") + n; }

  function clockAxis(chart) {
    // the log's clock as printed (no time zone: read and shown as UTC, so no shift is added), from seconds
    // since the chart's origin; the date too when the chart spans more than a day
    var origin = Date.parse(chart.origin + "Z");
    return function (u, splits) {
      var span = (u.scales.x.max || 0) - (u.scales.x.min || 0);
      return splits.map(function (s) {
        var d = new Date(origin + s * 1000);
        var time = two(d.getUTCHours()) + ":" + two(d.getUTCMinutes());
        if (span < 600) time += ":" + two(d.getUTCSeconds());
        if (span < 86400) return time;
        var date = two(d.getUTCMonth() + 1) + "-" + two(d.getUTCDate());
        return (chart.dated ? d.getUTCFullYear() + "-" : "") + date + " " + time;
      });
    };
  }

  data.charts.forEach(function (chart) {
    var figure = document.getElementById(chart.id);
    var target = figure.querySelector(".plot");
    var columns = align(chart.series);
    var perSide = {};
    var series = [{ label: chart.origin ? "time" : "t (s)" }];
    chart.series.forEach(function (s) {
      var n = perSide[s.side] || 0;
      perSide[s.side] = n + 1;
      series.push({
        label: s.label,
        scale: "y",
        stroke: COLOURS[s.side % 2][n % 2],
        width: 1.5,
        dash: s.side === 1 ? [6, 4] : undefined,
        spanGaps: false,
        points: { show: s.points.length < 60, size: 4 },
      });
    });
    var xAxis = chart.origin
      ? { label: "time (the log's clock)", values: clockAxis(chart), size: 50 }
      : { label: "s since serving began" };
    var axes = [xAxis, { label: chart.unit, scale: "y", size: 60 }];
    var width = Math.max(320, Math.floor(target.getBoundingClientRect().width) || 560);
    var plot = new uPlot(
      {
        width: width,
        height: 220,
        // y axes start at zero: an auto range would draw 18 -> 15 tok/s as a fall to the floor
        scales: { x: { time: false }, y: { range: fromZero } },
        axes: axes,
        series: series,
        plugins: [markerPlugin(chart.markers)],
        legend: { live: false },
      },
      columns,
      target
    );
    var drawn = 0;
    var breaks = 0;
    for (var i = 1; i < plot.data.length; i++) {
      plot.data[i].forEach(function (v) {
        if (v === null) breaks++;
        else if (v !== undefined) drawn++;
      });
    }
    var scales = {};
    plot.series.slice(1).forEach(function (s) { scales[s.scale] = true; });
    window.logdoctorPlots[chart.id] = plot;
    figure.setAttribute("data-rendered", String(drawn));
    window.logdoctorCharts.push({
      id: chart.id,
      points: drawn,
      gaps: breaks,
      scales: Object.keys(scales),
      clock: !!chart.origin,
      markers: chart.markers.length,
    });
  });
  document.body.setAttribute("data-charts-ready", String(window.logdoctorCharts.length));
})();
