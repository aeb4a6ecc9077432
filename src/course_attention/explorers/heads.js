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
      if (!p) {
        var names = Object.keys(d.inputs);
        return { message: ui.text("bad_projections", { choices: names.join(", ") }) };
      }
      if (d.head_counts.indexOf(n) < 0) {
        return { message: ui.text("bad_heads", { counts: d.head_counts.join(", ") }) };
      }
      // The head slider runs over the heads there are: 0 … n - 1.
      headControl.input.max = n - 1;
      var head = Math.min(Math.max(0, v.head), n - 1);
      if (head !== v.head) ui.setValue("head", head);
      var readout = headControl.element.querySelector(".ca-readout");
      // "head 0 of 2": a template with words around its fields (a bare "{head} of {n_heads}"
      // would match any text with " of " in the Chinese book's translation of outputs)
      var said = ui.text("valuetext", { head: head, n_heads: n });
      if (readout) readout.textContent = said;
      headControl.input.setAttribute("aria-valuetext", said);

      // Self-attention: queries, keys and values all come from the same X; no mask.
      var weights = M.multiHead(p.X, p.X, p.W, n, null).weights[head]; // (T, T)
      return {
        data: [{ z: weights }],
        layout: {
          title: Object.assign({}, ui.template.layout.title, {
            text: ui.text("title", { head: head, n_heads: n, width: d.d_model / n }),
          }),
        },
      };
    }
    return update;
  });
})();
