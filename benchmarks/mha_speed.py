"""Forward time of course_attention's MultiHeadAttention against torch.nn.MultiheadAttention.

Both modules hold the same weights and run in one process, alternately, on the CPU (float32,
batch 4, d_model 512, 8 heads, self-attention). Target: ratio ≤ 1.3 in both modes:
with the weights returned (PyTorch averages them over heads; we return them averaged too) and
without them (both then use PyTorch's fused kernel).

    .venv/bin/python benchmarks/mha_speed.py
"""

from __future__ import annotations

import statistics
import time

import torch

from course_attention.modules import MultiHeadAttention


def _median_ms(module, kwargs: dict, repeat: int) -> float:
    for _ in range(3):
        module(**kwargs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        module(**kwargs)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(batch: int = 4, d_model: int = 512, n_heads: int = 8, repeat: int = 20) -> None:
    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(reference).eval()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {batch}")
    print(f"{'T':>5} {'weights':>8} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}")
    with torch.inference_mode():
        for seq in (128, 512):
            x = torch.randn(batch, seq, d_model)
            for need_weights in (True, False):
                ours_kw = dict(query=x, need_weights=need_weights, average_weights=True)
                ref_kw = dict(query=x, key=x, value=x, need_weights=need_weights)
                t_ours = _median_ms(ours, ours_kw, repeat)
                t_ref = _median_ms(reference, ref_kw, repeat)
                flag = "yes" if need_weights else "no"
                print(f"{seq:5d} {flag:>8} {t_ours:9.2f} {t_ref:9.2f} {t_ours / t_ref:6.2f}")
    print("target: ratio ≤ 1.30")


if __name__ == "__main__":
    main()
