// Chapter 4: the mask builder. Pick a preset (causal, padding, both, a sliding window), then
// click cells of the mask to allow or block them (the notebook's explorer: a grid of toggle
// buttons); edited cells stay when the preset or a slider changes, until "reset". The weights beside it are recomputed on
// every change from the same made-up scores: each row is the softmax over its allowed keys,
// and a row with nothing allowed gets all zeros (the course's rule), not NaN.
(function () {
  "use strict";
  var M = CourseAttention.math;

  // A preset mask, mask[i][j] = true when query i may attend to key j (the twin of
  // course_attention.explorers.mask.preset_mask).
  function presetMask(kind, seq, nReal, window) {
    var sliding = kind.indexOf("sliding window") === 0;
    var mask = [];
    for (var i = 0; i < seq; i++) {
      var row = [];
      for (var j = 0; j < seq; j++) {
        var ok = true;
        if (kind.indexOf("causal") >= 0) ok = ok && j <= i; // no key after the query
        if (sliding) ok = ok && j <= i && j > i - window; // only the last `window` keys
        if (kind.indexOf("padding") >= 0) ok = ok && j < nReal; // no [PAD] key
        row.push(ok);
      }
      mask.push(row);
    }
    return mask;
  }

  CourseAttention.register("mask", function (spec, ui) {
    var d = spec.data; // scores (seq, seq), labels[n_real - 1] (seq,), sliding (preset names)
    var seq = d.scores.length;
    var mask = null, preset = null; // the mask on screen, and the preset of the controls
    var edits = {}; // "query,key" -> allowed: the cells the reader set, kept across presets

    function applyEdits(p) {
      var out = p.map(function (row) { return row.slice(); });
      Object.keys(edits).forEach(function (cell) {
        var qk = cell.split(",");
        out[Number(qk[0])][Number(qk[1])] = edits[cell];
      });
      return out;
    }
    var shown = null; // the numbers plotted: {mask (0/1), weights}, both (seq, seq)
    var gd = ui.figure, button = ui.controls.toggle.input;

    function edited() {
      var n = 0;
      for (var i = 0; i < seq; i++) for (var j = 0; j < seq; j++) if (mask[i][j] !== preset[i][j]) n++;
      return n;
    }

    function title(v) {
      var kind = ui.optionLabel("kind"), n = edited(); // the preset's name, in the page's words
      var name = d.sliding.indexOf(v.kind) >= 0 ? ui.text("name_sliding", { kind: kind, window: v.window }) : kind;
      return ui.text(!n ? "title" : n === 1 ? "title_edited_one" : "title_edited",
                     { name: name, n_real: v.n_real, seq_len: seq, edited: n });
    }

    // The query and key menus name the tokens as the axes do; the button says what it will do.
    function relabel(labels, v) {
      ["query", "key"].forEach(function (name) {
        var options = ui.controls[name].input.options;
        for (var k = 0; k < options.length; k++) options[k].textContent = labels[k];
      });
      button.textContent = ui.text(mask[v.query][v.key] ? "block" : "allow",
                                   { query: labels[v.query], key: labels[v.key] });
    }

    // A frame round the chosen cell, on both panels.
    function frame(q, k, axis) {
      return { type: "rect", xref: "x" + axis, yref: "y" + axis, x0: k - 0.5, x1: k + 0.5,
               y0: q - 0.5, y1: q + 0.5, line: { color: "#D55E00", width: 3 } };
    }

    // On a narrow screen (a phone) the two panels stack, each as wide as the page, so a cell
    // stays big enough to tap, and the title takes two lines.
    var NARROW = 560; // px
    function lines(text) { return String(text || "").split(/<br\s*\/?>/i).length; }
    function narrowLayout(titleText) {
      var t = ui.template.layout;
      // Each panel is as wide as the page: its title, wrapped for half the width, takes one line.
      var panels = t.annotations.map(function (a) {
        return String(a.text || "").replace(/<br\s*\/?>/gi, " ");
      });
      // as viz.core._layout: 40 px, 20 a line of the title, 30 a line of the top panel's title
      var top = 40 + 20 * lines(titleText) + 30 * lines(panels[0]);
      return {
        height: 820 + top - 95,
        margin: Object.assign({}, t.margin, { t: top }),
        xaxis: Object.assign({}, t.xaxis, { domain: [0, 1] }),
        yaxis: Object.assign({}, t.yaxis, { domain: [0.6, 1] }),
        xaxis2: Object.assign({}, t.xaxis2, { domain: [0, 1] }),
        yaxis2: Object.assign({}, t.yaxis2, { domain: [0, 0.4], showticklabels: true }),
        annotations: [
          Object.assign({}, t.annotations[0], { x: 0.5, y: 1.0, text: panels[0] }),
          Object.assign({}, t.annotations[1], { x: 0.5, y: 0.4, text: panels[1] }),
        ],
      };
    }
    function isNarrow() { return gd.clientWidth > 0 && gd.clientWidth < NARROW; }

    function update(v, changed) {
      var n = Number(v.n_real), w = Number(v.window);
      if (!(n >= 1 && n <= seq && w >= 1 && w <= seq)) {
        return { message: ui.text("bad_sizes", { seq: seq }) };
      }
      // The preset of the controls, then the reader's edits on top: a preset or slider change
      // keeps the edited cells (explorers.mask.edited_mask); "reset" drops them.
      if (changed === "reset") edits = {};
      preset = presetMask(v.kind, seq, n, w);
      mask = applyEdits(preset);
      if (changed === "toggle") {
        var cell = v.query + "," + v.key, want = !mask[v.query][v.key];
        if (want === preset[v.query][v.key]) delete edits[cell]; // back to the preset's value
        else edits[cell] = want;
        mask = applyEdits(preset);
      }
      if (changed !== "query" && changed !== "key") { // a new mask: new numbers on both panels
        shown = {
          mask: mask.map(function (row) { return row.map(Number); }),
          weights: d.scores.map(function (row, i) { return M.softmax(row, mask[i]); }),
        };
      } // (a menu only moves the frame: the same arrays tell plotly not to recompute them)
      var labels = d.labels[n - 1], narrow = isNarrow(), text = title(v);
      relabel(labels, v);
      // two lines: the break after the first comma or colon ("causal mask,<br>4 real tokens of
      // 6"; "…掩码：<br>4/6 个真实词元")
      if (narrow) text = text.replace(/, |，|: |：/, function (comma) { return comma.trim() + "<br>"; });
      var layout = {
        dragmode: false,
        shapes: [frame(v.query, v.key, ""), frame(v.query, v.key, "2")],
        title: Object.assign({}, ui.template.layout.title, { text: text }),
      };
      return {
        data: [
          { z: shown.mask, x: labels, y: labels }, // left: 1 = may attend (green)
          { z: shown.weights, x: labels, y: labels }, // right: the weights, printed in the cells
        ],
        layout: narrow ? Object.assign(narrowLayout(text), layout) : layout,
      };
    }

    // Turning a phone, or resizing the window, across the narrow width redraws the layout.
    var wasNarrow = isNarrow();
    window.addEventListener("resize", function () {
      if (isNarrow() !== wasNarrow) {
        wasNarrow = isNarrow();
        ui.redraw("layout");
      }
    });

    // A click on a cell of the mask (left panel) picks that cell in the menus and toggles it.
    // The cell is read off the click's own pixels (plotly's hover points can lag a fast click).
    gd.on("plotly_click", function (event) {
      var e = event.event, L = gd._fullLayout, box = gd.getBoundingClientRect();
      if (!e || !L) return;
      var k = Math.round(L.xaxis.p2l(e.clientX - box.left - L.xaxis._offset));
      var q = Math.round(L.yaxis.p2l(e.clientY - box.top - L.yaxis._offset));
      if (!(q >= 0 && q < seq && k >= 0 && k < seq)) return; // outside the mask panel
      ui.setValue("query", q);
      ui.setValue("key", k);
      ui.redraw("toggle");
    });

    return update;
  });
})();
