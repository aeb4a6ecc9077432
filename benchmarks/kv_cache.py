"""Tokens per second of greedy generation with and without the KV cache (chapter 8).

Two models: the chapter's shape (``gpt.CHAPTER_CONFIG``: 2 layers, d_model 64) and a larger one
(4 layers, d_model 256, 4 heads), both untrained (timing does not depend on the weights) and both
with a context of 1024 positions so that 512 new tokens fit after a 16-token prompt (the
chapter's model itself reads 48). One torch thread, best of ``--repeat`` runs. For every model
and length it checks that the cached and uncached runs choose the same tokens and reports the
largest logit difference (float32). Then the chapter's model with its own context of 48: past
the context the window slides, every position moves, and the cache is rebuilt each step, so the
speed-up falls towards 1 (the work ratio ``gpt.prefix_work(..., context=48)`` is printed beside
it). The last line gives the speed-up at 512 new tokens for d_model 256. Target ≥ 3×.

    .venv/bin/python benchmarks/kv_cache.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import dataclasses

import torch

from course_attention import corpus, gpt

LENGTHS = (128, 256, 512)
PROMPT = "def main(argv):\n"  # 16 characters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    configs = {
        "chapter (d_model 64, 2 layers)": dataclasses.replace(gpt.CHAPTER_CONFIG, context=1024),
        "d_model 256, 4 layers": gpt.GPTConfig(
            vocab_size=96, context=1024, d_model=256, n_heads=4, n_layers=4
        ),
    }
    prompt = corpus.encode(PROMPT)
    print(f"torch {torch.__version__}, 1 thread, prompt of {len(prompt)} tokens, greedy")
    print(f"{'model':32} {'new':>5} {'cached tok/s':>13} {'uncached tok/s':>15} {'speed-up':>9}")
    last: dict[str, float] = {}
    worst_diff = 0.0
    for name, config in configs.items():
        torch.manual_seed(0)
        model = gpt.GPT(config).eval()
        for n_new in LENGTHS:
            r = gpt.time_generation(model, prompt, n_new, repeat=args.repeat)
            worst_diff = max(worst_diff, r["max_diff"])
            print(
                f"{name:32} {n_new:5d} {r['cached']:13.0f} {r['uncached']:15.0f} "
                f"{r['speedup']:8.2f}×",
                flush=True,
            )
            last = r
    torch.manual_seed(0)
    chapter = gpt.GPT(gpt.CHAPTER_CONFIG).eval()
    for n_new in (32, 128, 512):
        r = gpt.time_generation(chapter, prompt, n_new, repeat=args.repeat)
        ratio = gpt.prefix_work(len(prompt), n_new, False, 48) / gpt.prefix_work(
            len(prompt), n_new, True, 48
        )
        print(
            f"{'chapter, context 48 (sliding)':32} {n_new:5d} {r['cached']:13.0f} "
            f"{r['uncached']:15.0f} {r['speedup']:8.2f}×  (work ratio {ratio:.2f})",
            flush=True,
        )
    print(
        f"kv-cache speed-up {last['speedup']:.2f} at 512 new tokens (d_model 256); "
        f"max |logit diff| {worst_diff:.1e}"
    )


if __name__ == "__main__":
    main()
