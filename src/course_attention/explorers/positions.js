// Chapter 10: sinusoidal positions. Pick a position, the width d_model and the base; see the
// position's vector (top) and its dot product with every position of the sequence (bottom).
//   PE[pos, 2i] = sin(pos · ω_i),  PE[pos, 2i+1] = cos(pos · ω_i),  ω_i = base^(-2i/d_model)
// (course_attention.numpy_ref.sinusoidal_positions). rope.js uses the same speeds.
(function () {
  "use strict";
  var M = CourseAttention.math;

  // ω_i = base^(-2i/d) for i = 0 … d/2 − 1: pair i turns by ω_i radians per position.
  function speeds(d, base) {
    var out = [];
    for (var i = 0; i < d / 2; i++) out.push(Math.pow(base, -(2 * i) / d));
    return out;
  }

  // The table (seq_len, d_model): sines in the even features, cosines in the odd ones.
  function sinusoidalTable(seqLen, d, base) {
    var omega = speeds(d, base), table = [];
    for (var pos = 0; pos < seqLen; pos++) {
      var row = new Array(d);
      for (var i = 0; i < d / 2; i++) {
        row[2 * i] = Math.sin(pos * omega[i]);
        row[2 * i + 1] = Math.cos(pos * omega[i]);
      }
      table.push(row);
    }
    return table;
  }

  CourseAttention.positions = { speeds: speeds, sinusoidalTable: sinusoidalTable };

  function range(n) {
    var out = [];
    for (var i = 0; i < n; i++) out.push(i);
    return out;
  }

  CourseAttention.register("positions", function (spec, ui) {
    var seqLen = spec.data.seq_len;
    var table = null, key = null; // the table of the current width and base, rebuilt on change

    function update(v) {
      var d = Number(v.d_model), base = Number(v.base), position = v.position;
      if (!(position >= 0 && position < seqLen && Number.isInteger(position))) {
        return { message: ui.text("bad_position", { max: seqLen - 1 }) };
      }
      if (key !== d + "/" + base) {
        table = sinusoidalTable(seqLen, d, base);
        key = d + "/" + base;
      }
      var pe = table[position];
      // PE[pos] · PE[j] for every position j: the bottom curve
      var dots = table.map(function (row) { return M.dot(row, pe); });
      var t = ui.template.layout;
      return {
        data: [{ x: range(d), y: pe }, { x: range(seqLen), y: dots }],
        layout: {
          title: Object.assign({}, t.title, {
            text: ui.text("title", { position: position, d_model: d, base: base }),
          }),
          // the dot products lie in [-d/2, d/2]: the axis follows the width
          yaxis2: Object.assign({}, t.yaxis2, { range: [-d / 2 - 1, d / 2 + 1] }),
        },
      };
    }
    return update;
  });
})();
