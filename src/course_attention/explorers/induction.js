// Chapter 9: induction heads. Type token ids; the chapter's trained attention-only model runs on
// them in this page, and the heatmap shows the chosen head's weights (query rows, key columns).
//
// The forward pass is the one of course_attention.induction.AttentionOnlyTransformer:
//   x = embed[token] + pos[position]                      (seq, d_model)
//   for each layer:  x = x + W_o · heads(causal attention of x)   (no MLP, no layer norm)
//   logits = unembed(x)                                    (seq, vocab)
// The model file stores float32 weights; the page computes in float64.
(function () {
  "use strict";
  var M = CourseAttention.math;

  CourseAttention.register("induction", function (spec, ui) {
    var c = ui.model.config, T = ui.model.tensors; // c: RepeatConfig's fields
    var maxId = c.vocab - 1;

    // Each layer's projections, turned from torch's Linear layout (out, in) into x @ W.
    var layers = [];
    for (var l = 0; l < c.n_layers; l++) {
      var p = "layers." + l + ".";
      layers.push({
        W: { q: M.transpose(T[p + "W_q.weight"]), k: M.transpose(T[p + "W_k.weight"]),
             v: M.transpose(T[p + "W_v.weight"]), o: M.transpose(T[p + "W_o.weight"]) },
        b: { q: T[p + "W_q.bias"], k: T[p + "W_k.bias"], v: T[p + "W_v.bias"], o: T[p + "W_o.bias"] },
      });
    }

    // "5 17 42" -> {tokens: [5, 17, 42]}, or {message} saying what is wrong with the text.
    function parse(text) {
      var parts = text.split(/[\s,]+/).filter(function (s) { return s.length > 0; });
      if (!parts.length) return { message: ui.text("no_tokens", { max: maxId }) };
      if (parts.length > c.seq_len) {
        return { message: ui.text("too_many", { n: parts.length, seq_len: c.seq_len }) };
      }
      for (var i = 0; i < parts.length; i++) {
        if (!/^\d+$/.test(parts[i])) {
          return { message: ui.text("not_id", { part: parts[i], max: maxId }) };
        }
        if (Number(parts[i]) > maxId) {
          return { message: ui.text("outside", { part: parts[i], max: maxId }) };
        }
      }
      return { tokens: parts.map(Number) };
    }

    // The model on one sequence: every head's weights [layer][head] (seq, seq) and the logits.
    function forward(tokens) {
      var x = tokens.map(function (t, i) {
        return T["embed.weight"][t].map(function (e, j) { return e + T.pos[i][j]; });
      });
      var mask = M.causalMask(tokens.length), weights = [];
      layers.forEach(function (L) {
        var r = M.multiHead(x, x, L.W, c.n_heads, mask, L.b);
        x = x.map(function (row, i) { return row.map(function (v, j) { return v + r.out[i][j]; }); });
        weights.push(r.weights);
      });
      return { weights: weights, logits: M.linear(x, T["unembed.weight"], T["unembed.bias"]) };
    }

    function argmax(row) {
      var best = 0;
      for (var j = 1; j < row.length; j++) if (row[j] > row[best]) best = j;
      return best;
    }

    // A random sequence with one repeated segment, drawn as induction.repeat_batch draws them.
    function randomSequence() {
      var n = c.seq_len, randint = function (k) { return Math.floor(Math.random() * k); };
      var len = c.min_len + randint(c.max_len - c.min_len + 1);
      var first = randint(n - 2 * len + 1);
      var second = first + len + randint(n - len - first - len + 1);
      var tokens = [];
      for (var i = 0; i < n; i++) tokens.push(randint(c.vocab));
      for (i = 0; i < len; i++) tokens[second + i] = tokens[first + i];
      return tokens.join(" ");
    }

    // The ids in a box of four lines under its label, not a one-line box beside it: at 375 px
    // the one-line box was 111 px wide and showed 4 of 48 ids. The page's one-line input stays,
    // hidden, as the control that is read and written; the box mirrors it both ways.
    var box = ui.controls.tokens, area = document.createElement("textarea");
    area.rows = 4; // 48 ids of up to 2 digits: 4 lines of about 40 characters at 375 px
    area.className = "ca-input ca-tokens";
    area.spellcheck = false;
    area.value = box.input.value;
    area.id = box.input.id; // the label names the box the reader types in
    box.input.removeAttribute("id");
    area.style.cssText = "flex: 1 1 100%; width: 100%; font-family: monospace; box-sizing: border-box";
    box.element.style.flexWrap = "wrap"; // the label on its own line, the box under it
    box.input.hidden = true;
    box.input.parentNode.insertBefore(area, box.input);
    area.addEventListener("input", function () {
      box.input.value = area.value;
      box.input.dispatchEvent(new Event("input"));
    });

    var last = { text: null, run: null }; // the forward pass is redone only when the text changes

    function update(v, changed) {
      var text = v.tokens;
      if (changed === "draw") {
        text = randomSequence();
        ui.setValue("tokens", text);
      }
      if (area.value !== text) area.value = text; // a drawn or restored sequence shows in the box
      if (text !== last.text) {
        var parsed = parse(text);
        if (parsed.message) return parsed;
        var run = forward(parsed.tokens);
        run.tokens = parsed.tokens;
        run.predictions = run.logits.map(argmax); // the model's next token at each position
        last = { text: text, run: run };
        ui.lastLogits = run.logits;
        ui.lastPredictions = run.predictions;
        ui.lastWeights = run.weights;
      }
      var r = last.run, n = r.tokens.length, layer = Number(v.layer), head = Number(v.head);
      var labels = r.tokens.map(function (t, i) { return i + ":t" + t; }); // as position_labels
      var right = 0;
      for (var i = 0; i + 1 < n; i++) if (r.predictions[i] === r.tokens[i + 1]) right++;
      var guess = r.predictions.map(function (p) {
        return new Array(n).fill("t" + p); // hover: the model's next token after this query
      });
      return {
        data: [{
          z: r.weights[layer][head], x: labels, y: labels, customdata: guess,
          texttemplate: n <= 12 ? "%{z:.2f}" : "",
          hovertemplate: spec.text.hover, // plotly fills its %{…} fields itself
        }],
        layout: {
          // as explorers.induction.height, and no taller than wide: square cells on a phone too
          height: Math.max(300, Math.min(60 + 40 * n, spec.data.max_height, ui.figure.clientWidth + 60)),
          title: Object.assign({}, ui.template.layout.title, {
            text: ui.text("title", { layer: layer, head: head }) + "<br>" +
              ui.text("right", { right: right, n: n - 1 }),
          }),
        },
      };
    }

    return update;
  });
})();
