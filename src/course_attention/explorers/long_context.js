// Chapter 12: stretching rotary positions past the trained length. A rotary model trained on
// `context` positions (0 … context − 1) has seen pair i turn through at most (context − 1)·θ_i
// radians; past that length the slow pairs reach angles it never saw. A rule changes the
// frequencies θ_i → θ'_i (course_attention.rope_scaling, the twin of Hugging Face's
// ROPE_INIT_FUNCTIONS, here in float64):
//   plain    θ_i = θ^(−2i/d);
//   linear   θ_i / factor (position interpolation);
//   dynamic  NTK: the base θ · α^(d/(d−2)), α = factor · max(len, context)/context − (factor − 1),
//            len = position + 1 (the plain rotation up to the trained length);
//   yarn     pairs turning more than beta_fast times in the context kept, less than beta_slow
//            times divided by factor, a ramp between; scores times (0.1 ln factor + 1)²;
//   llama3   by wavelength 2π/θ_i: short kept, long divided by factor, a smooth blend between.
//   top:    each pair's angle position·θ'_i over the largest it reached in training: inside,
//           past, or a pair that turned a full circle in training (every angle seen);
//   bottom: the mean score of a random vector with itself turned by each offset,
//           a² Σ_i mean|q_i|² cos(offset · θ'_i), plain and with the rule, and this position.
// The twin of course_attention.viz.long_context_numbers.
(function () {
  "use strict";

  // pair i turns by 1 / base^(2i/d) radians per position (rope_scaling.inverse_frequencies)
  function plain(d, base) {
    var out = [];
    for (var i = 0; i < d / 2; i++) out.push(1 / Math.pow(base, (2 * i) / d));
    return out;
  }

  // {inv: the rule's frequencies (d/2), scale: the attention factor a}; p: the spec's data
  function frequencies(rule, p, factor, seqLen) {
    var d = p.d, theta = p.theta, ctx = p.context, inv = plain(d, theta), i;
    if (rule === "plain") return { inv: inv, scale: 1 };
    if (rule === "linear") return { inv: inv.map(function (f) { return f / factor; }), scale: 1 };
    if (rule === "dynamic") {
      var alpha = factor * Math.max(seqLen, ctx) / ctx - (factor - 1);
      return { inv: plain(d, theta * Math.pow(alpha, d / (d - 2))), scale: 1 };
    }
    if (rule === "yarn") {
      // the (fractional) pair that turns `turns` times in the context, the ramp between two
      var pairOf = function (turns) {
        return d * Math.log(ctx / (turns * 2 * Math.PI)) / (2 * Math.log(theta));
      };
      var low = Math.max(Math.floor(pairOf(p.yarn.beta_fast)), 0);
      var high = Math.min(Math.ceil(pairOf(p.yarn.beta_slow)), d - 1);
      if (low === high) high += 0.001;
      var out = [];
      for (i = 0; i < d / 2; i++) {
        var ramp = Math.min(Math.max((i - low) / (high - low), 0), 1), kept = 1 - ramp;
        var spin = Math.pow(theta, (2 * i) / d);
        out.push(1 / (factor * spin) * (1 - kept) + 1 / spin * kept);
      }
      return { inv: out, scale: factor > 1 ? 0.1 * Math.log(factor) + 1 : 1 };
    }
    if (rule === "llama3") {
      var lo = p.llama3.low_freq_factor, hi = p.llama3.high_freq_factor;
      var longWave = ctx / lo, shortWave = ctx / hi;
      return {
        inv: inv.map(function (f) {
          var wave = 2 * Math.PI / f, scaled = wave > longWave ? f / factor : f;
          if (wave < shortWave || wave > longWave) return scaled;
          var smooth = (ctx / wave - lo) / (hi - lo);
          return (1 - smooth) * scaled / factor + smooth * scaled;
        }),
        scale: 1,
      };
    }
    return null;
  }

  // a² Σ_i size_i cos(offset · θ_i) for every offset: the mean score (size_i = mean|q_i|²)
  function scores(size, inv, scale, offsets) {
    return offsets.map(function (o) {
      var s = 0;
      for (var i = 0; i < inv.length; i++) s += size[i] * Math.cos(o * inv[i]);
      return s * scale * scale;
    });
  }

  CourseAttention.longContext = { frequencies: frequencies };

  CourseAttention.register("long_context", function (spec, ui) {
    var p = spec.data, d = p.d, ctx = p.context, maxPosition = p.max_position;
    var offsets = [], pairs = [], i;
    for (i = 0; i <= maxPosition; i++) offsets.push(i);
    for (i = 0; i < d / 2; i++) pairs.push(i);
    var trained = plain(d, p.theta); // what training showed: the plain frequencies
    var edge = trained.map(function (f) { return (ctx - 1) * f; }); // the largest angles
    var plainCurve = scores(p.mean_size, trained, 1, offsets);

    function update(v) {
      var position = v.position, rule = v.rule, factor = Number(v.factor);
      if (!(position >= 0 && position <= maxPosition && Number.isInteger(position))) {
        return { message: ui.text("bad_position", { max: maxPosition }) };
      }
      var f = frequencies(rule, p, factor, position + 1);
      if (!f) return { message: ui.text("bad_rule", { rule: rule }) };
      // one bar trace per class (inside, past, a full turn), null where a pair is another's
      var bars = [[], [], []];
      f.inv.forEach(function (th, k) {
        var ratio = position * th / edge[k];
        var cls = edge[k] >= 2 * Math.PI ? 2 : ratio > 1 + p.edge ? 1 : 0;
        bars.forEach(function (b, j) { b.push(j === cls ? ratio : null); });
      });
      var curve = scores(p.mean_size, f.inv, f.scale, offsets);
      var t = ui.template.layout, titleKey = "title_" + rule;
      return {
        data: [
          { x: pairs, y: bars[0] }, { x: pairs, y: bars[1] }, { x: pairs, y: bars[2] },
          {}, // the offsets never trained on: as the first state
          { x: offsets, y: plainCurve },
          { x: offsets, y: curve },
          { x: [position], y: [curve[position]] },
        ],
        layout: {
          title: Object.assign({}, t.title, {
            text: ui.text(titleKey, { position: position, factor: factor }),
          }),
        },
      };
    }
    return update;
  });
})();
