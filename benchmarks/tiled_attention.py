"""Time and peak memory of plain vs tiled (FlashAttention-style) attention in numpy.

One head, float64, d = 64, T = 512 … 4096 queries and keys, random inputs (seed 0). Plain is
``numpy_ref.scaled_dot_product_attention`` (its softmax makes copies: about 4 (T, T) arrays at
the peak); lean is ``efficient.lean_attention`` (one (T, T) array, updated in place: the fair
baseline); tiled is ``numpy_ref.flash_attention`` (block 64); causal is the tiled pass with
``causal=True``, which skips the tiles above the diagonal. Peak memory is what ``tracemalloc``
sees allocated during the call (inputs excluded); times are measured under tracing too, so they
compare with each other, not with untraced numpy.
Target: at T = 4096 a peak memory ratio R ≥ 16 (lean/tiled) with max |diff| E ≤ 1e-10.

    .venv/bin/python benchmarks/tiled_attention.py [--block 64]
"""

from __future__ import annotations

import argparse

import numpy as np

from course_attention import efficient
from course_attention import numpy_ref as ref


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--block", type=int, default=64, help="tile size of the tiled pass")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"{'T':>6} {'plain s':>8} {'lean s':>8} {'tiled s':>8} {'causal s':>9} "
        f"{'plain MB':>9} {'lean MB':>8} {'tiled MB':>9} {'lean/tiled':>11}"
    )
    for T in (512, 1024, 2048, 4096):
        Q, K, V = (rng.standard_normal((T, 64)) for _ in range(3))  # (T, d), one head
        plain = efficient.measure(lambda: ref.scaled_dot_product_attention(Q, K, V)[0])  # noqa: B023
        lean = efficient.measure(lambda: efficient.lean_attention(Q, K, V)[0])  # noqa: B023
        tiled = efficient.measure(lambda: ref.flash_attention(Q, K, V, block_size=args.block))  # noqa: B023
        causal = efficient.measure(
            lambda: ref.flash_attention(Q, K, V, block_size=args.block, causal=True)  # noqa: B023
        )
        ratio = lean.peak_bytes / tiled.peak_bytes
        diff = float(
            max(np.abs(plain.result - tiled.result).max(), np.abs(lean.result - tiled.result).max())
        )
        print(
            f"{T:6d} {plain.seconds:8.3f} {lean.seconds:8.3f} {tiled.seconds:8.3f} "
            f"{causal.seconds:9.3f} {plain.peak_bytes / 1e6:9.1f} {lean.peak_bytes / 1e6:8.1f} "
            f"{tiled.peak_bytes / 1e6:9.2f} {ratio:11.1f}"
        )
    work = efficient.tiles_computed(T, T, args.block, causal=True)
    print(
        f"tiled attention at T={T}: peak memory ratio {ratio:.1f} (lean plain/tiled), "
        f"max |diff| {diff:.1e}; causal computes {work['tiles']} of {work['all tiles']} tiles"
    )


if __name__ == "__main__":
    main()
