// Chapter 7: a trained encoder–decoder reverses the digits you type, here in your browser.
//
// The same forward pass as course_attention.modules.Seq2SeqTransformer, in float64 on the
// model's float32 weights (the file course_attention.explorers.decoding.payload writes):
//   encoder, once:    x = embedding(digits, [EOS]) · √d_model + positions, then n_layers of
//                     self-attention and feed-forward (each with its residual and layer norm)
//                     → the memory, one row per source token;
//   decoder, per step: the same on [BOS] + the tokens written so far, with causal
//                     self-attention, then cross-attention to the memory (queries from the
//                     decoder, keys and values from the memory), then feed-forward;
//                     the last row → logits → the most likely token is written next.
// Greedy decoding stops at [EOS] or after max_steps tokens. The figure shows, for the chosen
// step, layer and head, where the query that chose each token looked in the source.
(function () {
  "use strict";
  var M = CourseAttention.math;

  // ---- the model, read from the file ---------------------------------------------------------

  // A torch Linear keeps its weight as (out, in): M.linear(X, W, b) computes X Wᵀ + b.
  function linearParams(t, name) { return { W: t[name + ".weight"], b: t[name + ".bias"] }; }
  function normParams(t, name) { return { gamma: t[name + ".weight"], beta: t[name + ".bias"] }; }

  // M.multiHead multiplies on the right (x @ W), so the four projections are transposed once.
  function attentionParams(t, name) {
    var W = {}, b = {};
    ["q", "k", "v", "o"].forEach(function (x) {
      var p = linearParams(t, name + ".W_" + x);
      W[x] = M.transpose(p.W);
      b[x] = p.b;
    });
    return { W: W, biases: b };
  }

  function build(model) {
    var c = model.config, t = model.tensors, encoder = [], decoder = [];
    for (var i = 0; i < c.n_layers; i++) {
      var e = "encoder." + i + ".", d = "decoder." + i + ".";
      encoder.push({
        self: attentionParams(t, e + "self_attn"),
        ff: [linearParams(t, e + "ff.linear1"), linearParams(t, e + "ff.linear2")],
        norms: [normParams(t, e + "norm1"), normParams(t, e + "norm2")],
      });
      decoder.push({
        self: attentionParams(t, d + "self_attn"),
        cross: attentionParams(t, d + "cross_attn"),
        ff: [linearParams(t, d + "ff.linear1"), linearParams(t, d + "ff.linear2")],
        norms: [normParams(t, d + "norm1"), normParams(t, d + "norm2"), normParams(t, d + "norm3")],
      });
    }
    return {
      config: c,
      srcEmbed: t["src_embed.weight"], tgtEmbed: t["tgt_embed.weight"], // (vocab, d_model)
      positions: t["positions.table"], // (max_len, d_model), the sinusoids of chapter 6
      encoder: encoder, decoder: decoder,
      encNorm: c.norm_first ? normParams(t, "enc_norm") : null, // pre-norm stacks end with a norm
      decNorm: c.norm_first ? normParams(t, "dec_norm") : null,
      out: linearParams(t, "out"), // (vocab, d_model)
    };
  }

  // ---- the forward pass ----------------------------------------------------------------------

  // ids (seq,) → rows (seq, d_model): the embedding times √d_model, plus position i's row.
  function embed(net, table, ids) {
    var scale = net.config.embed_scale;
    return ids.map(function (id, i) {
      return table[id].map(function (x, j) { return x * scale + net.positions[i][j]; });
    });
  }

  function norm(X, p, eps) { return X.map(function (x) { return M.layerNorm(x, p.gamma, p.beta, eps); }); }
  function add(X, Y) { return X.map(function (x, i) { return x.map(function (v, j) { return v + Y[i][j]; }); }); }

  // One sublayer and its residual connection. Pre-norm: x + f(norm(x)); post-norm: norm(x + f(x)).
  // f returns {out, weights}; the weights come back with the new x.
  function residual(net, X, p, f) {
    var c = net.config, r = f(c.norm_first ? norm(X, p, c.eps) : X), Y = add(X, r.out);
    return { x: c.norm_first ? Y : norm(Y, p, c.eps), weights: r.weights };
  }

  function attend(net, p, Xq, Xkv, mask) {
    return M.multiHead(Xq, Xkv, p.W, net.config.n_heads, mask, p.biases);
  }

  // Position-wise feed-forward: linear2(relu(linear1(x))).
  function feedForward(p) {
    return function (X) {
      var hidden = M.linear(X, p[0].W, p[0].b).map(function (h) {
        return h.map(function (v) { return v > 0 ? v : 0; });
      });
      return { out: M.linear(hidden, p[1].W, p[1].b) };
    };
  }

  // Source ids (seq_s,) → memory (seq_s, d_model). Every token sees every token: no mask.
  function encode(net, ids) {
    var x = embed(net, net.srcEmbed, ids);
    net.encoder.forEach(function (layer) {
      x = residual(net, x, layer.norms[0], function (h) { return attend(net, layer.self, h, h, null); }).x;
      x = residual(net, x, layer.norms[1], feedForward(layer.ff)).x;
    });
    return net.encNorm ? norm(x, net.encNorm, net.config.eps) : x;
  }

  // The decoder on the tokens so far (seq_t,) → the next token's logits (vocab,) and, per layer,
  // per head, the last query's cross-attention row (seq_s,).
  function decodeNext(net, prefix, memory) {
    var x = embed(net, net.tgtEmbed, prefix), causal = M.causalMask(prefix.length), cross = [];
    net.decoder.forEach(function (layer) {
      x = residual(net, x, layer.norms[0], function (h) { return attend(net, layer.self, h, h, causal); }).x;
      var r = residual(net, x, layer.norms[1], function (h) { return attend(net, layer.cross, h, memory, null); });
      x = r.x;
      cross.push(r.weights.map(function (w) { return w[w.length - 1]; })); // (heads, seq_s)
      x = residual(net, x, layer.norms[2], feedForward(layer.ff)).x;
    });
    var last = x[x.length - 1];
    if (net.decNorm) last = M.layerNorm(last, net.decNorm.gamma, net.decNorm.beta, net.config.eps);
    return { logits: M.linear([last], net.out.W, net.out.b)[0], cross: cross };
  }

  // The first index of the largest value, as torch.argmax.
  function argmax(row) {
    var best = 0;
    for (var i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
    return best;
  }

  // Greedy decoding: encode once, then one decoder pass per written token.
  function greedy(net, src) {
    var c = net.config, memory = encode(net, src), prefix = [c.bos_id];
    var out = { ids: [], logits: [], cross: [] }; // cross: (steps, layers, heads, seq_s)
    while (out.ids.length < c.max_steps) {
      var r = decodeNext(net, prefix, memory), next = argmax(r.logits);
      out.ids.push(next);
      out.logits.push(r.logits);
      out.cross.push(r.cross);
      prefix.push(next);
      if (next === c.eos_id) break;
    }
    out.source = src.map(function (id) { return c.token_names[id]; });
    out.tokens = out.ids.map(function (id) { return c.token_names[id]; });
    return out;
  }

  // The typed text → source ids (digits, [EOS]), or a message saying what to type instead.
  // ui.text gives the words (explorers.decoding.check_digits says the same).
  function parse(text, c, ui) {
    var s = String(text).trim(), lo = c.lengths[0], hi = c.lengths[1];
    if (!s) return { message: ui.text("empty", { lo: lo, hi: hi }) };
    var bad = s.match(/[^0-9]/);
    if (bad) return { message: ui.text("not_digit", { char: bad[0] }) };
    if (s.length < lo || s.length > hi) {
      return { message: ui.text("wrong_length", { lo: lo, hi: hi, n: s.length }) };
    }
    var ids = s.split("").map(function (ch) { return Number(ch) + c.digit_offset; });
    return { ids: ids.concat([c.eos_id]) };
  }

  // Plotly merges equal category labels: "3 1 4 1 5" gets positions, as viz.unique_labels does.
  function uniqueLabels(tokens) {
    var distinct = new Set(tokens).size === tokens.length;
    return distinct ? tokens : tokens.map(function (t, i) { return i + ":" + t; });
  }

  // ---- the explorer ----------------------------------------------------------------------------

  CourseAttention.register("decoding", function (spec, ui) {
    var net = build(ui.model), c = net.config, cache = {};

    // Decode typed text (no cache): the page's test times this.
    ui.decode = function (text) {
      var parsed = parse(text, c, ui);
      return parsed.message ? parsed : greedy(net, parsed.ids);
    };

    // The cross-attention row of one step for the chosen layer and head (-1: the heads' mean).
    function row(d, step, layer, head) {
      var heads = d.cross[step][layer];
      if (head >= 0) return heads[head];
      return heads[0].map(function (_, j) {
        var s = 0;
        for (var h = 0; h < heads.length; h++) s += heads[h][j];
        return s / heads.length;
      });
    }

    function update(v) {
      var parsed = parse(v.digits, c, ui);
      if (parsed.message) {
        ui.decoded = null;
        return { message: parsed.message };
      }
      var key = parsed.ids.join(" ");
      var d = cache[key] || (cache[key] = greedy(net, parsed.ids)); // once per typed string
      ui.decoded = d;
      var n = d.ids.length;
      // The step slider runs over this decoding's steps (at least 2, as in the notebook).
      ui.controls.step.input.max = Math.max(2, n);
      var step = Math.min(v.step, Math.max(2, n));
      if (step !== v.step) ui.setValue("step", step);
      step = Math.min(step, n);
      var rows = [], y = [];
      for (var i = 0; i < n; i++) {
        // the rows' labels, whole ("step 3"): spec.text.step_1, step_2, …
        y.push(spec.text["step_" + (i + 1)] || String(i + 1));
        // steps not taken yet stay blank
        rows.push(i < step ? row(d, i, v.layer, v.head) : d.source.map(function () { return null; }));
      }
      var now = row(d, step - 1, v.layer, v.head), keys = uniqueLabels(d.source);
      var soFar = ["[BOS]"].concat(d.tokens.slice(0, step - 1)).join(" ");
      return {
        data: [
          { z: rows, x: keys, y: y },
          { x: keys, y: now, text: now.map(function (w) { return w.toFixed(2); }) },
          { text: [ui.text("picks", { so_far: soFar, token: d.tokens[step - 1] })] },
        ],
        layout: {
          title: Object.assign({}, ui.template.layout.title, {
            text: ui.text(v.head < 0 ? "title_average" : "title_head",
                          { step: step, n: n, layer: v.layer + 1, head: v.head + 1 }),
          }),
        },
      };
    }
    return update;
  });
})();
