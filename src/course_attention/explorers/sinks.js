// Chapter 14: attention sinks and a streaming cache. Every number was computed in Python from
// the chapter's two trained rotary models (course_attention.explorers.sinks.explorer_data) and
// sits in the spec; this page only picks the chosen state's numbers and draws them:
//   top:    the chosen model's sink map: each head's (rows: layer · head) mean weight on
//           position 0 by query position; the hover gives 1/(t + 1), the weight evenly spread
//           attention would put there;
//   bottom: the next-token loss by position (bins of spec.data.bin positions) of a rolling cache
//           of the first `sinks` tokens and the last `window`, of the recomputation of the same
//           kept tokens, and of full attention; the lines mark the trained context and the
//           cache's size; the title, each curve's mean loss past the trained context.
// The twin of course_attention.viz.sinks_explorer_numbers.
(function () {
  "use strict";

  // one state's numbers, or null for a model, window or sinks the data does not hold
  function select(p, model, window, sinks) {
    var w = p.windows.indexOf(window), s = p.sinks.indexOf(sinks);
    if (p.models.indexOf(model) < 0 || w < 0 || s < 0) return null;
    var past = p.past[model];
    return {
      share: p.share[model], cache: p.cache[model][w][s], recompute: p.recompute[model][w][s],
      full: p.full[model], size: sinks + window,
      past: { cache: past.cache[w][s], recompute: past.recompute[w][s], full: past.full },
    };
  }

  CourseAttention.sinks = { select: select };

  CourseAttention.register("sinks", function (spec, ui) {
    var p = spec.data;

    function update(v) {
      var model = v.model, window = v.window, sinks = Number(v.sinks);
      if (p.models.indexOf(model) < 0) return { message: ui.text("bad_model", { model: model }) };
      if (p.windows.indexOf(window) < 0) {
        return { message: ui.text("bad_window", { windows: p.windows.join(", ") }) };
      }
      if (p.sinks.indexOf(sinks) < 0) {
        return { message: ui.text("bad_sinks", { sinks: p.sinks.join(", ") }) };
      }
      var n = select(p, model, window, sinks), t = ui.template.layout;
      return {
        data: [
          { z: n.share },
          { x: p.x, y: n.cache },
          { x: p.x, y: n.recompute },
          { x: p.x, y: n.full },
          {}, // the trained context: as the first state
          { x: [n.size, n.size], y: p.loss_range },
        ],
        layout: {
          title: Object.assign({}, t.title, {
            text: ui.text("title", { model: ui.optionLabel("model"), window: window, sinks: sinks }) +
              "<br>" + ui.text("readout", { context: p.context, cache: n.past.cache,
                                            recompute: n.past.recompute, full: n.past.full }),
          }),
        },
      };
    }
    return update;
  });
})();
