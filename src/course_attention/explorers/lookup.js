// Chapter 1: a soft dictionary look-up. Drag the query on the word plane (or use the x and y
// sliders, as the notebook's explorer does), change the temperature; weights = softmax(K q / T), value = weights · values.
(function () {
  "use strict";
  var M = CourseAttention.math;

  CourseAttention.register("lookup", function (spec, ui) {
    var d = spec.data; // keys (n, 2), values (n,), words (n,)
    var gd = ui.figure;

    function update(v) {
      var q = [v.qx, v.qy];
      var scores = d.keys.map(function (k) { return M.dot(k, q) / v.temperature; });
      var weights = M.softmax(scores);
      var value = M.dot(weights, d.values);
      return {
        data: [
          {}, {}, // the keys' arrows and labels stay
          { x: [0, q[0], null], y: [0, q[1], null] },
          { x: [q[0]], y: [q[1]], textposition: [q[1] >= 0 ? "top center" : "bottom center"] },
          { y: weights, text: weights.map(function (w) { return w.toFixed(2); }) },
          { y: [value], text: [value.toFixed(2)] },
        ],
        layout: {
          dragmode: false,
          title: Object.assign({}, ui.template.layout.title, {
            text: "query (" + q[0].toFixed(2) + ", " + q[1].toFixed(2) + "), T = " +
              v.temperature.toFixed(2) + ": value " + value.toFixed(2),
          }),
        },
      };
    }

    // Dragging on the word plane moves the query: pixels -> data coordinates of axes x, y.
    function moveTo(event) {
      var xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
      var x = xa.p2d(event.clientX - box.left - xa._offset);
      var y = ya.p2d(event.clientY - box.top - ya._offset);
      var hi = d.range, lo = -hi; // the plane the figure shows, and the sliders' range
      if (!(x >= lo && x <= hi && y >= lo && y <= hi)) return false;
      ui.setValue("qx", Math.round(x * 100) / 100);
      ui.setValue("qy", Math.round(y * 100) / 100);
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
