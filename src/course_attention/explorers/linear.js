// Chapter 15: a linear-attention state as tokens are written. The spec holds the keys (unit
// vectors: key i is e_i, so row i of the state is what key i reads), the order they are written
// in and one value per token; this page runs the recurrence itself, token by token, into a
// d_k × d_v state S (course_attention.explorers.linear.memory_states):
//   linear attention:  S ← S + k vᵀ                       (every write adds)
//   delta rule:        S ← S + k (β (v − Sᵀk))ᵀ            (writes the error: overwrites at β = 1)
//   gated delta rule:  S ← α S, then the delta rule        (α = exp(g): the whole state decays)
// in the order of course_attention.linear_attention.gated_delta_rule's recurrent form. Drawn:
//   top:    the state S_t after t tokens;
//   bottom: the recall Sᵀq of the queried key, beside the value written last under it (zeros
//           if none yet); the title, the error ‖Sᵀq − v‖ between them.
// The twin of course_attention.viz.linear_explorer_numbers.
(function () {
  "use strict";

  // S_0 … S_n under one rule (beta and alpha where the rule has them)
  function states(p, rule, beta, alpha) {
    var dk = p.keys[0].length, dv = p.values[0].length, S = CourseAttention.math.zeros(dk, dv);
    var out = [S], decay = rule === "gated" ? Math.exp(Math.log(alpha)) : 1;
    p.sequence.forEach(function (name, t) {
      var k = p.keys[name], v = p.values[t];
      if (rule === "linear") {
        S = S.map(function (row, i) { return row.map(function (s, j) { return s + k[i] * v[j]; }); });
      } else {
        var D = S.map(function (row) { return row.map(function (s) { return s * decay; }); });
        var error = v.map(function (vj, j) {
          var read = 0;
          for (var i = 0; i < dk; i++) read += D[i][j] * k[i];
          return vj - read; // what the memory gets wrong for this key
        });
        S = D.map(function (row, i) {
          return row.map(function (s, j) { return s + k[i] * (beta * error[j]); });
        });
      }
      out.push(S);
    });
    return out;
  }

  // one state's numbers: {state, recall, target, last, error}, or null for a rule or key the
  // data do not hold
  function read(p, rule, t, beta, alpha, key) {
    var q = p.keys[p.names.indexOf(key)];
    if (p.rules.indexOf(rule) < 0 || !q) return null;
    var S = states(p, rule, beta, alpha)[t], last = 0, i;
    var recall = S[0].map(function (_, j) {
      var r = 0;
      for (i = 0; i < q.length; i++) r += S[i][j] * q[i];
      return r;
    });
    for (i = 0; i < t; i++) if (p.names[p.sequence[i]] === key) last = i + 1;
    var target = last ? p.values[last - 1] : recall.map(function () { return 0; });
    var error = Math.sqrt(recall.reduce(function (s, r, j) {
      return s + (r - target[j]) * (r - target[j]);
    }, 0));
    return { state: S, recall: recall, target: target, last: last, error: error };
  }

  CourseAttention.linear = { states: states, read: read };

  // the spec.text key of each rule's short name, in the title
  var RULE_TEXT = { linear: "rule_linear", delta: "rule_delta", gated: "rule_gated" };

  CourseAttention.register("linear", function (spec, ui) {
    var p = spec.data, n = p.sequence.length;

    function update(v) {
      var rule = v.rule, t = v.t, beta = v.beta, alpha = v.alpha, key = v.key;
      if (p.rules.indexOf(rule) < 0) return { message: ui.text("bad_rule", { rule: rule }) };
      if (!(Number.isInteger(t) && t >= 0 && t <= n)) return { message: ui.text("bad_t", { n: n }) };
      if (!(beta >= 0 && beta <= 1)) return { message: ui.text("bad_beta", {}) };
      if (!(alpha >= p.alphas[0] && alpha <= 1)) {
        return { message: ui.text("bad_alpha", { low: p.alphas[0] }) };
      }
      if (p.names.indexOf(key) < 0) return { message: ui.text("bad_key", { key: key }) };
      var r = read(p, rule, t, beta, alpha, key), t0 = ui.template.layout;
      return {
        data: [{ z: r.state }, { y: r.recall }, { y: r.target }],
        layout: {
          title: Object.assign({}, t0.title, {
            text: ui.text("title", { rule: ui.text(RULE_TEXT[rule], {}), t: t, n: n }) + "<br>" +
              ui.text(r.last ? "readout" : "never", { key: key, error: r.error, last: r.last }),
          }),
        },
      };
    }
    return update;
  });
})();
