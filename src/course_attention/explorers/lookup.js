// Chapter 1: a soft dictionary look-up. Drag the query on the word plane (or use the x and y
// sliders, as the notebook's explorer does), change the temperature; weights = softmax(K q / T), value = weights · values.
(function () {
  "use strict";
  var M = CourseAttention.math;

  CourseAttention.register("lookup", function (spec, ui) {
    var d = spec.data; // keys (n, 2), values (n,), words (n,)
    var gd = ui.figure;

    // Where the labels go: viz.lookup.key_label_positions and query_label_position.
    var L = d.labels, POS = L.positions; // POS: [name, dx, dy] in the Python order
    function box(tip, word, dx, dy, scale) {
      var wide = (word.match(/[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]/g) || []).length;
      var w = (L.wide * wide + L.char * (word.length - wide)) * L.font, h = L.font;
      var cx = tip[0] * scale + dx * (L.gap + w / 2), cy = tip[1] * scale + dy * (L.gap + h / 2);
      return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
    }
    function overlap(a, b) {
      return Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) *
        Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
    }
    // viz.lookup._segment_in_box: the length of the arrow 0 -> end (px) inside box b
    function segmentInBox(end, b) {
      var t0 = 0, t1 = 1, axes = [[end[0], b[0], b[2]], [end[1], b[1], b[3]]];
      for (var i = 0; i < 2; i++) {
        var d = axes[i][0], lo = axes[i][1], hi = axes[i][2];
        if (d === 0) { if (!(lo <= 0 && 0 <= hi)) return 0; continue; }
        var a = lo / d, c = hi / d;
        t0 = Math.max(t0, Math.min(a, c)); t1 = Math.min(t1, Math.max(a, c));
        if (t0 >= t1) return 0;
      }
      return (t1 - t0) * Math.hypot(end[0], end[1]);
    }
    function position(name) { return POS.filter(function (p) { return p[0] === name; })[0]; }
    // viz.lookup.label_positions: each label in turn takes the first of the eight positions,
    // tried from the one pointing away from the origin, that misses the labels already placed,
    // every marker and every marker's arrow, and stays on the plane; else the least bad one.
    function place(tips, words, fixed, taken) {
      var markers = tips.concat(fixed), placed = taken.slice(), out = [];
      tips.forEach(function (tip, t) {
        var angle = (tip[0] || tip[1]) ? Math.atan2(tip[1], tip[0]) * 180 / Math.PI : 90;
        var start = ((Math.round(angle / 45) % 8) + 8) % 8;
        var order = [0, 1, 2, 3, 4, 5, 6, 7].sort(function (i, j) {
          var di = Math.min((i - start + 8) % 8, (start - i + 8) % 8);
          var dj = Math.min((j - start + 8) % 8, (start - j + 8) % 8);
          return di - dj || i - j;
        });
        var best = POS[start][0], bestCost = Infinity;
        for (var n = 0; n < order.length; n++) {
          var p = POS[order[n]], cost = 0;
          L.scales.forEach(function (scale) {
            var b = box(tip, words[t], p[1], p[2], scale);
            placed.forEach(function (o) {
              var op = position(o[2]);
              cost += overlap(b, box(o[0], o[1], op[1], op[2], scale));
            });
            markers.forEach(function (m) {
              cost += overlap(b, [m[0] * scale - 5, m[1] * scale - 5, m[0] * scale + 5, m[1] * scale + 5]);
            });
            markers.forEach(function (m) { // each marker's arrow from the origin
              cost += segmentInBox([m[0] * scale, m[1] * scale], b) * L.font;
            });
            var r = d.plane * scale, plane = [-r, -r, r, r];
            cost += (b[2] - b[0]) * (b[3] - b[1]) - overlap(b, plane);
          });
          if (cost < bestCost) { best = p[0]; bestCost = cost; }
          if (cost === 0) break;
        }
        placed.push([tip, words[t], best]);
        out.push(best);
      });
      return out;
    }
    // the keys' labels clear of the query's arrow, then the query's clear of theirs
    function labelPositions(q) {
      var keys = place(d.keys, d.words, [q], []);
      var taken = d.keys.map(function (k, i) { return [k, d.words[i], keys[i]]; });
      return { keys: keys, query: place([q], [L.label], d.keys, taken)[0] };
    }

    function update(v) {
      var q = [v.qx, v.qy];
      var scores = d.keys.map(function (k) { return M.dot(k, q) / v.temperature; });
      var weights = M.softmax(scores);
      var value = M.dot(weights, d.values);
      var labels = labelPositions(q);
      return {
        data: [
          {}, // the keys' arrows stay
          { textposition: labels.keys },
          { x: [0, q[0], null], y: [0, q[1], null] },
          { x: [q[0]], y: [q[1]], textposition: [labels.query] },
          { y: weights, text: weights.map(function (w) { return w.toFixed(2); }) },
          { y: [value], text: [value.toFixed(2)] },
        ],
        layout: {
          dragmode: false,
          title: Object.assign({}, ui.template.layout.title, {
            text: ui.text("title", { qx: q[0], qy: q[1], temperature: v.temperature, value: value }),
          }),
        },
      };
    }

    // Dragging on the word plane moves the query: pixels -> data coordinates of axes x, y.
    function moveTo(event) {
      var xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
      var x = xa.p2d(event.clientX - box.left - xa._offset);
      var y = ya.p2d(event.clientY - box.top - ya._offset);
      var p = d.plane, hi = d.range; // on the plane the figure shows, within the sliders' range
      if (!(Math.abs(x) <= p && Math.abs(y) <= p)) return false;
      ui.setValue("qx", Math.round(Math.max(-hi, Math.min(hi, x)) * 100) / 100);
      ui.setValue("qy", Math.round(Math.max(-hi, Math.min(hi, y)) * 100) / 100);
      ui.redraw("query");
      return true;
    }
    var dragging = false;
    gd.addEventListener("pointerdown", function (e) {
      if (moveTo(e)) { dragging = true; e.preventDefault(); }
    });
    window.addEventListener("pointermove", function (e) { if (dragging) moveTo(e); });
    window.addEventListener("pointerup", function () { dragging = false; });

    return update;
  });
})();
