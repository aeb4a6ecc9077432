// Chapter 3: where does one token attend? "The animal didn't cross the street because it was
// too tired / wide". Pick the ending, how much of the adjective the vector of "it" carries, and a
// query position; the page recomputes X, then Q = X W_q, K = X W_k, V = X W_v, and the query's row
// of softmax(Q Kᵀ / √d_k) — the same float64 numbers as numpy_ref.scaled_dot_product_attention.
(function () {
  "use strict";
  var M = CourseAttention.math;

  CourseAttention.register("self_attention", function (spec, ui) {
    // d.sentences[ending]: {tokens, labels, X (seq, d_model) with no context in "it"};
    // d.it: the position of "it"; d.W_q, d.W_k (d_model, d_k), d.W_v (d_model, d_v).
    var d = spec.data;

    // The token vectors: the row of "it" carries `context` times the ending's vector
    // (toy.it_sentence does X[it] += context * X[-1]).
    function tokenVectors(X, context) {
      var last = X[X.length - 1];
      return X.map(function (row, i) {
        if (i !== d.it) return row;
        return row.map(function (x, j) { return x + context * last[j]; });
      });
    }

    // The slider shows a number; say which token it is (on screen and to a screen reader).
    function nameQuery(position, token) {
      var control = ui.controls.query, readout = control.element.querySelector(".ca-readout");
      var words = { position: position, token: token };
      if (readout) readout.textContent = position + ": " + token; // no words: no template
      control.input.setAttribute("aria-valuetext", ui.text("valuetext", words));
    }

    function update(v) {
      var s = d.sentences[v.ending];
      if (!s) {
        var names = Object.keys(d.sentences);
        return { message: ui.text("bad_ending", { endings: names.join(", ") }) };
      }
      var n = s.tokens.length, q = v.query;
      if (!(Number.isInteger(q) && q >= 0 && q < n)) {
        return { message: ui.text("bad_query", { max: n - 1 }) };
      }
      if (!isFinite(v.context)) return { message: ui.text("bad_context") };

      var X = tokenVectors(s.X, v.context);                 // (seq, d_model)
      var Q = M.matmul(X, d.W_q), K = M.matmul(X, d.W_k);   // (seq, d_k)
      var V = M.matmul(X, d.W_v);                           // (seq, d_v)
      var weights = M.attention([Q[q]], K, V).weights[0];   // (seq,): the query's row only

      var best = 0, lo = Infinity, hi = -Infinity;
      weights.forEach(function (w, j) {
        if (w > weights[best]) best = j;                    // the first largest, as argmax
        lo = Math.min(lo, w);
        hi = Math.max(hi, w);
      });
      nameQuery(q, s.tokens[q]);
      // On a narrow screen (a phone) the title takes two lines and the plot moves down for it.
      var narrow = ui.figure.clientWidth < 560, margin = ui.template.layout.margin || {};
      return {
        data: [{
          x: s.labels,
          y: weights,
          text: weights.map(function (w) { return w.toFixed(2); }),
          marker: { color: s.tokens.map(function (_, j) { return j === q ? d.colors.query : d.colors.key; }) },
        }],
        layout: {
          title: Object.assign({}, ui.template.layout.title, {
            text: ui.text((hi - lo < d.flat ? "title_flat" : "title") + (narrow ? "_narrow" : ""),
                          { token: s.tokens[q], ending: v.ending, best: s.tokens[best] }),
          }),
          margin: Object.assign({}, margin, { t: narrow ? margin.t + 20 : margin.t }),
          height: ui.template.layout.height + (narrow ? 20 : 0),
        },
      };
    }
    return update;
  });
})();
