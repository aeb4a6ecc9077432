// Attention, Step by Step — the explorer runtime: live figures in the reader's browser.
//
// No build step, no dependency but the plotly.js the site already serves. This file holds
//   1. the math every explorer shares (float64, the course's semantics: a fully masked row of
//      a softmax gives zeros, not NaN), the twin of course_attention.numpy_ref;
//   2. the controls (labelled, keyboard-operable) built from the spec the notebook wrote;
//   3. the loop: on every input event, recompute and redraw with Plotly.react.
// Each explorer kind lives in its own small file (lookup.js, mask.js, …) and registers itself
// with CourseAttention.register(kind, setup). Open them: they are meant to be read.
(function () {
  "use strict";

  // ---- 1. math ------------------------------------------------------------------------------
  // A matrix is an array of rows; a row is an array of numbers.

  function zeros(rows, cols) {
    var out = [];
    for (var i = 0; i < rows; i++) out.push(new Array(cols).fill(0));
    return out;
  }

  function transpose(A) {
    var out = zeros(A[0].length, A.length);
    for (var i = 0; i < A.length; i++) for (var j = 0; j < A[0].length; j++) out[j][i] = A[i][j];
    return out;
  }

  // (n, k) @ (k, m) -> (n, m)
  function matmul(A, B) {
    var n = A.length, k = B.length, m = B[0].length, out = zeros(n, m);
    for (var i = 0; i < n; i++) {
      var a = A[i], o = out[i];
      for (var p = 0; p < k; p++) {
        var aip = a[p], b = B[p];
        for (var j = 0; j < m; j++) o[j] += aip * b[j];
      }
    }
    return out;
  }

  function dot(a, b) {
    var s = 0;
    for (var i = 0; i < a.length; i++) s += a[i] * b[i];
    return s;
  }

  // Stable softmax of one row. `allowed` (optional, booleans): false entries get weight 0.
  // A row with nothing allowed gives all zeros — the course's rule (chapter 4).
  function softmax(row, allowed) {
    var max = -Infinity, i;
    for (i = 0; i < row.length; i++) if ((!allowed || allowed[i]) && row[i] > max) max = row[i];
    var out = new Array(row.length).fill(0);
    if (max === -Infinity) return out;
    var sum = 0;
    for (i = 0; i < row.length; i++) {
      if (!allowed || allowed[i]) {
        out[i] = Math.exp(row[i] - max);
        sum += out[i];
      }
    }
    for (i = 0; i < row.length; i++) out[i] /= sum;
    return out;
  }

  // Layer norm of one vector (biased variance, as torch.nn.LayerNorm).
  function layerNorm(x, gamma, beta, eps) {
    eps = eps === undefined ? 1e-5 : eps;
    var n = x.length, mean = 0, v = 0, i;
    for (i = 0; i < n; i++) mean += x[i];
    mean /= n;
    for (i = 0; i < n; i++) v += (x[i] - mean) * (x[i] - mean);
    v /= n;
    var inv = 1 / Math.sqrt(v + eps), out = new Array(n);
    for (i = 0; i < n; i++) out[i] = (x[i] - mean) * inv * (gamma ? gamma[i] : 1) + (beta ? beta[i] : 0);
    return out;
  }

  // Scaled dot-product attention of one head.
  // Q (seq_q, d_k), K (seq_k, d_k), V (seq_k, d_v); mask (seq_q, seq_k) of booleans, true = may
  // attend, or null; scale defaults to 1/sqrt(d_k). Returns {out (seq_q, d_v), weights (seq_q, seq_k)}.
  function attention(Q, K, V, mask, scale) {
    if (scale === undefined || scale === null) scale = 1 / Math.sqrt(Q[0].length);
    var weights = Q.map(function (q, i) {
      var scores = K.map(function (k) { return dot(q, k) * scale; });
      return softmax(scores, mask ? mask[i] : null);
    });
    return { out: matmul(weights, V), weights: weights };
  }

  // Columns [start, start + width) of every row.
  function columns(A, start, width) {
    return A.map(function (row) { return row.slice(start, start + width); });
  }

  // Multi-head attention (chapter 5): X_q (seq_q, d), X_kv (seq_k, d); W_q, W_k, W_v, W_o (d, d)
  // used as x @ W; biases optional ({q, k, v, o} of length d). Heads are contiguous column blocks.
  // Returns {out (seq_q, d), weights: [heads] of (seq_q, seq_k)}.
  function multiHead(X_q, X_kv, W, nHeads, mask, biases) {
    var addBias = function (A, b) {
      return b ? A.map(function (row) { return row.map(function (x, j) { return x + b[j]; }); }) : A;
    };
    biases = biases || {};
    var Q = addBias(matmul(X_q, W.q), biases.q);
    var K = addBias(matmul(X_kv, W.k), biases.k);
    var V = addBias(matmul(X_kv, W.v), biases.v);
    var dh = Q[0].length / nHeads, weights = [], heads = [];
    for (var h = 0; h < nHeads; h++) {
      var r = attention(columns(Q, h * dh, dh), columns(K, h * dh, dh), columns(V, h * dh, dh), mask);
      weights.push(r.weights);
      heads.push(r.out);
    }
    var merged = Q.map(function (_, i) {
      return [].concat.apply([], heads.map(function (o) { return o[i]; }));
    });
    return { out: addBias(matmul(merged, W.o), biases.o), weights: weights };
  }

  // x @ W^T + b for a torch.nn.Linear weight W (out, in): the way the exported models store it.
  function linear(X, W, b) {
    return X.map(function (x) {
      return W.map(function (w, j) { return dot(x, w) + (b ? b[j] : 0); });
    });
  }

  function causalMask(n) {
    var out = [];
    for (var i = 0; i < n; i++) {
      var row = [];
      for (var j = 0; j < n; j++) row.push(j <= i);
      out.push(row);
    }
    return out;
  }

  var math = {
    zeros: zeros, transpose: transpose, matmul: matmul, dot: dot, softmax: softmax,
    layerNorm: layerNorm, attention: attention, columns: columns, multiHead: multiHead,
    linear: linear, causalMask: causalMask,
  };

  // ---- model files -------------------------------------------------------------------------
  // A model file is JSON: {config, tensors: {name: {shape, data}}} with data the float32 numbers
  // in little-endian bytes, base64 (course_attention.explorers.core.model_payload writes it).

  function decodeTensor(t) {
    var bin = atob(t.data), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var flat = Array.from(new Float32Array(bytes.buffer));
    if (t.shape.length === 1) return flat;
    if (t.shape.length === 0) return flat[0];
    var rows = t.shape[0], cols = flat.length / rows, out = [];
    for (var r = 0; r < rows; r++) out.push(flat.slice(r * cols, (r + 1) * cols));
    return out; // 2-D; higher ranks are flattened after the first axis
  }

  function loadModel(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status + " for " + url);
      return response.json();
    }).then(function (file) {
      var tensors = {};
      Object.keys(file.tensors).forEach(function (name) { tensors[name] = decodeTensor(file.tensors[name]); });
      return { config: file.config, tensors: tensors, extra: file.extra || {} };
    });
  }

  // ---- 2. controls -------------------------------------------------------------------------

  var counter = 0;

  function makeControl(c, onInput) {
    var id = "ca-control-" + (++counter), wrap = document.createElement("div");
    wrap.className = "ca-control ca-control-" + c.type;
    var label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = c.label;
    var input, readout = null;
    if (c.type === "range") {
      input = document.createElement("input");
      input.type = "range";
      input.min = c.min; input.max = c.max; input.step = c.step; input.value = c.value;
      readout = document.createElement("output");
      readout.htmlFor = id;
      readout.className = "ca-readout";
    } else if (c.type === "select") {
      input = document.createElement("select");
      c.options.forEach(function (o, i) {
        var opt = document.createElement("option");
        opt.value = String(i);
        opt.textContent = o.label;
        if (JSON.stringify(o.value) === JSON.stringify(c.value)) opt.selected = true;
        input.appendChild(opt);
      });
    } else if (c.type === "checkbox") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = !!c.value;
    } else if (c.type === "text") {
      input = document.createElement("input");
      input.type = "text";
      input.value = c.value;
      input.autocomplete = "off";
      input.spellcheck = false;
    } else if (c.type === "button") {
      input = document.createElement("button");
      input.type = "button";
      input.textContent = c.label;
      label = null;
    } else {
      throw new Error("unknown control type " + c.type);
    }
    input.id = id;
    input.name = c.id || c.name; // the id: the name code uses (the name may be translated)
    input.className = "ca-input";
    if (c.description) input.setAttribute("aria-description", c.description);

    function read() {
      if (c.type === "range") return Number(input.value);
      if (c.type === "select") return c.options[Number(input.selectedIndex)].value;
      if (c.type === "checkbox") return input.checked;
      if (c.type === "text") return input.value;
      return null;
    }
    function write(v) {
      if (c.type === "range") input.value = v;
      else if (c.type === "select") {
        var i = c.options.findIndex(function (o) { return JSON.stringify(o.value) === JSON.stringify(v); });
        if (i >= 0) input.selectedIndex = i;
      } else if (c.type === "checkbox") input.checked = !!v;
      else if (c.type === "text") input.value = v;
      show();
    }
    function show() {
      if (readout) readout.textContent = formatNumber(Number(input.value), c.format);
    }
    show();
    var event = c.type === "text" || c.type === "range" ? "input" : c.type === "button" ? "click" : "change";
    input.addEventListener(event, function () { show(); onInput(c.id || c.name); });
    if (label) wrap.appendChild(label);
    wrap.appendChild(input);
    if (readout) wrap.appendChild(readout);
    return { spec: c, element: wrap, input: input, read: read, write: write };
  }

  function formatNumber(x, digits) {
    if (digits === undefined || digits === null) digits = Number.isInteger(x) ? 0 : 2;
    return x.toFixed(digits);
  }

  // ---- words: the spec's templates -----------------------------------------------------------
  // Every word the page shows comes from the spec (spec.text, the controls' labels), in the
  // page's language: the Chinese book translates the English spec. A template is Python's
  // str.format text with named fields, "{n} of {total}", "{value:.2f}"; format(template, values)
  // fills it as Python does, so the page writes the notebook's titles exactly. Format specs
  // understood: none (a number as Python's str() writes it), ".Nf", "g" / ".Ng", "d".

  // A number as Python's "{:.Ng}" writes it (precision N, default 6; trailing zeros dropped).
  function formatG(x, precision) {
    if (!isFinite(x)) return x !== x ? "nan" : x > 0 ? "inf" : "-inf";
    if (x === 0) return (1 / x < 0 ? "-" : "") + "0";
    var p = precision === 0 ? 1 : precision, exp = Number(x.toExponential(p - 1).split("e")[1]);
    if (exp < -4 || exp >= p) {
      var parts = x.toExponential(p - 1).split("e"), mantissa = parts[0];
      if (mantissa.indexOf(".") >= 0) mantissa = mantissa.replace(/0+$/, "").replace(/\.$/, "");
      var e = Number(parts[1]);
      return mantissa + "e" + (e < 0 ? "-" : "+") + (Math.abs(e) < 10 ? "0" : "") + Math.abs(e);
    }
    var fixed = x.toFixed(Math.max(0, p - 1 - exp));
    return fixed.indexOf(".") >= 0 ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
  }

  function formatValue(value, spec) {
    if (typeof value !== "number") return String(value);
    var m;
    if (!spec) return String(value); // integers as Python writes ints; give floats a spec
    if ((m = /^\.(\d+)f$/.exec(spec))) return value.toFixed(Number(m[1]));
    if ((m = /^(?:\.(\d+))?g$/.exec(spec))) return formatG(value, m[1] === undefined ? 6 : Number(m[1]));
    if (spec === "d") return String(Math.trunc(value));
    throw new Error("format spec not understood: " + spec);
  }

  // Fill the {fields} of `template` from `values` ({{ and }} are braces, as in Python).
  function format(template, values) {
    return String(template).replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}/g,
      function (all, name, spec) {
        if (all === "{{") return "{";
        if (all === "}}") return "}";
        if (!values || !(name in values)) throw new Error("no value for {" + name + "} in " + template);
        return formatValue(values[name], spec);
      });
  }

  // ---- 3. the explorer loop ----------------------------------------------------------------

  var kinds = {};
  var explorers = [];

  function register(kind, setup) { kinds[kind] = setup; }

  function Explorer(root) {
    var self = this;
    this.root = root;
    this.spec = JSON.parse(root.querySelector("script.ca-spec").textContent);
    this.figure = root.querySelector(".plotly-graph-div");
    this.message = root.querySelector(".ca-message");
    this.controlsBox = root.querySelector(".ca-controls");
    this.controls = {};
    this.redrawMs = []; // per input event: recompute + Plotly.react, in milliseconds
    this.computeMs = []; // the recompute alone
    this.model = null;
    this.update = null;
    (this.spec.controls || []).forEach(function (c) { self.addControl(c); });
    this.template = { data: JSON.parse(JSON.stringify(this.figure.data || [])),
                      layout: JSON.parse(JSON.stringify(this.figure.layout || {})) };
    this.controlsBox.hidden = false;
    root.classList.add("ca-live");
    this.phone = false;
    if (this.spec.phone && this.isPhone()) this.fitWidth();
    if (this.spec.model) this.offerModel();
    else this.start();
  }

  // A phone's layout (spec.phone, a patch of the figure's layout: e.g. the word plane above
  // the bars instead of beside them) where the figure is narrower than PHONE_PX; the first
  // state takes it at once, every redraw after, and a turned phone switches back and forth.
  var PHONE_PX = 480;
  Explorer.prototype.isPhone = function () {
    return (this.figure.clientWidth || this.root.clientWidth) < PHONE_PX;
  };
  Explorer.prototype.layoutFor = function (layout) {
    this.phone = Boolean(this.spec.phone) && this.isPhone();
    return this.phone ? merge(layout, this.spec.phone) : layout;
  };
  Explorer.prototype.fitWidth = function () {
    if (this.lastResult && !this.lastResult.message) return this.redraw();
    var data = this.figure.data || this.template.data;
    window.Plotly.react(this.figure, data,
                        this.layoutFor(JSON.parse(JSON.stringify(this.template.layout || {}))));
  };
  // `patch` over `base`: objects merged key by key, arrays element by element, the rest replaced.
  function merge(base, patch) {
    if (Array.isArray(patch)) {
      var out = Array.isArray(base) ? base.slice() : [];
      patch.forEach(function (p, i) { out[i] = merge(out[i], p); });
      return out;
    }
    if (patch && typeof patch === "object") {
      var o = Object.assign({}, base && typeof base === "object" ? base : {});
      Object.keys(patch).forEach(function (k) { o[k] = merge(o[k], patch[k]); });
      return o;
    }
    return patch;
  }
  window.addEventListener("resize", function () {
    explorers.forEach(function (e) {
      if (e.spec.phone && e.isPhone() !== e.phone) e.fitWidth();
    });
  });

  Explorer.prototype.addControl = function (c) {
    var self = this, control = makeControl(c, function (name) { self.changed(name); });
    this.controls[c.id || c.name] = control;
    this.controlsBox.appendChild(control.element);
    return control;
  };

  Explorer.prototype.values = function () {
    var out = {}, self = this;
    Object.keys(this.controls).forEach(function (k) { out[k] = self.controls[k].read(); });
    return out;
  };

  Explorer.prototype.setValue = function (name, value) { this.controls[name].write(value); };

  // The spec's text `key` with its fields filled from `values` (see format).
  Explorer.prototype.text = function (key, values) {
    var T = this.spec.text || {};
    if (!(key in T)) throw new Error("no text " + key + " in the spec");
    return format(T[key], values);
  };

  // The label a select control shows for its current value (an option's words, translated).
  Explorer.prototype.optionLabel = function (name) {
    var c = this.controls[name], i = c.input.selectedIndex;
    return c.spec.options[i >= 0 ? i : 0].label;
  };

  Explorer.prototype.start = function () {
    var setup = kinds[this.spec.kind];
    if (!setup) return this.say(this.text("not_loaded", { kind: this.spec.kind }));
    this.update = setup(this.spec, this);
    this.redraw();
  };

  Explorer.prototype.offerModel = function () {
    var self = this, m = this.spec.model, button = document.createElement("button");
    button.type = "button";
    button.className = "ca-load";
    button.textContent = this.text("load_model", { kb: Math.round(m.bytes / 1024) });
    Object.keys(this.controls).forEach(function (k) { self.controls[k].input.disabled = true; });
    button.addEventListener("click", function () {
      button.disabled = true;
      button.textContent = self.text("loading_model");
      loadModel(m.url).then(function (model) {
        self.model = model;
        button.remove();
        Object.keys(self.controls).forEach(function (k) { self.controls[k].input.disabled = false; });
        self.start();
      }).catch(function (error) {
        button.disabled = false;
        button.textContent = self.text("retry_model");
        self.say(self.text("model_failed", { error: error.message }));
      });
    });
    this.controlsBox.insertBefore(button, this.controlsBox.firstChild);
  };

  Explorer.prototype.changed = function (name) {
    if (this.update) this.redraw(name);
  };

  Explorer.prototype.say = function (text) {
    this.message.textContent = text || "";
    this.message.hidden = !text;
  };

  // Recompute and redraw. The kind's update(values, changed) returns
  //   {data: [traces], layout: {...}} — traces merged over the template's, index by index; or
  //   {message: "..."} — shown instead of a figure (bad input: never an exception in the console).
  Explorer.prototype.redraw = function (changed) {
    var t0 = performance.now(), result;
    try {
      result = this.update(this.values(), changed || null);
    } catch (error) {
      result = { message: error.message };
    }
    var t1 = performance.now();
    if (!result) return;
    if (result.message) {
      this.say(result.message);
      this.figure.classList.add("ca-stale");
      this.lastResult = result;
      return;
    }
    this.say("");
    this.figure.classList.remove("ca-stale");
    var t = this.template;
    var data = result.data.map(function (trace, i) { return Object.assign({}, t.data[i] || {}, trace); });
    // A deep copy: the title script (course_titles.js) adjusts the drawn layout's margin in
    // place, which must not reach the template and grow at every redraw.
    var layout = this.layoutFor(Object.assign(JSON.parse(JSON.stringify(t.layout || {})),
                                              result.layout || {}));
    window.Plotly.react(this.figure, data, layout);
    this.lastResult = result;
    this.computeMs.push(t1 - t0);
    this.redrawMs.push(performance.now() - t0);
  };

  function boot() {
    document.querySelectorAll("figure.ca-explorer").forEach(function (root) {
      if (root.caExplorer) return;
      var figure = root.querySelector(".plotly-graph-div");
      var go = function () { root.caExplorer = new Explorer(root); explorers.push(root.caExplorer); };
      if (figure) waitForPlot(figure, go);
    });
  }

  function waitForPlot(figure, go) {
    if (figure._fullLayout) return go();
    var tries = 0, timer = setInterval(function () {
      if (figure._fullLayout || ++tries > 200) { clearInterval(timer); go(); }
    }, 25);
  }

  window.CourseAttention = {
    math: math, register: register, explorers: explorers, loadModel: loadModel,
    decodeTensor: decodeTensor, boot: boot, format: format, formatNumber: formatNumber,
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else setTimeout(boot, 0);
})();
