// Attention, Step by Step: every figure's titles wrapped by the width they are drawn at (issue 25,
// item 5). A notebook cannot measure its figures, so Python wraps a title for the narrowest
// screen, a 375 px phone (viz.core.wrap_title: 34 characters a line for a figure's title, 10 for
// a panel's). On the website each figure, saved or live, is wrapped again after every draw, by
// the width it is drawn at: the lines Python's wrap broke are joined again (a group of lines is
// Python's wrap when wrapping their words again gives them back; the Chinese book's translator
// finds them so too, course_attention.i18n.outputs), then broken where the drawn text meets the
// room it has, into lines of even length. The top margin and the height change by the lines
// gained or lost (1.3 times the font size a line, as plotly draws them; twice that under a
// title, which sits in the middle of the margin), so the plot keeps its size. Lines with markup, and breaks Python's wrap did not make, stay as they are.
(function () {
  "use strict";

  var TITLE_CHARS = 34, PANEL_CHARS = 10; // viz.core.TITLE_CHARS, PANEL_CHARS
  var LINE_SPACING = 1.3; // plotly's: a line of text takes 1.3 times its font size
  var MIN_TOP = 10; // px: the top margin never shrinks below this
  var PAD = 8; // px kept free at the end of a line
  var WIDE = "\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6";
  var IS_WIDE = new RegExp("[" + WIDE + "]");
  var UNIT = new RegExp("(\\s+)|([" + WIDE + "])|([^\\s" + WIDE + "]+)", "g");
  var CLOSES = /^[，。：；、！？）》」』〉]/; // never at the start of a line
  var BR = /<br\s*\/?>/i;
  var context = document.createElement("canvas").getContext("2d");
  var scratch = document.createElement("textarea");

  function plain(html) { // the text drawn: tags dropped, entities decoded
    scratch.innerHTML = String(html).replace(/<[^>]*>/g, "");
    return scratch.value;
  }

  // Python's wrap (course_attention.i18n.outputs._wrap): words in lines of at most `width`
  // characters.
  function charWrap(text, width) {
    var lines = [];
    text.split(" ").forEach(function (word) {
      var n = lines.length;
      if (n && plain(lines[n - 1] + " " + word).length <= width) lines[n - 1] += " " + word;
      else lines.push(word);
    });
    return lines;
  }

  function same(a, b) {
    return a.length === b.length && a.every(function (x, i) { return x === b[i]; });
  }

  // The lines of `text` with Python's wrap undone: each longest run of lines that its wrap at
  // `width` made from one line (no markup, no wide characters: it wraps neither) joined again.
  function unwrapped(text, width) {
    var lines = String(text).split(BR), out = [], i = 0;
    while (i < lines.length) {
      var j = lines.length;
      for (; j > i + 1; j--) {
        var group = lines.slice(i, j), line = group.join(" ");
        if (line.indexOf("<") < 0 && !IS_WIDE.test(line) && same(charWrap(line, width), group)) break;
      }
      out.push(lines.slice(i, j).join(" "));
      i = j;
    }
    return out;
  }

  function width(text, font) {
    context.font = font;
    return context.measureText(plain(text)).width;
  }

  // A line's pieces: words, and each wide (Chinese) character on its own, with the space before.
  function units(line) {
    var out = [], gap = "", m;
    UNIT.lastIndex = 0;
    while ((m = UNIT.exec(line))) {
      if (m[1]) { gap = " "; continue; }
      var piece = m[2] || m[3];
      if (out.length && !gap && CLOSES.test(piece)) out[out.length - 1].text += piece;
      else out.push({ text: piece, gap: out.length ? gap : "" });
      gap = "";
    }
    return out;
  }

  function greedy(pieces, room, font) {
    var lines = [];
    pieces.forEach(function (p) {
      var n = lines.length;
      if (n && width(lines[n - 1] + p.gap + p.text, font) <= room) lines[n - 1] += p.gap + p.text;
      else lines.push(p.text);
    });
    return lines;
  }

  // One line broken into as few lines as fit `room` px, as even as they can be: the narrowest
  // room that needs no more lines (so no word is left alone on the last line).
  function wrapLine(line, room, font) {
    if (line.indexOf("<") >= 0) return [line]; // markup: the explorers' own words, as written
    var pieces = units(line), lines = greedy(pieces, room, font);
    if (lines.length < 2) return lines;
    var low = 0, high = room;
    for (var k = 0; k < 10; k++) {
      var mid = (low + high) / 2;
      if (greedy(pieces, mid, font).length <= lines.length) high = mid;
      else low = mid;
    }
    return greedy(pieces, high, font);
  }

  function wrap(text, chars, room, font) {
    var lines = [];
    unwrapped(text, chars).forEach(function (line) {
      lines = lines.concat(wrapLine(line, room, font));
    });
    return lines;
  }

  function fontOf(f) {
    return (f && f.size ? f.size : 13) + "px " + (f && f.family ? f.family : "sans-serif");
  }

  function lineCount(text) { return text ? String(text).split(BR).length : 0; }

  function isPanelTitle(a) {
    return a && a.text && a.yref === "paper" && a.yanchor === "bottom" && (a.y || 0) >= 1 &&
      (a.xref || "paper") === "paper";
  }

  // The room of the figure's title: from where it is anchored to the figure's edge.
  function titleRoom(full) {
    var t = full.title, x = t.x === undefined ? 0.5 : t.x;
    return roomIn(x, anchorOf(x, t.xanchor), 0, 1) * full.width - PAD;
  }

  // Where a text anchored at x (a share of the width) runs: plotly's "auto" anchors the left
  // third at its left end, the right third at its right end, the middle at its centre.
  function anchorOf(x, xanchor) {
    return xanchor && xanchor !== "auto" ? xanchor
      : x < 1 / 3 ? "left" : x > 2 / 3 ? "right" : "center";
  }

  // The room from x to the ends of [lo, hi] that the anchor lets the text run to.
  function roomIn(x, anchor, lo, hi) {
    return anchor === "left" ? hi - x : anchor === "right" ? x - lo
      : 2 * Math.min(x - lo, hi - x);
  }

  // The room of a panel's title: within the panel it stands over, from where it is anchored.
  function panelRoom(full, a) {
    var best = [0, 1];
    Object.keys(full).forEach(function (k) {
      var ax = full[k];
      if (!/^xaxis\d*$/.test(k) || !ax || !ax.domain) return;
      if (a.x >= ax.domain[0] - 1e-6 && a.x <= ax.domain[1] + 1e-6 &&
          ax.domain[1] - ax.domain[0] < best[1] - best[0]) best = ax.domain;
    });
    return roomIn(a.x, anchorOf(a.x, a.xanchor), best[0], best[1]) * full._size.w - PAD;
  }

  function titleText(layout) {
    var t = layout.title;
    return t === undefined || t === null ? "" : typeof t === "string" ? t : t.text || "";
  }

  function current(gd) {
    var L = gd.layout, F = gd._fullLayout;
    return {
      title: titleText(L),
      anns: (L.annotations || []).map(function (a) { return a.text; }),
      top: L.margin && L.margin.t !== undefined ? L.margin.t : F.margin.t,
      height: L.height,
    };
  }

  function equal(a, b) {
    return a.title === b.title && same(a.anns, b.anns) && a.top === b.top && a.height === b.height;
  }

  // The layout `gd` should have at the width it is drawn at; relayout if it has another.
  function fit(gd) {
    var F = gd._fullLayout;
    if (!F || !gd.layout || !F._size) return;
    var now = current(gd), state = gd._caTitles;
    if (!state || !equal(now, state.out)) state = gd._caTitles = { source: now }; // new words
    var src = state.source, want = { anns: src.anns.slice(), top: src.top, height: src.height };
    var delta = 0;
    if (src.title) {
      var lines = wrap(src.title, TITLE_CHARS, titleRoom(F), fontOf(F.title.font));
      want.title = lines.join("<br>");
      delta += LINE_SPACING * F.title.font.size * (lines.length - lineCount(src.title));
    } else {
      want.title = src.title;
    }
    var before = 0, after = 0; // px the panels' titles take above the plot, most of any panel
    (gd.layout.annotations || []).forEach(function (a, i) {
      var full = (F.annotations || [])[i];
      if (!isPanelTitle(a) || !full) return;
      var lines = wrap(src.anns[i], PANEL_CHARS, panelRoom(F, full), fontOf(full.font));
      var line = LINE_SPACING * full.font.size;
      want.anns[i] = lines.join("<br>");
      before = Math.max(before, line * lineCount(src.anns[i]));
      after = Math.max(after, line * lines.length);
    });
    // plotly sets a title's first line in the middle of the top margin: with a title above
    // them, the lines gained take twice their height of margin (the title moves down by half)
    delta = Math.round((src.title ? 2 : 1) * (delta + after - before));
    want.top = Math.max(MIN_TOP, src.top + delta);
    if (src.height !== undefined) want.height = src.height + want.top - src.top;
    state.out = want;
    if (equal(now, want)) {
      gd.setAttribute("data-ca-titles", "done");
      return;
    }
    var update = { "margin.t": want.top };
    if (want.title !== now.title) update["title.text"] = want.title;
    if (want.height !== undefined) update.height = want.height;
    want.anns.forEach(function (t, i) {
      if (t !== now.anns[i]) update["annotations[" + i + "].text"] = t;
    });
    gd.setAttribute("data-ca-titles", "pending");
    // a saved figure's box has the height of its first layout (plotly's HTML sets it): it grows
    // and shrinks with the layout, or the lines added would fall below it (an explorer's box
    // sets no height: it follows the layout)
    if (want.height !== undefined && gd.style.height && !gd.closest(".ca-explorer")) {
      gd.style.height = want.height + "px";
    }
    window.Plotly.relayout(gd, update);
  }

  function watch(gd) {
    if (gd._caWatched || typeof gd.on !== "function") return;
    gd._caWatched = true;
    gd.on("plotly_afterplot", function () { fit(gd); });
    if (gd._fullLayout) fit(gd);
  }

  var scheduled = false;
  function scan() {
    scheduled = false;
    document.querySelectorAll(".js-plotly-plot").forEach(watch);
  }
  function later() {
    if (!scheduled) { scheduled = true; requestAnimationFrame(scan); }
  }

  // What the tests read: the words each title was made from, and the room each line has.
  function sources(gd) {
    var F = gd._fullLayout, state = gd._caTitles;
    if (!F || !state) return [];
    var src = state.source, out = [];
    if (src.title) {
      out.push({ what: "title", source: src.title, chars: TITLE_CHARS, room: titleRoom(F),
                 font: fontOf(F.title.font), drawn: titleText(gd.layout) });
    }
    (gd.layout.annotations || []).forEach(function (a, i) {
      var full = (F.annotations || [])[i];
      if (!isPanelTitle(a) || !full) return;
      out.push({ what: "panel title " + i, source: src.anns[i], chars: PANEL_CHARS,
                 room: panelRoom(F, full), font: fontOf(full.font), drawn: a.text });
    });
    return out;
  }

  window.CourseTitles = { wrap: wrap, unwrapped: unwrapped, charWrap: charWrap, width: width,
                          fit: fit, sources: sources };
  if (!window.Plotly) return;
  new MutationObserver(later).observe(document.documentElement, { childList: true, subtree: true });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scan);
  else scan();
  window.addEventListener("load", scan);
})();
