// Chapter 8: the GPT you trained, running in this page. Type a prompt; the model reads it one
// character at a time, then the bars show the next-character distribution after temperature,
// top-k and top-p (course_attention.sampling), and the text shows a continuation: greedy, or
// sampled with a seeded generator that the notebook's explorer uses too (same text in both).
(function () {
  "use strict";
  var M = CourseAttention.math;

  // ---- the model: one position at a time, with a KV cache (chapter 8) ----------------------
  // x @ W^T + b for one vector x and a torch.nn.Linear weight W (out, in).
  function linear(x, W, b) {
    var out = new Array(W.length);
    for (var j = 0; j < W.length; j++) out[j] = M.dot(x, W[j]) + (b ? b[j] : 0);
    return out;
  }

  function add(x, y) { for (var i = 0; i < x.length; i++) x[i] += y[i]; return x; }

  // GELU's tanh approximation, as GPT-2 (FeedForward(activation="gelu_tanh")):
  // 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3)))
  var GELU_C = Math.sqrt(2 / Math.PI);
  function gelu(v) { return 0.5 * v * (1 + Math.tanh(GELU_C * (v + 0.044715 * v * v * v))); }

  function GPT(model) {
    var c = model.config, t = model.tensors;
    this.config = c;
    this.tok = t["tok_embed.weight"]; // (vocab, d_model)
    this.pos = t["pos_embed.weight"]; // (context, d_model)
    this.blocks = [];
    for (var l = 0; l < c.n_layers; l++) {
      var p = function (name) { return t["blocks." + l + "." + name]; };
      this.blocks.push({
        norm1: [p("norm1.weight"), p("norm1.bias")], norm2: [p("norm2.weight"), p("norm2.bias")],
        Wq: p("attn.W_q.weight"), bq: p("attn.W_q.bias"), Wk: p("attn.W_k.weight"), bk: p("attn.W_k.bias"),
        Wv: p("attn.W_v.weight"), bv: p("attn.W_v.bias"), Wo: p("attn.W_o.weight"), bo: p("attn.W_o.bias"),
        W1: p("ff.linear1.weight"), b1: p("ff.linear1.bias"), W2: p("ff.linear2.weight"), b2: p("ff.linear2.bias"),
      });
    }
    this.norm = [t["norm.weight"], t["norm.bias"]];
    // untied: its own output layer; tied: the token embedding scores the characters (no bias)
    this.out = [c.tied ? this.tok : t["out.weight"], null];
  }

  // An empty cache: every layer's keys and values so far (one row per position).
  GPT.prototype.newCache = function () {
    var cache = { keys: [], values: [], length: 0 };
    for (var l = 0; l < this.config.n_layers; l++) { cache.keys.push([]); cache.values.push([]); }
    return cache;
  };

  // Forget every position from `length` on (keep the prompt, drop a continuation).
  GPT.prototype.truncate = function (cache, length) {
    for (var l = 0; l < cache.keys.length; l++) { cache.keys[l].length = length; cache.values[l].length = length; }
    cache.length = length;
  };

  // Read token `id` at the next position; return the logits (vocab,) predicting the one after.
  GPT.prototype.step = function (id, cache) {
    var c = this.config, eps = c.norm_eps, dh = c.d_model / c.n_heads, scale = 1 / Math.sqrt(dh);
    var x = add(this.tok[id].slice(), this.pos[cache.length]); // token + position embedding
    for (var l = 0; l < this.blocks.length; l++) {
      var b = this.blocks[l], K = cache.keys[l], V = cache.values[l];
      var h = M.layerNorm(x, b.norm1[0], b.norm1[1], eps); // pre-norm
      var q = linear(h, b.Wq, b.bq);
      K.push(linear(h, b.Wk, b.bk)); // this position's key and value join the cache
      V.push(linear(h, b.Wv, b.bv));
      var merged = new Array(c.d_model).fill(0);
      for (var head = 0; head < c.n_heads; head++) { // causal: the cache holds only the past
        var lo = head * dh, scores = new Array(K.length);
        for (var j = 0; j < K.length; j++) {
          var s = 0;
          for (var d = lo; d < lo + dh; d++) s += q[d] * K[j][d];
          scores[j] = s * scale;
        }
        var w = M.softmax(scores);
        for (j = 0; j < V.length; j++) for (d = lo; d < lo + dh; d++) merged[d] += w[j] * V[j][d];
      }
      add(x, linear(merged, b.Wo, b.bo)); // x + attn(norm1(x))
      var f = linear(M.layerNorm(x, b.norm2[0], b.norm2[1], eps), b.W1, b.b1);
      add(x, linear(f.map(gelu), b.W2, b.b2)); // x + ff(norm2(x))
    }
    cache.length++;
    return linear(M.layerNorm(x, this.norm[0], this.norm[1], eps), this.out[0], this.out[1]);
  };

  // ---- choosing the next character: course_attention.sampling ---------------------------
  // Ids by decreasing probability, the lower id first on a tie (numpy's stable argsort).
  function descending(probs) {
    return probs.map(function (_, i) { return i; })
      .sort(function (a, b) { return probs[b] - probs[a] || a - b; });
  }

  function renormalise(probs, keep) {
    var kept = probs.map(function (p, i) { return keep[i] ? p : 0; });
    var sum = kept.reduce(function (s, p) { return s + p; }, 0);
    return kept.map(function (p) { return p / sum; });
  }

  // softmax(logits / T), then keep the k most likely, then the smallest set with mass ≥ p.
  function nextTokenProbabilities(logits, T, k, p) {
    var probs = M.softmax(logits.map(function (z) { return z / T; }));
    var order = descending(probs), keep = new Array(probs.length).fill(false);
    order.slice(0, k).forEach(function (i) { keep[i] = true; });
    probs = renormalise(probs, keep);
    order = descending(probs);
    keep = new Array(probs.length).fill(false);
    var cum = 0;
    order.forEach(function (i, j) {
      var before = (cum + probs[i]) - probs[i]; // mass of the more likely tokens
      cum += probs[i];
      // sampling.top_p_filter's rule: keep while the mass ahead is below p - 1e-12 (rounding);
      // the most likely token always stays; p = 1 keeps every token above 0
      keep[i] = p === 1 ? probs[i] > 0 : before < p - 1e-12 || j === 0;
    });
    return renormalise(probs, keep);
  }

  function argmax(z) {
    var best = 0;
    for (var i = 1; i < z.length; i++) if (z[i] > z[best]) best = i;
    return best;
  }

  // The seeded generator (course_attention.explorers.gpt.uniforms): state = (a·state + c) mod 2^32.
  // Every step is exact in float64, so Python and this page draw the same numbers.
  function uniforms(lcg, seed) {
    var state = ((seed % lcg.m) + lcg.m) % lcg.m;
    return function () { state = (lcg.a * state + lcg.c) % lcg.m; return state / lcg.m; };
  }

  // The token whose slice of [0, 1) holds u: the first id whose running total exceeds u.
  function inverseCdf(probs, u) {
    var cum = 0, last = 0;
    for (var i = 0; i < probs.length; i++) {
      cum += probs[i];
      if (probs[i] > 0) last = i;
      if (cum > u) return i;
    }
    return last;
  }

  // ---- what the figure shows -------------------------------------------------------------
  function charLabel(ch) { return ch === "\n" ? "⏎" : ch === " " ? "␣" : ch; }

  // plotly decodes &amp; &lt; &gt; but draws &quot; as it is: quotes stay (viz.decoder_only)
  function escapeHtml(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // Prompt (bold) and continuation: lines cut at 34 characters, the last 6 (viz.sample_html).
  // `read`: the prompt's last characters the model read; the others are grey, and the first
  // drawn line says so (`cropped`, viz.decoder_only.CROPPED).
  function sampleHtml(prompt, sample, read, cropped) {
    var full = prompt + sample, rows = [], start = 0, width = 34, drawn = [];
    var unread = Math.max(prompt.length - read, 0);
    full.split("\n").forEach(function (line) {
      for (var a = 0; a < Math.max(line.length, 1); a += width) {
        rows.push([start + a, start + Math.min(a + width, line.length)]);
      }
      start += line.length + 1;
    });
    var text = function (t) { return escapeHtml(t).replace(/ /g, "\u00a0"); };
    if (unread) drawn.push("<i>" + text(cropped) + "</i>");
    rows.slice(-(6 - drawn.length)).forEach(function (r) {
      var a = r[0], b = r[1];
      var cut = [a, Math.min(Math.max(unread, a), b), Math.min(Math.max(prompt.length, a), b), b];
      var grey = full.slice(cut[0], cut[1]), bold = full.slice(cut[1], cut[2]);
      drawn.push((grey ? '<span style="color:#8a8a8a">' + text(grey) + "</span>" : "") +
        (bold ? "<b>" + text(bold) + "</b>" : "") + text(full.slice(cut[2], cut[3])));
    });
    return drawn.join("<br>");
  }

  // A long title broken after its first ": " (viz.title_lines).
  function titleLines(t) { return t.length > 40 && t.indexOf(": ") >= 0 ? t.replace(": ", ":<br>") : t; }

  // A character as Python's repr names it, for the message about characters outside the vocabulary.
  function pyRepr(ch) {
    var named = { "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'" };
    var code = ch.codePointAt(0);
    if (named[ch]) return "'" + named[ch] + "'";
    if (code < 32 || (code >= 127 && code < 161)) return "'\\x" + code.toString(16).padStart(2, "0") + "'";
    return "'" + ch + "'";
  }

  CourseAttention.register("gpt", function (spec, ui) {
    var model = new GPT(ui.model), c = ui.model.config, d = spec.data;
    var index = {};
    Array.from(c.vocab).forEach(function (ch, i) { index[ch] = i; });
    var memo = { prompt: null }; // the last prompt's cache and logits: sliders do not rerun it

    // The prompt as ids, or a message saying why the model cannot read it.
    function encode(prompt) {
      var chars = Array.from(prompt);
      if (!chars.length) return { message: ui.text("empty") };
      var bad = chars.filter(function (ch) { return !(ch in index); });
      if (bad.length) {
        bad = Array.from(new Set(bad)).sort();
        return { message: ui.text("outside", { size: c.vocab_size, chars: bad.map(pyRepr).join(", ") }) };
      }
      // the model reads the last `context` characters, as gpt.generate (and nanoGPT) crop them
      return { ids: chars.map(function (ch) { return index[ch]; }).slice(-c.context) };
    }

    function readPrompt(prompt, ids) {
      if (memo.prompt === prompt) return;
      var cache = model.newCache(), logits = null;
      ids.forEach(function (id) { logits = model.step(id, cache); });
      memo = { prompt: prompt, cache: cache, logits: logits };
    }

    // gpt.generate: choose from the prompt's logits, read the choice, choose again, n times.
    // The model reads the last `context` tokens (nanoGPT's idx[:, -block_size:]): once the text
    // outgrows the context the window slides, every position moves by one, so the cached keys
    // and values are stale and the window is read again into a new cache.
    function continuation(ids, n, choose) {
      var out = [], z = memo.logits, cache = memo.cache, seq = ids.slice();
      for (var i = 0; i < n; i++) {
        var next = choose(z);
        out.push(next);
        if (i === n - 1) break;
        seq.push(next);
        if (seq.length > c.context) seq.shift(); // the last `context` tokens
        if (cache.length < c.context) z = model.step(next, cache); // one position's work
        else {
          cache = model.newCache();
          seq.forEach(function (id) { z = model.step(id, cache); });
        }
      }
      model.truncate(memo.cache, ids.length); // keep the prompt's keys and values for next time
      return out;
    }

    function update(v) {
      var k = Math.round(v.top_k), read = encode(v.prompt);
      if (read.message) return { message: read.message };
      var ids = read.ids;
      if (!(v.temperature > 0)) return { message: ui.text("bad_temperature") };
      readPrompt(v.prompt, ids);
      var n = d.n_new;
      var probs = nextTokenProbabilities(memo.logits, v.temperature, k, v.top_p);
      var draw = uniforms(d.lcg, d.seed), drawn = [];
      var choose = v.sample ? function (z) {
        var u = draw();
        drawn.push(u);
        return inverseCdf(nextTokenProbabilities(z, v.temperature, k, v.top_p), u);
      } : argmax;
      var tokens = continuation(ids, n, choose);
      ui.lastLogits = memo.logits; // for the browser test: the numbers behind the bars
      ui.lastProbs = probs;
      ui.lastTokens = tokens;
      ui.lastUniforms = drawn;

      // the most likely characters that can still be drawn (explorers.gpt.shown_ids)
      var shown = descending(probs).slice(0, d.shown).filter(function (i) { return probs[i] > 0; });
      var mass = 0;
      var values = shown.map(function (i) { mass += probs[i]; return probs[i]; });
      values.push(Math.max(0, 1 - mass));
      var text = tokens.map(function (i) { return c.vocab[i]; }).join("");
      return {
        data: [
          { x: shown.map(function (i) { return charLabel(c.vocab[i]); }).concat([ui.text("all_others")]),
            y: values, text: values.map(function (p) { return p.toFixed(2); }) },
          { text: [sampleHtml(v.prompt, text, c.context, ui.text("cropped", { n: c.context }))] },
        ],
        layout: {
          title: Object.assign({}, ui.template.layout.title, {
            // two lines, as explorers.gpt writes it (viz.title_lines leaves it as it is)
            text: titleLines(ui.text("title_settings", { temperature: v.temperature, top_k: k, top_p: v.top_p }) +
              "<br>" + ui.text(v.sample ? "title_sampled" : "title_greedy", { n: n })),
          }),
        },
      };
    }
    return update;
  });
})();
