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
      if (readout) readout.textContent = position + ": " + token;
      control.input.setAttribute("aria-valuetext", "position " + position + ", '" + token + "'");
    }

    function update(v) {
      var s = d.sentences[v.ending];
      if (!s) return { message: "Pick an ending: " + Object.keys(d.sentences).join(" or ") + "." };
      var n = s.tokens.length, q = v.query;
      if (!(Number.isInteger(q) && q >= 0 && q < n)) {
        return { message: "The query position must be a whole number from 0 to " + (n - 1) + "." };
      }
      if (!isFinite(v.context)) return { message: "The context must be a number." };

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
      var where = hi - lo < d.flat ? "the same weight on every token"
        : "largest weight on '" + s.tokens[best] + "'";
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
            text: "query '" + s.tokens[q] + "' (too " + v.ending + "):" + (narrow ? "<br>" : " ") + where,
          }),
          margin: Object.assign({}, margin, { t: narrow ? margin.t + 20 : margin.t }),
          height: ui.template.layout.height + (narrow ? 20 : 0),
        },
      };
    }
    return update;
  });
})();
