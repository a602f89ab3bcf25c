/* gputrace report: the interactive timeline.
 *
 * Each div.gt-tl[data-section=S] is filled from the JSON in the
 * application/json script element #gt-tl-data-S (written by
 * gt_report_html_timeline.c): a lane of idle gaps per GPU, a lane per GPU
 * stream, per calling thread and per thread's NVTX ranges. Drawn on a
 * canvas; zoom with the wheel, W/S or +/-, pan by dragging, A/D or the
 * arrows, 0 resets. A gap's table row (id gap-S-I) zooms the timeline to
 * it; a gap clicked on the timeline highlights and scrolls to its row.
 *
 * Trace strings are shown with textContent and canvas text only: nothing
 * from the trace is ever parsed as HTML. The page loads nothing.
 *
 * The same script marks the frame clicked in a flame graph (at the end).
 *
 * window.gputraceTimelines[S] is the section's timeline: its view (from,
 * to, in ns after the trace's start) and what the last frame drew (drawn),
 * for the tests and for anyone scripting the page. */
(function () {
  "use strict";
  var LABEL_W = 190, ROW_H = 18, LANE_PAD = 3, AXIS_H = 22, GAP_H = 14;
  var MIN_WINDOW_NS = 50;
  var DRAWN_MAX = 200000;

  function fmtDur(ns) {
    var a = Math.abs(ns), sign = ns < 0 ? "-" : "";
    if (a < 1000) return sign + Math.round(a) + " ns";
    if (a < 1e6) return sign + (a / 1e3).toFixed(a < 1e4 ? 2 : 1) + " us";
    if (a < 1e9) return sign + (a / 1e6).toFixed(a < 1e7 ? 3 : 2) + " ms";
    return sign + (a / 1e9).toFixed(3) + " s";
  }

  /* A time after (or, for work before the first call, before) the start. */
  function fmtAt(t) {
    return (t < 0 ? "-" : "+") + fmtDur(Math.abs(t));
  }

  function fmtCount(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  /* A colour per name: its FNV-1a hash picks the hue, so one kernel keeps
   * its colour across lanes and reports. */
  function colorOf(name) {
    if (name === null) return "#9aa3b0";
    var h = 2166136261;
    for (var i = 0; i < name.length; i++) {
      h ^= name.charCodeAt(i);
      h = Math.imul(h, 16777619) >>> 0;
    }
    return "hsl(" + (h % 360) + "," + (50 + (h >>> 9) % 25) + "%," + (42 + (h >>> 17) % 16) + "%)";
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* First index whose item starts at or after t (items sorted by start). */
  function lowerBound(items, t) {
    var lo = 0, hi = items.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (items[mid].s < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function Timeline(root, data, section) {
    var self = this;
    this.root = root;
    this.section = section;
    this.span = Math.max(data.span, 1);
    this.names = data.names;
    this.gaps = data.gaps.map(function (g) {
      return {dev: g[0], s: g[1], e: g[1] + g[2], d: g[2], cause: g[3], row: g[4]};
    });
    this.selected = -1;
    this.buildLanes(data);
    this.from = this.lo;  /* the whole run: the report's span and anything drawn past it */
    this.to = this.hi;

    var bar = el("div", "gt-tl-bar");
    var buttons = [["\u2212", "zoom out (S or -)", function () { self.zoom(2); }],
                   ["+", "zoom in (W or +)", function () { self.zoom(0.5); }],
                   ["\u2190", "pan left (A or \u2190)", function () { self.pan(-0.25); }],
                   ["\u2192", "pan right (D or \u2192)", function () { self.pan(0.25); }],
                   ["whole run", "reset (0)", function () { self.reset(); }]];
    buttons.forEach(function (b) {
      var btn = el("button", "", b[0]);
      btn.type = "button";
      btn.title = b[1];
      btn.addEventListener("click", function () { b[2](); root.focus(); });
      bar.appendChild(btn);
    });
    this.winText = el("span", "gt-tl-win");
    bar.appendChild(this.winText);
    bar.appendChild(el("span", "gt-tl-help", "wheel or W/S: zoom \u00b7 drag or A/D: pan \u00b7 0: whole run"));
    root.appendChild(bar);
    this.canvas = el("canvas");
    root.appendChild(this.canvas);
    this.info = el("div", "gt-tl-info", "Hover or click an item for its name and times; click a gap for its row.");
    root.appendChild(this.info);
    this.legend = el("div", "gt-tl-legend");
    root.appendChild(this.legend);
    this.buildLegend();
    this.buildNotes(data);
    this.hookEvents();
    this.hookRows();
    this.draw();
  }

  Timeline.prototype.buildLanes = function (data) {
    var self = this, lanes = [], devs = {};
    var streamLanes = [], otherLanes = [];
    data.lanes.forEach(function (l) {
      var items = [], ev = l.ev, maxDur = 0;
      for (var i = 0; i + 4 < ev.length; i += 5) {
        var it = {s: ev[i], e: ev[i] + ev[i + 1], name: ev[i + 2] < 0 ? null : self.names[ev[i + 2]],
                  n: ev[i + 3], level: ev[i + 4]};
        if (ev[i + 1] > maxDur) maxDur = ev[i + 1];
        items.push(it);
      }
      items.sort(function (x, y) { return x.s - y.s; });
      var lane = {kind: l.kind, label: l.label, items: items, maxDur: maxDur, levels: Math.max(1, l.levels),
                  total: l.total, q: l.q, dev: l.kind === "stream" ? l.a : null};
      if (l.kind === "stream") {
        devs[l.a] = true;
        streamLanes.push(lane);
      } else {
        otherLanes.push(lane);
      }
    });
    this.gaps.forEach(function (g) { devs[g.dev] = true; });
    Object.keys(devs).map(Number).sort(function (a, b) { return a - b; }).forEach(function (d) {
      var gi = [], maxDur = 0;
      self.gaps.forEach(function (g, i) {
        if (g.dev === d) {
          gi.push({s: g.s, e: g.e, name: "idle gap", n: 1, level: 0, gap: i});
          if (g.d > maxDur) maxDur = g.d;
        }
      });
      gi.sort(function (x, y) { return x.s - y.s; });
      lanes.push({kind: "gaps", label: "GPU " + d + " idle gaps", items: gi, maxDur: maxDur, levels: 1,
                  total: gi.length, q: 0, dev: d});
      streamLanes.forEach(function (l) { if (l.dev === d) lanes.push(l); });
    });
    this.lanes = lanes.concat(otherLanes);
    var y = AXIS_H;
    this.lanes.forEach(function (l) {
      l.y = y;
      l.h = l.kind === "gaps" ? GAP_H : l.levels * ROW_H;
      y += l.h + LANE_PAD;
    });
    this.height = y;
    var lo = 0, hi = this.span;
    this.lanes.forEach(function (l) {
      l.items.forEach(function (it) { if (it.s < lo) lo = it.s; if (it.e > hi) hi = it.e; });
    });
    this.lo = lo;
    this.hi = hi;
  };

  Timeline.prototype.buildLegend = function () {
    var total = {};
    this.lanes.forEach(function (l) {
      if (l.kind !== "stream") return;
      l.items.forEach(function (it) {
        if (it.name !== null) total[it.name] = (total[it.name] || 0) + (it.e - it.s);
      });
    });
    var names = Object.keys(total).sort(function (a, b) { return total[b] - total[a]; });
    if (!names.length) return;
    this.legend.appendChild(document.createTextNode("GPU work by colour (most time first):"));
    var self = this;
    names.slice(0, 12).forEach(function (n) {
      var sw = el("span", "sw");
      sw.style.background = colorOf(n);
      self.legend.appendChild(sw);
      self.legend.appendChild(el("code", "", n.length > 60 ? n.slice(0, 57) + "..." : n));
    });
    if (names.length > 12) this.legend.appendChild(document.createTextNode(" and " + (names.length - 12) + " more"));
    var gsw = el("span", "sw");
    gsw.style.background = "#d9534f";
    this.legend.appendChild(gsw);
    this.legend.appendChild(document.createTextNode("idle gap; grey: merged items of several names"));
  };

  Timeline.prototype.buildNotes = function (data) {
    var root = this.root;
    this.lanes.forEach(function (l) {
      if (!l.q) return;
      root.appendChild(el("p", "gt-tl-note", l.label + ": " + fmtCount(l.total) + " items drawn as " +
        fmtCount(l.items.length) + " blocks (neighbours merged into blocks of at most " + fmtDur(l.q) +
        "; hover a block for how many it holds, grey when of several names)."));
    });
    var d = data.dropped_lanes;
    if (d.stream || d.thread || d.ranges)
      root.appendChild(el("p", "gt-tl-note", "Lanes left out (64 of each kind are drawn): " + d.stream +
        " streams, " + d.thread + " threads, " + d.ranges + " NVTX."));
    if (data.dropped_ranges)
      root.appendChild(el("p", "gt-tl-note", data.dropped_ranges + " NVTX ranges nested deeper than 16 levels are " +
        "not drawn."));
  };

  /* ---- view ---- */

  Timeline.prototype.setView = function (from, to) {
    var len = Math.max(to - from, MIN_WINDOW_NS);
    var whole = this.hi - this.lo;
    if (len > whole) len = whole;
    if (from < this.lo) from = this.lo;
    if (from + len > this.hi) from = this.hi - len;
    this.from = from;
    this.to = from + len;
    this.draw();
  };

  Timeline.prototype.zoom = function (factor, center) {
    if (center === undefined) center = (this.from + this.to) / 2;
    this.setView(center - (center - this.from) * factor, center + (this.to - center) * factor);
  };

  Timeline.prototype.pan = function (frac) {
    var d = (this.to - this.from) * frac;
    this.setView(this.from + d, this.to + d);
  };

  Timeline.prototype.reset = function () {
    this.setView(this.lo, this.hi);
  };

  Timeline.prototype.plotWidth = function () {
    return Math.max(this.canvas.clientWidth - LABEL_W, 10);
  };

  Timeline.prototype.xOf = function (t) {
    return LABEL_W + (t - this.from) / (this.to - this.from) * this.plotWidth();
  };

  Timeline.prototype.tOf = function (x) {
    return this.from + (x - LABEL_W) / this.plotWidth() * (this.to - this.from);
  };

  /* ---- drawing ---- */

  function clipText(ctx, s, w) {
    if (ctx.measureText(s).width <= w) return s;
    var lo = 0, hi = s.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(s.slice(0, mid) + "\u2026").width <= w) lo = mid; else hi = mid - 1;
    }
    return lo ? s.slice(0, lo) + "\u2026" : "";
  }

  Timeline.prototype.draw = function () {
    var c = this.canvas, dpr = window.devicePixelRatio || 1;
    var cssW = c.clientWidth || 800;
    c.style.height = this.height + "px";
    c.width = Math.round(cssW * dpr);
    c.height = Math.round(this.height * dpr);
    var ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, this.height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    var self = this, x1 = cssW, drawn = [];

    /* the axis: a tick at each round step */
    var step = niceStep((this.to - this.from) / 8);
    ctx.fillStyle = "#6b7685";
    ctx.strokeStyle = "#e6e9ee";
    for (var t = Math.ceil(this.from / step) * step; t <= this.to; t += step) {
      var x = this.xOf(t);
      ctx.beginPath();
      ctx.moveTo(x + 0.5, AXIS_H - 4);
      ctx.lineTo(x + 0.5, this.height);
      ctx.stroke();
      var tick = fmtAt(t);
      if (x + 2 + ctx.measureText(tick).width <= cssW) ctx.fillText(tick, x + 2, AXIS_H / 2);
    }

    /* each GPU's gaps, shaded across its lanes first */
    this.lanes.forEach(function (l) {
      if (l.kind !== "stream") return;
      self.gaps.forEach(function (g, i) {
        if (g.dev !== l.dev || g.e < self.from || g.s > self.to) return;
        var a = Math.max(self.xOf(g.s), LABEL_W), b = Math.min(self.xOf(g.e), x1);
        ctx.fillStyle = i === self.selected ? "rgba(217,83,79,.28)" : "rgba(217,83,79,.10)";
        ctx.fillRect(a, l.y, Math.max(b - a, 1), l.h);
      });
    });

    this.lanes.forEach(function (l, li) {
      ctx.fillStyle = li % 2 ? "#f7f8fa" : "#eef1f5";
      ctx.fillRect(0, l.y, LABEL_W - 4, l.h);
      ctx.fillStyle = "#1d2430";
      ctx.fillText(clipText(ctx, l.label, LABEL_W - 10), 4, l.y + Math.min(l.h, ROW_H) / 2);
      var items = l.items;
      for (var i = lowerBound(items, self.from - l.maxDur); i < items.length && items[i].s <= self.to; i++) {
        var it = items[i];
        if (it.e < self.from) continue;
        var a = Math.max(self.xOf(it.s), LABEL_W), b = Math.min(self.xOf(it.e), x1);
        var w = Math.max(b - a, 1);
        var y = l.y + it.level * ROW_H, h = l.kind === "gaps" ? GAP_H : ROW_H - 2;
        if (l.kind === "gaps") {
          ctx.fillStyle = it.gap === self.selected ? "#a61b17" : "#d9534f";
        } else {
          ctx.fillStyle = colorOf(it.name);
        }
        ctx.fillRect(a, y, w, h);
        var fill = ctx.fillStyle;
        if (l.kind === "gaps" && it.gap === self.selected) {
          ctx.strokeStyle = "#1d2430";
          ctx.lineWidth = 2;
          ctx.strokeRect(a, y + 1, w, h - 2);
          ctx.lineWidth = 1;
        }
        if (w > 40 && l.kind !== "gaps") {
          ctx.fillStyle = "#fff";
          var label = it.name === null ? it.n + " items" : it.name;
          ctx.fillText(clipText(ctx, label, w - 4), a + 2, y + h / 2);
        }
        if (drawn.length < DRAWN_MAX)
          drawn.push({lane: li, kind: l.kind, label: l.label, name: it.name, s: it.s, e: it.e, n: it.n,
                      level: it.level, gap: it.gap === undefined ? -1 : it.gap, fill: fill});
      }
    });
    this.drawn = drawn;

    var from = Math.round(this.from), to = Math.round(this.to);
    this.root.setAttribute("data-from-ns", String(from));
    this.root.setAttribute("data-to-ns", String(to));
    this.root.setAttribute("data-selected-gap", String(this.selected));
    this.winText.textContent = "showing " + fmtAt(from) + " to " + fmtAt(to) + " (" + fmtDur(to - from) + ")";
  };

  /* ---- what is under the pointer ---- */

  Timeline.prototype.hit = function (x, y) {
    if (x < LABEL_W) return null;
    var t = this.tOf(x), slack = 3 / this.plotWidth() * (this.to - this.from);
    for (var li = 0; li < this.lanes.length; li++) {
      var l = this.lanes[li];
      if (y < l.y || y >= l.y + l.h) continue;
      var level = l.kind === "gaps" ? 0 : Math.floor((y - l.y) / ROW_H);
      var items = l.items, best = null;
      for (var i = lowerBound(items, t - l.maxDur - slack); i < items.length && items[i].s <= t + slack; i++) {
        var it = items[i];
        if (it.level === level && it.e >= t - slack && (!best || it.e - it.s < best.e - best.s)) best = it;
      }
      return best ? {lane: l, item: best} : null;
    }
    return null;
  };

  Timeline.prototype.describe = function (h) {
    var it = h.item, l = h.lane;
    if (l.kind === "gaps") {
      var g = this.gaps[it.gap];
      return "idle " + fmtDur(g.d) + " on GPU " + g.dev + " at " + fmtAt(g.s) + ": " + g.cause +
        " (row " + (g.row + 1) + " of the gaps table)";
    }
    var what = it.name === null ? it.n + " items of several names" : it.name + (it.n > 1 ? " \u00d7" + it.n : "");
    return what + "\n" + l.label + ", " + fmtAt(it.s) + " to " + fmtAt(it.e) + " (" + fmtDur(it.e - it.s) + ")";
  };

  /* ---- gaps and their rows ---- */

  Timeline.prototype.row = function (i) {
    return document.getElementById("gap-" + this.section + "-" + this.gaps[i].row);
  };

  Timeline.prototype.select = function (i) {
    var old = this.selected >= 0 ? this.row(this.selected) : null;
    if (old) old.classList.remove("gt-hl");
    this.selected = i;
    var r = this.row(i);
    if (r) r.classList.add("gt-hl");
  };

  /* From a row: zoom to the gap with half its length either side. */
  Timeline.prototype.showGap = function (i) {
    var g = this.gaps[i];
    this.select(i);
    var pad = Math.max(g.d / 2, MIN_WINDOW_NS);
    this.setView(g.s - pad, g.e + pad);
    this.info.textContent = this.describe({lane: {kind: "gaps"}, item: {gap: i}});
    this.root.scrollIntoView({block: "nearest"});
  };

  Timeline.prototype.hookRows = function () {
    var self = this;
    this.gaps.forEach(function (g, i) {
      var r = self.row(i);
      if (!r) return;
      r.classList.add("gt-gap-row");
      r.title = "show this gap on the timeline";
      r.addEventListener("click", function (e) {
        if (e.target.closest && e.target.closest("a")) return;
        self.showGap(i);
      });
    });
  };

  /* ---- input ---- */

  Timeline.prototype.hookEvents = function () {
    var self = this, c = this.canvas, root = this.root, drag = null;
    function pos(e) {
      var r = c.getBoundingClientRect();
      return {x: e.clientX - r.left, y: e.clientY - r.top};
    }
    c.addEventListener("wheel", function (e) {
      e.preventDefault();
      var p = pos(e);
      var center = p.x >= LABEL_W ? self.tOf(p.x) : (self.from + self.to) / 2;
      var dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      self.zoom(Math.pow(1.002, dy), center);
    }, {passive: false});
    c.addEventListener("mousedown", function (e) {
      if (e.button !== 0) return;
      e.preventDefault();
      root.focus();
      drag = {x: pos(e).x, from: self.from, to: self.to, moved: false};
      c.classList.add("gt-tl-drag");
    });
    window.addEventListener("mousemove", function (e) {
      if (drag) {
        var dx = pos(e).x - drag.x;
        if (Math.abs(dx) >= 3) drag.moved = true;
        if (drag.moved) {
          var dt = dx / self.plotWidth() * (drag.to - drag.from);
          self.setView(drag.from - dt, drag.to - dt);
        }
        return;
      }
      if (e.target !== c) return;
      var p = pos(e), h = self.hit(p.x, p.y);
      if (h) self.info.textContent = self.describe(h);
    });
    window.addEventListener("mouseup", function (e) {
      if (!drag) return;
      var moved = drag.moved;
      drag = null;
      c.classList.remove("gt-tl-drag");
      if (moved) return;
      var p = pos(e), h = self.hit(p.x, p.y);
      if (!h) return;
      self.info.textContent = self.describe(h);
      if (h.lane.kind === "gaps") {
        self.select(h.item.gap);
        self.draw();
        var r = self.row(h.item.gap);
        if (r) r.scrollIntoView({block: "center"});
      }
    });
    root.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      var k = e.key;
      if (k === "w" || k === "W" || k === "+" || k === "=") self.zoom(0.5);
      else if (k === "s" || k === "S" || k === "-" || k === "_") self.zoom(2);
      else if (k === "a" || k === "A" || k === "ArrowLeft") self.pan(-0.25);
      else if (k === "d" || k === "D" || k === "ArrowRight") self.pan(0.25);
      else if (k === "0" || k === "Home") self.reset();
      else return;
      e.preventDefault();
    });
    window.addEventListener("resize", function () { self.draw(); });
  };

  function init() {
    window.gputraceTimelines = window.gputraceTimelines || {};
    var roots = document.querySelectorAll("div.gt-tl[data-section]");
    for (var i = 0; i < roots.length; i++) {
      var s = roots[i].getAttribute("data-section");
      var src = document.getElementById("gt-tl-data-" + s);
      if (!src) continue;
      try {
        window.gputraceTimelines[s] = new Timeline(roots[i], JSON.parse(src.textContent), s);
      } catch (err) {
        roots[i].textContent = "The timeline could not be drawn: " + err;
      }
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();

  /* The flame graphs of GPU idle by host stack (gt_report_html_flame.c),
   * drawn as SVG without script: a click on a frame marks it and writes
   * its tooltip (its name, idle time, share and samples) under its graph,
   * as text. */
  document.addEventListener("click", function (e) {
    var f = e.target && e.target.closest ? e.target.closest("svg.fl") : null;
    var root = f ? f.closest("div.gt-flame") : null;
    if (!root) return;
    var was = root.querySelector("svg.fl.on"), says = document.getElementById(root.id + "-says");
    var t = f.querySelector("title");
    if (was) was.classList.remove("on");
    f.classList.add("on");
    if (says && t) says.textContent = t.textContent;
  });
})();
