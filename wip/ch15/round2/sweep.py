"""Scratch sweep: python sweep.py kind seed key=val ..."""
import sys, time, math, json
import numpy as np, torch
from course_attention.linear_attention import models, compare, recall
from course_attention.linear_attention import delta_rule, gated_delta_rule, linear_attention
from course_attention.modern import rms_norm, apply_rope, rope_cos_sin
from course_attention.training import fit, torch_threads

kind, seed = sys.argv[1], int(sys.argv[2])
opt = dict(lr=3e-2, warmup=30, steps=300, silu=0, norm=1, bias=0.0, A="fla", nkeys=32, d=32, h=2, nvals=16, layers=2, conv=4, outscale=1.0, batch=32)
for a in sys.argv[3:]:
    k, v = a.split("="); opt[k] = type(opt[k])(v) if not isinstance(opt[k], str) else v

orig_init = models.Mixer.__init__
def init(self, config, kind):
    orig_init(self, config, kind)
    if kind in ("delta", "gated_delta"):
        if opt["bias"]:
            self.beta = torch.nn.Linear(config.d_model, config.heads, bias=True)
            torch.nn.init.constant_(self.beta.bias, opt["bias"])
    if kind == "gated_delta" and opt["A"] != "fla":
        h = config.heads
        if opt["A"] == "slow":   # A in [1,16] as FLA but dt small -> decays near 1
            self.A_log.data = torch.log(torch.empty(h).uniform_(1, 16))
        elif opt["A"] == "one":   # A=1, dt log-uniform, decay exp(-dt)~ .9-.999
            self.A_log.data = torch.zeros(h)
models.Mixer.__init__ = init

def forward(self, x):
    b, n, d = x.shape
    h, dh = self.config.heads, self.config.head_dim
    mixed = self.qkv(x)
    if self.conv is not None:
        mixed = self.conv(mixed.transpose(1, 2))[..., :n].transpose(1, 2)
    if opt["silu"] and self.kind in ("delta", "gated_delta") or opt["silu"] == 2:
        mixed = torch.nn.functional.silu(mixed)
    q, k, v = (t.reshape(b, n, h, dh).transpose(1, 2) for t in mixed.split(d, dim=-1))
    size = self.config.chunk_size
    if self.kind == "softmax":
        cos, sin = rope_cos_sin(torch.arange(n), dh, dtype=x.dtype)
        o = torch.nn.functional.scaled_dot_product_attention(apply_rope(q, cos, sin), apply_rope(k, cos, sin), v, is_causal=True)
    elif self.kind == "linear":
        o = linear_attention(q, k, v, "chunk", size)
    else:
        q, k = (t * torch.rsqrt((t * t).sum(-1, keepdim=True) + 1e-6) for t in (q, k))
        beta = self.beta(x).sigmoid().transpose(1, 2)
        if self.kind == "delta":
            o = delta_rule(q, k, v, beta, "chunk", size)
        else:
            g = -self.A_log.exp() * torch.nn.functional.softplus(self.decay(x) + self.dt_bias)
            o = gated_delta_rule(q, k, v, g.transpose(1, 2), beta, "chunk", size)[0]
        if opt["norm"]:
            o = rms_norm(o, self.head_norm)
    return self.out(o.transpose(1, 2).reshape(b, n, d))
models.Mixer.forward = forward

task = recall.RecallConfig(n_keys=opt["nkeys"], n_values=opt["nvals"])
pairs = tuple(p for p in (4, 8, 16, 32) if p <= opt["nkeys"])
evp = tuple(p for p in (4, 8, 16, 24, 32) if p <= opt["nkeys"])
layers = {"hybrid": ("gated_delta",)*3+("softmax",), "hybrid_lin": ("linear",)*3+("softmax",), "all_softmax": ("softmax",)*4, "all_gd": ("gated_delta",)*4, "all_delta": ("delta",)*4, "all_linear": ("linear",)*4}.get(kind, (kind,)*opt["layers"])
cfg = models.StackConfig(task.vocab, layers, d_model=opt["d"], heads=opt["h"], d_ff=2*opt["d"], conv=opt["conv"])
torch.manual_seed(seed)
model = models.MixerStack(cfg)
with torch.no_grad():
    for blk in model.blocks: blk.mixer.out.weight.mul_(opt["outscale"])
t0 = time.perf_counter()
log = fit(model, recall.recall_batches(task, opt["batch"], pairs), recall.recall_loss, opt["steps"], opt["lr"], opt["warmup"], 0.0, seed, False, 1)
sec = time.perf_counter() - t0
L = log.losses
gen = torch.Generator().manual_seed(10_000 + seed)
with torch_threads(1), torch.no_grad():
    bs = [recall.recall_batch(task, 256, p, gen) for p in evp]
    acc = [round(recall.recall_accuracy(model, bb), 3) for bb in bs]
    base = [round(bb.context_baseline(), 3) for bb in bs]
curve = [round(float(np.mean(L[i:i+25])), 2) for i in range(0, len(L), 25)]
print(json.dumps(dict(kind=kind, seed=seed, opt={k: v for k, v in opt.items()}, sec=round(sec, 1), acc=acc, base=base, curve=curve)), flush=True)
