"""Live explorers for JupyterLab and Colab: the public names the chapters call.

Introduced in chapter 1. Each explorer kind lives in one module of
:mod:`course_attention.explorers`, beside the JavaScript the website runs for it; this module
only gathers the factories (``widgets.scaling_explorer()``, …) and ``EXPLORERS``, every
factory by name. Only widgets common to ipywidgets 7.7 (Colab) and 8 are used.
"""

from __future__ import annotations

from .explorers import EXPLORERS, Explorer
from .explorers.decoding import decoding_explorer
from .explorers.gpt import gpt_explorer
from .explorers.heads import multi_head_explorer
from .explorers.induction import induction_explorer
from .explorers.latent import latent_explorer
from .explorers.linear import linear_explorer
from .explorers.long_context import long_context_explorer
from .explorers.lookup import soft_lookup_explorer
from .explorers.mask import mask_explorer
from .explorers.positions import positions_explorer
from .explorers.rope import rope_explorer
from .explorers.scaling import scaling_explorer
from .explorers.self_attention import self_attention_explorer
from .explorers.sinks import sinks_explorer
from .explorers.tiling import tiling_explorer

__all__ = [
    "EXPLORERS",
    "Explorer",
    "decoding_explorer",
    "gpt_explorer",
    "induction_explorer",
    "latent_explorer",
    "linear_explorer",
    "long_context_explorer",
    "mask_explorer",
    "multi_head_explorer",
    "positions_explorer",
    "rope_explorer",
    "scaling_explorer",
    "self_attention_explorer",
    "sinks_explorer",
    "soft_lookup_explorer",
    "tiling_explorer",
]
