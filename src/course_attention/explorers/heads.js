// Chapter 5: one set of projections, cut into 1, 2, 4 or 8 heads. Each head attends with its own
// d/h columns of W_q, W_k, W_v and its own softmax; the page runs the whole multi-head attention
// (CourseAttention.math.multiHead, float64) and draws the chosen head's weights, the numbers
// numpy_ref.multi_head_attention computes.
(function () {
  "use strict";
  var M = CourseAttention.math;

  CourseAttention.register("heads", function (spec, ui) {
    // d.inputs[projections]: {X (T, d_model), W: {q, k, v, o} (d_model, d_model)}.
    var d = spec.data;
    var headControl = ui.controls.head;

    function update(v) {
      var p = d.inputs[v.projections], n = v.n_heads;
      if (!p) return { message: "Pick the projections: " + Object.keys(d.inputs).join(" or ") + "." };
      if (d.head_counts.indexOf(n) < 0) {
        return { message: "The number of heads must be one of " + d.head_counts.join(", ") + "." };
      }
      // The head slider runs over the heads there are: 0 … n - 1.
      headControl.input.max = n - 1;
      var head = Math.min(Math.max(0, v.head), n - 1);
      if (head !== v.head) ui.setValue("head", head);
      var readout = headControl.element.querySelector(".ca-readout");
      if (readout) readout.textContent = head + " of " + n;
      headControl.input.setAttribute("aria-valuetext", "head " + head + " of " + n);

      // Self-attention: queries, keys and values all come from the same X; no mask.
      var weights = M.multiHead(p.X, p.X, p.W, n, null).weights[head]; // (T, T)
      return {
        data: [{ z: weights }],
        layout: {
          title: Object.assign({}, ui.template.layout.title, {
            text: "head " + head + " of " + n + ", each of width d/h = " + d.d_model / n,
          }),
        },
      };
    }
    return update;
  });
})();
