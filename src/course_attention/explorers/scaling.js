// Chapter 2: why the scores are divided by √d_k. One random query and eight random keys, each
// 1024 numbers wide; width d_k uses their first d_k numbers. Move d_k, switch the scale on and
// off, draw new vectors: weights = softmax(K q / √d_k), or softmax(K q) without the scale.
//
// The random numbers are made here, not downloaded: a small generator that Python runs too
// (course_attention.explorers.scaling), so the page shows exactly the notebook's numbers.
(function () {
  "use strict";
  var M = CourseAttention.math;

  // ---- random numbers -----------------------------------------------------------------------
  // mulberry32, a 32-bit generator, written "counter-based": the n-th number (n = 0, 1, …) of
  // stream `seed` hashes the state seed + (n + 1)·0x6D2B79F5. Math.imul multiplies 32-bit
  // integers as the C language does (keeping the low 32 bits); ">>> 0" reads the bits unsigned.
  function uniform(seed, n) {
    var a = (seed + Math.imul(n + 1, 0x6D2B79F5)) | 0;
    var t = Math.imul(a ^ (a >>> 15), a | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296; // in (0, 1), never 0 or 1
  }

  // The first `count` standard-normal numbers of stream `seed`, by Box–Muller: uniforms 2i and
  // 2i + 1 give the normals r·cos(angle) and r·sin(angle).
  function normals(seed, count) {
    var out = new Array(count);
    for (var i = 0; i < count; i += 2) {
      var radius = Math.sqrt(-2 * Math.log(uniform(seed, i)));
      var angle = 2 * Math.PI * uniform(seed, i + 1);
      out[i] = radius * Math.cos(angle);
      if (i + 1 < count) out[i + 1] = radius * Math.sin(angle);
    }
    return out;
  }

  // Draw number `draw` is stream `draw`: the query first, then one key after another.
  function queryAndKeys(draw, seqK, width) {
    var z = normals(draw, (seqK + 1) * width), keys = [];
    for (var j = 1; j <= seqK; j++) keys.push(z.slice(j * width, (j + 1) * width));
    return { q: z.slice(0, width), keys: keys };
  }

  CourseAttention.register("scaling", function (spec, ui) {
    var d = spec.data; // seq_k (number of keys), max_width (the widest d_k)
    var drawn = null; // the current draw's vectors, made again only when the draw changes
    var lastDraw = ui.controls.draw.spec.max; // the draws run from 0 to lastDraw

    function update(v, changed) {
      // The buttons move the sliders, then everything is computed from the sliders.
      if (changed === "halve") ui.setValue("d_k", Math.max(1, Math.floor(v.d_k / 2)));
      if (changed === "double") ui.setValue("d_k", Math.min(d.max_width, v.d_k * 2));
      if (changed === "resample") ui.setValue("draw", v.draw >= lastDraw ? 0 : v.draw + 1);
      v = ui.values();
      var dk = v.d_k, draw = v.draw;
      if (!(Number.isInteger(dk) && dk >= 1 && dk <= d.max_width)) {
        return { message: ui.text("bad_d_k", { max: d.max_width }) };
      }
      if (!(Number.isInteger(draw) && draw >= 0 && draw <= lastDraw)) {
        return { message: ui.text("bad_draw", { max: lastDraw }) };
      }
      if (!drawn || drawn.draw !== draw) {
        drawn = queryAndKeys(draw, d.seq_k, d.max_width);
        drawn.draw = draw;
      }

      // Width d_k: the first d_k features of the query and of every key.
      var q = drawn.q.slice(0, dk);
      var scores = drawn.keys.map(function (k) { return M.dot(k.slice(0, dk), q); });
      if (v.scaled) scores = scores.map(function (s) { return s / Math.sqrt(dk); });
      var weights = M.softmax(scores);
      return {
        data: [{ y: weights, text: weights.map(function (w) { return w.toFixed(2); }) }],
        layout: {
          title: Object.assign({}, ui.template.layout.title, {
            text: ui.text(v.scaled ? "title_scaled" : "title_unscaled", { d_k: dk, draw: draw }),
          }),
        },
      };
    }
    return update;
  });

  // For the curious (and the tests): the generator, callable from the browser's console.
  CourseAttention.scaling = { uniform: uniform, normals: normals, queryAndKeys: queryAndKeys };
})();
