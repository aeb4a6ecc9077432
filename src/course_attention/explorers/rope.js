// Chapter 10: rotary positions (RoPE). A query at position m and a key at position n are each
// turned, pair of features by pair, by the angles m·θ_i and n·θ_i. Their score then depends only
// on the offset m − n: pair i keeps the share cos((m − n)·θ_i) of its product.
//   top:    cos(offset · θ_i) for every pair i (fast pairs on the left);
//   bottom: the score of a vector with itself at every offset, Σ_i |q_i|² cos(offset · θ_i),
//           for one random vector and averaged over many, with a marker at this offset.
// θ_i are the sinusoidal speeds (positions.js, loaded first). The twin of
// course_attention.viz.rope_offset_traces and positions.rope_score_by_offset.
(function () {
  "use strict";
  var speeds = CourseAttention.positions.speeds;

  // Σ_i size_i · cos(offset · θ_i): the score of a vector with itself rotated by `offset`
  // (size_i = |q_i|², the squared length of pair i).
  function selfScore(size, theta, offset) {
    var s = 0;
    for (var i = 0; i < theta.length; i++) s += size[i] * Math.cos(offset * theta[i]);
    return s;
  }

  CourseAttention.register("rope", function (spec, ui) {
    var maxOffset = spec.data.max_offset, vectors = spec.data.vectors;
    var offsets = [];
    for (var o = 0; o <= maxOffset; o++) offsets.push(o);
    var curves = null, key = null; // the two curves of the current width and base

    function makeCurves(d, base) {
      var theta = speeds(d, base), v = vectors[String(d)];
      var one = [];  // the first random vector's pair sizes |q_i|² = q_2i² + q_2i+1²
      for (var i = 0; i < d / 2; i++) one.push(v.one[2 * i] * v.one[2 * i] + v.one[2 * i + 1] * v.one[2 * i + 1]);
      return {
        theta: theta,
        // the mean of the scores of many vectors is the score with their mean pair sizes
        mean: offsets.map(function (o) { return selfScore(v.mean_size, theta, o); }),
        one: offsets.map(function (o) { return selfScore(one, theta, o); }),
      };
    }

    function update(v) {
      var d = Number(v.d), base = Number(v.base), offset = v.offset;
      if (!vectors[String(d)]) return { message: ui.text("no_vectors", { d: d }) };
      if (!(offset >= 0 && offset <= maxOffset && Number.isInteger(offset))) {
        return { message: ui.text("bad_offset", { max: maxOffset }) };
      }
      if (key !== d + "/" + base) {
        curves = makeCurves(d, base);
        key = d + "/" + base;
      }
      var pairs = curves.theta.map(function (_, i) { return i; });
      var t = ui.template.layout;
      return {
        data: [
          { x: pairs, y: curves.theta.map(function (th) { return Math.cos(offset * th); }) },
          { x: offsets, y: curves.mean },
          { x: offsets, y: curves.one },
          { x: [offset], y: [curves.mean[offset]] },
        ],
        layout: {
          title: Object.assign({}, t.title, {
            text: ui.text("title", { offset: offset, d: d, base: base }),
          }),
          yaxis2: Object.assign({}, t.yaxis2, { range: [-0.6 * d, 1.1 * d] }),
        },
      };
    }
    return update;
  });
})();
