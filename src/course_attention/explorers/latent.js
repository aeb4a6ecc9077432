// Chapter 13: a latent instead of keys, and top-k instead of every key. One fixed small layer
// (course_attention.viz.latent_layer, float64): the full keys K = x W_K, and from the SVD
// W_K = P Σ Qᵀ the widest latents x P Σ and the up-projection Qᵀ; a latent of width d_c keeps
// their first d_c columns / rows (the best rank-d_c factor). This page computes:
//   top:    the cache bytes per token of one layer: MHA 2·heads·d_head numbers, GQA
//           2·kv_heads·d_head, MLA d_c + d_rope (the latent and the shared rotary key), ·bytes;
//   middle: the keys rebuilt from the latent, latent · up, and each key's error |k̂ − k| / |k|;
//   bottom: each query's top-k keys under the causal mask (ties to the earlier key), coloured
//           by their weight in the causal softmax of head 0's scores; the title, the mean weight
//           the chosen keys hold.
// The twin of course_attention.viz.latent_explorer_numbers (mla.expand, sparse.topk_mask).
(function () {
  "use strict";

  function norm(a) { return Math.sqrt(CourseAttention.math.dot(a, a)); }

  // bytes a token, one layer: {MHA, GQA, MLA}
  function cache(p, dc) {
    return { MHA: 2 * p.heads * p.d_head * p.bytes, GQA: 2 * p.kv_heads * p.d_head * p.bytes,
             MLA: (dc + p.d_rope) * p.bytes };
  }

  // the keys rebuilt from the width-dc latent, and each key's relative error
  function rebuild(p, dc) {
    var latent = p.latents.map(function (row) { return row.slice(0, dc); });
    var rebuilt = CourseAttention.math.matmul(latent, p.up.slice(0, dc));
    var error = rebuilt.map(function (r, t) {
      var k = p.keys[t];
      return norm(r.map(function (v, j) { return v - k[j]; })) / norm(k);
    });
    return { rebuilt: rebuilt, error: error };
  }

  // row t reads keys 0 … t; its k best by score (a stable order: ties to the earlier key)
  function topk(scores, k) {
    return scores.map(function (row, t) {
      var order = [];
      for (var s = 0; s <= t; s++) order.push(s);
      order.sort(function (a, b) { return row[b] - row[a] || a - b; });
      var read = new Array(row.length).fill(false);
      order.slice(0, k).forEach(function (s) { read[s] = true; });
      return read;
    });
  }

  function choose(p, k) {
    var visible = CourseAttention.math.causalMask(p.tokens);
    var read = topk(p.scores, k);
    var weights = p.scores.map(function (row, t) {
      return CourseAttention.math.softmax(row, visible[t]);
    });
    var mass = weights.map(function (w, t) {
      return w.reduce(function (s, v, j) { return s + (read[t][j] ? v : 0); }, 0);
    });
    var mean = mass.reduce(function (a, b) { return a + b; }, 0) / mass.length;
    return { visible: visible, read: read, weights: weights, mass: mass, mean: mean };
  }

  CourseAttention.latent = { cache: cache, rebuild: rebuild, choose: choose };

  CourseAttention.register("latent", function (spec, ui) {
    var p = spec.data, keys = [], i;
    for (i = 0; i < p.tokens; i++) keys.push(i);

    function update(v) {
      var dc = Number(v.d_c), k = v.k;
      if (p.widths.indexOf(dc) < 0) {
        return { message: ui.text("bad_width", { widths: p.widths.join(", ") }) };
      }
      if (!(Number.isInteger(k) && k >= 1 && k <= p.tokens)) {
        return { message: ui.text("bad_k", { max: p.tokens }) };
      }
      var bytes = cache(p, dc), names = ["MHA", "GQA", "MLA"], r = rebuild(p, dc), c = choose(p, k);
      var grey = c.visible.map(function (row, t) {
        return row.map(function (vis, s) { return vis && !c.read[t][s] ? 1 : null; });
      });
      var chosen = c.weights.map(function (row, t) {
        return row.map(function (w, s) { return c.read[t][s] ? w : null; });
      });
      var t0 = ui.template.layout;
      return {
        data: [
          { x: names.map(function (n) { return bytes[n]; }), y: names },
          { x: keys, y: r.error },
          { z: grey },
          { z: chosen },
        ],
        layout: {
          // a margin of its own: course_titles.js changes margin.t in place, and the
          // template's object (core.js copies the layout shallowly) would keep the change
          margin: Object.assign({}, t0.margin),
          title: Object.assign({}, t0.title, {
            text: ui.text("title", { d_c: dc, k: k, mass: c.mean }),
          }),
        },
      };
    }
    return update;
  });
})();
