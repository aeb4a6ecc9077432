"""Chapter 13's live explorer of latent keys and top-k reading (kind ``latent``, ``latent.js``).

Introduced in chapter 13. Two controls: the latent width ``d_c`` and ``k`` (top-k). One fixed
small layer (:func:`course_attention.viz.latent_layer`: seeded, float64) is precomputed in
Python and shipped in the spec: the full keys ``K = x W_K`` ``(16, 32)``, the latents of the
widest latent ``x P Σ`` ``(16, 16)`` and the up-projection ``Qᵀ`` ``(16, 32)`` from the SVD
``W_K = P Σ Qᵀ`` (a width-``d_c`` latent keeps the first ``d_c`` columns and rows: the best
rank-``d_c`` factor), and head 0's scores ``(16, 16)``. The page computes the rest itself:

- the cache bytes per token of one layer, by the formulas (MHA ``2 · heads · d_head``, GQA
  ``2 · kv_heads · d_head``, MLA ``d_c + d_rope`` numbers, times 2 bytes);
- the rebuilt keys ``latent · up`` and each key's error ``‖k̂_t − k_t‖ / ‖k_t‖``;
- each query's top-k keys under the causal mask (ties to the earlier key), the causal softmax
  of the scores and the weight the chosen keys hold.

``tests/test_live_latent.py`` proves every plotted number equal to
:func:`course_attention.viz.latent_explorer_numbers`, which computes them with the package
(``mla.MultiHeadLatentAttention.expand``, ``mla.cache_bytes_per_token``, ``sparse.topk_mask``,
``sparse.topk_mass``).
"""

from __future__ import annotations

from typing import Any

from .. import viz
from ..i18n import N_, _
from .core import Explorer, register

__all__ = ["latent_live", "latent_explorer", "TITLE"]

#: The figure's title (``latent.js`` fills it from ``spec["text"]``).
TITLE = N_("latent width {d_c}, top-{k}: the chosen keys hold {mass:.2f} of the attention")


def latent_live() -> dict[str, Any]:
    """The page's data: the layer's sizes and the arrays of :func:`viz.latent_layer` the page
    cannot compute cheaply (keys, latents, up-projection, scores)."""
    layer = viz.latent_layer()
    return {
        "kind": "latent",
        "data": {**viz.LATENT_LAYER, "widths": list(viz.LATENT_WIDTHS),
                 "keys": layer["keys"], "latents": layer["latents"], "up": layer["up"],
                 "scores": layer["scores"]},
        "text": {"title": TITLE,
                 "bad_width": N_("Pick a latent width among {widths}."),
                 "bad_k": N_("Pick k from 1 to {max}.")},
        "phone": viz.LATENT_PHONE,
    }


@register
def latent_explorer(d_c: int = 4, k: int = 4) -> Explorer:
    """Narrow the latent; keep each query's top-k keys.

    Introduced in chapter 13. Controls: ``d_c`` (1, 2, 4, 8 or 16: the latent's width; 16 is the
    model width, the rank of the keys) and ``k`` (1 … 16 keys a query reads). The figure is
    :func:`course_attention.viz.latent_explorer_figure`: the cache bytes per token of MHA, GQA
    and MLA, each rebuilt key's error, and which keys each query reads.
    """
    import ipywidgets as w

    tokens = viz.LATENT_LAYER["tokens"]
    if d_c not in viz.LATENT_WIDTHS or isinstance(k, bool) or not 1 <= k <= tokens:
        raise ValueError(f"need d_c in {viz.LATENT_WIDTHS} and k in 1 … {tokens}; got "
                         f"d_c={d_c!r}, k={k!r}")
    controls = {
        "d_c": w.Dropdown(options=[(str(v), v) for v in viz.LATENT_WIDTHS], value=d_c,
                          description=_("latent width d_c")),
        "k": w.IntSlider(value=k, min=1, max=tokens, continuous_update=True,
                         description=_("top-k keys a query reads")),
    }

    def make_figure(d_c: int, k: int) -> Any:
        mass = viz.latent_explorer_numbers(d_c, k)["mean_mass"]
        return viz.latent_explorer_figure(d_c, k, title=TITLE.format(d_c=d_c, k=k, mass=mass))

    return Explorer(controls, make_figure, latent_live())
