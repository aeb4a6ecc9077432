// Chapter 11: the tiled pass of FlashAttention, one tile of scores at a time.
// For each tile of queries, the key tiles come one after another. Each query row keeps only
//   m      its running maximum score,
//   total  its running sum of exp(score − m),
//   acc    its running sum of exp(score − m) · v,
// and when a new tile raises the maximum from m to m', everything summed so far was measured
// against the old maximum: it is rescaled by alpha = exp(m − m'). After the last key tile,
// acc / total is the query's attention output, exactly.
// Left: the scores of one head; only the tile held now exists. Right: how far each query's
// running output acc / total still is from its final output. The twin of
// course_attention.efficient.flash_attention_steps and viz.tiling_states.
(function () {
  "use strict";
  var M = CourseAttention.math;

  // The whole pass for queries Q, keys K, values V (T, d) and tiles of B × B scores.
  // Returns one entry per tile, in order: {rows: [i0, i1], cols: [j0, j1], gap: (T,)} with
  // gap[q] = max over features of |running output − final output| (null: not started).
  function tiledPass(Q, K, V, B) {
    var T = Q.length, scale = 1 / Math.sqrt(Q[0].length);
    var final = M.attention(Q, K, V, null).out; // plain attention: the target
    var gap = new Array(T).fill(null), steps = [];
    for (var i0 = 0; i0 < T; i0 += B) {
      var i1 = Math.min(i0 + B, T), rows = i1 - i0;
      var m = new Array(rows).fill(-Infinity);  // running maximum of each query row
      var total = new Array(rows).fill(0);      // running sum of exp(score − m)
      var acc = M.zeros(rows, V[0].length);     // running sum of exp(score − m) · v
      for (var j0 = 0; j0 < T; j0 += B) {
        var j1 = Math.min(j0 + B, T);
        var Vj = V.slice(j0, j1);
        for (var r = 0; r < rows; r++) {
          // one row of this tile's scores: s_j = q · k_j / √d
          var s = K.slice(j0, j1).map(function (k) { return M.dot(Q[i0 + r], k) * scale; });
          var mNew = Math.max.apply(null, [m[r]].concat(s));
          var p = s.map(function (x) { return Math.exp(x - mNew); });
          var alpha = Math.exp(m[r] - mNew);  // rescales what was summed against the old max
          total[r] = alpha * total[r] + p.reduce(function (a, b) { return a + b; }, 0);
          var pv = M.matmul([p], Vj)[0];      // Σ_j p_j v_j over this tile's keys
          acc[r] = acc[r].map(function (a, c) { return alpha * a + pv[c]; });
          m[r] = mNew;
          // how far the output so far, acc / total, is from the final one
          gap[i0 + r] = Math.max.apply(null, acc[r].map(function (a, c) {
            return Math.abs(a / total[r] - final[i0 + r][c]);
          }));
        }
        steps.push({ rows: [i0, i1], cols: [j0, j1], gap: gap.slice() });
      }
    }
    return steps;
  }

  // The state of every score after tile `s`: 0 not computed yet, 1 computed then dropped,
  // 2 held now (tiles come in order, so the earlier ones were all dropped).
  function scoreStates(steps, s, T) {
    var grid = [];
    for (var i = 0; i < T; i++) grid.push(new Array(T).fill(0));
    for (var k = 0; k <= s; k++) {
      var t = steps[k], state = k === s ? 2 : 1;
      for (var a = t.rows[0]; a < t.rows[1]; a++) for (var b = t.cols[0]; b < t.cols[1]; b++) grid[a][b] = state;
    }
    return grid;
  }

  // Python's round(): halves go to the even neighbour (round(4.5) = 4), unlike Math.round.
  function roundHalfEven(x) {
    return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
  }

  CourseAttention.register("tiling", function (spec, ui) {
    var d = spec.data.d, normals = spec.data.normals, cache = {};

    // Q, K, V (T, d): numpy drew them one after the other from one stream of normals.
    function inputs(T) {
      var take = function (k) {
        var out = [];
        for (var i = 0; i < T; i++) out.push(normals.slice((k * T + i) * d, (k * T + i + 1) * d));
        return out;
      };
      return { Q: take(0), K: take(1), V: take(2) };
    }

    function run(T, B) {  // the pass for this length and block, computed once
      var key = T + "/" + B;
      if (!cache[key]) {
        var x = inputs(T), steps = tiledPass(x.Q, x.K, x.V, B), gapMax = 0;
        steps.forEach(function (st) {
          st.gap.forEach(function (g) { if (g !== null && g > gapMax) gapMax = g; });
        });
        cache[key] = { steps: steps, gapMax: gapMax };
      }
      return cache[key];
    }

    function update(v) {
      var T = v.seq_len, B = Number(v.block_size);
      if (!(Number.isInteger(T) && T >= 1 && 3 * T * d <= normals.length)) {
        return { message: ui.text("bad_length", { max: normals.length / (3 * d) }) };
      }
      if (!(Number.isInteger(B) && B >= 1)) return { message: ui.text("bad_block") };
      var r = run(T, B), nTiles = r.steps.length;
      var step = Math.max(1, roundHalfEven(v.progress / 100 * nTiles)); // 1-based, as the title
      var s = Math.min(step, nTiles) - 1;
      var labels = [];
      for (var i = 0; i < T; i++) labels.push(i);
      var t = ui.template.layout, tick = Math.max(1, Math.floor(T / 8));
      // The first state's other traces (the key to the three colours: "not computed yet",
      // "computed, then dropped", "held now") are kept as they are: an empty update each, so
      // the legend never leaves the live figure.
      var keys = ui.template.data.slice(2).map(function () { return {}; });
      return {
        data: [
          { z: scoreStates(r.steps, s, T), x: labels, y: labels },
          { x: labels, y: r.steps[s].gap },
        ].concat(keys),
        layout: {
          title: Object.assign({}, t.title, {
            text: ui.text("title", { seq_len: T, block: B, step: step, n_tiles: nTiles }),
          }),
          xaxis: Object.assign({}, t.xaxis, { dtick: tick }),
          yaxis: Object.assign({}, t.yaxis, { dtick: tick }),
          xaxis2: Object.assign({}, t.xaxis2, { dtick: tick }),
          yaxis2: Object.assign({}, t.yaxis2, { range: [0, r.gapMax * 1.05 + 1e-9] }),
        },
      };
    }
    return update;
  });
})();
