// flamediff flame graph interaction. This is the body of a function of cfg
// (the geometry, written by flamegraph.WriteSVG). It works on the <svg>
// element holding this script, so it runs the same in a standalone SVG and
// inlined in an HTML page; it loads nothing and sends nothing.
"use strict";
var NS = "http://www.w3.org/2000/svg";
var me = document.currentScript;
var svg = me && me.closest ? me.closest("svg") : document.documentElement;
function q(c) { return svg.querySelector("." + c); }
var details = q("details"), unzoomBtn = q("unzoom"), searchBtn = q("search"), matched = q("matched");
var gs = svg.querySelectorAll(".frames > g");
var W = cfg.width - 2 * cfg.xpad;
var F = [], open = [];
for (var i = 0; i < gs.length; i++) {
  var g = gs[i], r = g.querySelector("rect");
  var tip = g.querySelector("title").textContent;
  var nl = tip.indexOf("\n");
  var name = nl < 0 ? tip : tip.slice(0, nl);
  var y = +r.getAttribute("y");
  var depth = Math.round(cfg.inverted ? (y - cfg.top) / cfg.fh : (cfg.bottom - y) / cfg.fh - 1);
  while (open.length && F[open[open.length - 1]].depth >= depth) F[open.pop()].end = i;
  F.push({
    g: g, r: r, t: g.querySelector("text"), y: y, name: name, chars: Array.from(name), tip: tip,
    x: +r.getAttribute("x"), w: +r.getAttribute("width"), v: +g.getAttribute("data-v"),
    depth: depth, parent: open.length ? open[open.length - 1] : -1, end: gs.length
  });
  g.fgIndex = i;
  open.push(i);
}
var zoomed = -1, searching = "";

// label is what fits of a frame's name in w pixels (as label() in svg.go).
function label(f, w) {
  var n = Math.floor((w - 3) / cfg.charw);
  if (n < 3) return "";
  if (f.chars.length <= n) return f.name;
  return f.chars.slice(0, n - 2).join("") + "..";
}

// place moves frame f to x and resizes it to w pixels, relabelling it.
function place(f, x, w) {
  f.r.setAttribute("x", x.toFixed(2));
  f.r.setAttribute("width", w.toFixed(2));
  f.g.classList.toggle("thin", w < cfg.thin);
  var l = label(f, w);
  if (!f.t) {
    if (!l) return;
    f.t = document.createElementNS(NS, "text");
    f.t.setAttribute("y", (f.y + cfg.textdy).toFixed(0));
    f.g.appendChild(f.t);
  }
  f.t.setAttribute("x", (x + 3).toFixed(2));
  f.t.textContent = l;
}

// zoom makes frame i span the width: its descendants are rescaled, its
// ancestors drawn faded at full width, every other frame hidden.
function zoom(i) {
  var z = F[i];
  if (!z) return;
  if (i === 0) { unzoom(); return; }
  var scale = W / z.w, anc = {};
  for (var p = z.parent; p >= 0; p = F[p].parent) anc[p] = true;
  for (var j = 0; j < F.length; j++) {
    var f = F[j], cl = f.g.classList;
    if (j === i || anc[j]) {
      cl.remove("hide");
      cl.toggle("parent", j !== i);
      place(f, cfg.xpad, W);
    } else if (j > i && j < z.end) {
      cl.remove("hide", "parent");
      place(f, cfg.xpad + (f.x - z.x) * scale, f.w * scale);
    } else {
      cl.add("hide");
      cl.remove("parent");
    }
  }
  zoomed = i;
  unzoomBtn.classList.remove("hide");
  save();
}

function unzoom() {
  for (var j = 0; j < F.length; j++) {
    var f = F[j];
    f.g.classList.remove("hide", "parent");
    place(f, f.x, f.w);
  }
  zoomed = -1;
  unzoomBtn.classList.add("hide");
  save();
}

// search highlights the frames whose name matches the regular expression
// term and shows their share of the total, counting a match inside another
// match once. It returns false when term is not a valid expression.
function search(term) {
  clearSearch(true);
  if (!term) { save(); return true; }
  var re;
  try {
    // A leading (?i) makes the search case-insensitive, as in Go and Perl.
    re = term.indexOf("(?i)") === 0 ? new RegExp(term.slice(4), "i") : new RegExp(term);
  } catch (e) {
    matched.textContent = "bad expression: " + e.message;
    return false;
  }
  var sum = 0, n = 0, under = new Uint8Array(F.length);
  for (var j = 0; j < F.length; j++) {
    var f = F[j], inside = f.parent >= 0 && under[f.parent] === 1;
    under[j] = inside ? 1 : 0;
    if (re.test(f.name)) {
      f.g.classList.add("match");
      n++;
      if (!inside) sum += f.v;
      under[j] = 1;
    }
  }
  searching = term;
  searchBtn.textContent = "Reset Search";
  matched.textContent = "Matched: " + (cfg.total > 0 ? 100 * sum / cfg.total : 0).toFixed(2) + "% (" + n + " frames)";
  svg.setAttribute("data-matched", String(sum));
  save();
  return true;
}

function clearSearch(quiet) {
  for (var j = 0; j < F.length; j++) F[j].g.classList.remove("match");
  searching = "";
  searchBtn.textContent = "Search";
  matched.textContent = " ";
  svg.removeAttribute("data-matched");
  if (!quiet) save();
}

function askSearch() {
  var t = window.prompt("Search frames (regular expression):", searching);
  if (t !== null) search(t);
}

// save keeps zoom and search in the URL fragment, so a link shows the same.
function save() {
  var parts = [];
  if (zoomed > 0) parts.push("zoom=" + zoomed);
  if (searching) parts.push("search=" + encodeURIComponent(searching));
  var h = parts.length ? "#" + parts.join("&") : "";
  if (h === location.hash || (!h && location.hash === "")) return;
  try {
    history.replaceState(null, "", h || location.pathname + location.search);
  } catch (e) { /* a sandboxed or data: document: the state stays unsaved */ }
}

// load applies the state of the URL fragment.
function load() {
  var st = {};
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var k = kv.indexOf("=");
    if (k <= 0) return;
    try { st[kv.slice(0, k)] = decodeURIComponent(kv.slice(k + 1)); } catch (e) { /* ignore a malformed part */ }
  });
  var z = parseInt(st.zoom, 10);
  if (z > 0 && z < F.length) zoom(z); else if (zoomed >= 0) unzoom();
  if (st.search) search(st.search); else if (searching) clearSearch(true);
}

function frameOf(e) {
  var g = e.target && e.target.closest ? e.target.closest("g") : null;
  return g && g.fgIndex !== undefined ? F[g.fgIndex] : null;
}

var frames = q("frames");
frames.addEventListener("click", function (e) {
  var f = frameOf(e);
  if (f) zoom(f.g.fgIndex);
});
frames.addEventListener("mouseover", function (e) {
  var f = frameOf(e);
  if (f) details.textContent = f.tip.split("\n").join(" \u00b7 ");
});
frames.addEventListener("mouseout", function () { details.textContent = " "; });
unzoomBtn.addEventListener("click", unzoom);
searchBtn.addEventListener("click", function () {
  if (searching) clearSearch(false); else askSearch();
});
window.addEventListener("keydown", function (e) {
  if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F")) {
    e.preventDefault();
    askSearch();
  } else if (e.key === "Escape" && searching) {
    clearSearch(false);
  }
});
window.addEventListener("hashchange", load);
svg.flamegraph = { zoom: zoom, unzoom: unzoom, search: search, clearSearch: clearSearch, frames: F };
load();
