"""Time and peak memory of plain vs tiled (FlashAttention-style) attention in numpy.

One head, float64, d = 64, T = 512 … 4096 queries and keys, random inputs (seed 0). Plain is
``numpy_ref.scaled_dot_product_attention``, tiled is ``numpy_ref.flash_attention`` (block 64).
Peak memory is what ``tracemalloc`` sees allocated during the call (inputs excluded); times are
measured under tracing too, so they compare with each other, not with untraced numpy.
Target: at T = 4096 a peak memory ratio R ≥ 16 with max |diff| E ≤ 1e-10.

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
    print(f"{'T':>6} {'plain s':>9} {'tiled s':>9} {'plain MB':>9} {'tiled MB':>9} {'ratio':>7}")
    for T in (512, 1024, 2048, 4096):
        Q, K, V = (rng.standard_normal((T, 64)) for _ in range(3))  # (T, d), one head
        plain = efficient.measure(lambda: ref.scaled_dot_product_attention(Q, K, V)[0])  # noqa: B023
        tiled = efficient.measure(lambda: ref.flash_attention(Q, K, V, block_size=args.block))  # noqa: B023
        ratio = plain.peak_bytes / tiled.peak_bytes
        diff = float(np.abs(plain.result - tiled.result).max())
        print(
            f"{T:6d} {plain.seconds:9.3f} {tiled.seconds:9.3f} {plain.peak_bytes / 1e6:9.1f} "
            f"{tiled.peak_bytes / 1e6:9.2f} {ratio:7.1f}"
        )
    print(
        f"tiled attention at T={T}: peak memory ratio {ratio:.1f} (naive/tiled), "
        f"max |diff| {diff:.1e}"
    )


if __name__ == "__main__":
    main()
