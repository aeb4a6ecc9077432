"""Plotly figures for the course, and displaying them in the book, JupyterLab and Colab.

``viz.core`` holds the shared builders and the colour scheme; each chapter's own figures live in
a module of their own and are re-exported here, so chapters just call ``viz.<figure>(...)``.
"""

from .architecture import *  # noqa: F403
from .architecture import __all__ as _architecture
from .core import *  # noqa: F403
from .core import __all__ as _core
from .decoder_only import *  # noqa: F403
from .decoder_only import __all__ as _decoder_only
from .efficient import *  # noqa: F403
from .efficient import __all__ as _efficient
from .encoder_decoder import *  # noqa: F403
from .encoder_decoder import __all__ as _encoder_decoder
from .induction import *  # noqa: F403
from .induction import __all__ as _induction
from .latent import *  # noqa: F403
from .latent import __all__ as _latent
from .latent_explorer import *  # noqa: F403
from .latent_explorer import __all__ as _latent_explorer
from .linear import *  # noqa: F403
from .linear import __all__ as _linear
from .linear_explorer import *  # noqa: F403
from .linear_explorer import __all__ as _linear_explorer
from .lookup import *  # noqa: F403
from .lookup import __all__ as _lookup
from .masking import *  # noqa: F403
from .masking import __all__ as _masking
from .modern import *  # noqa: F403
from .modern import __all__ as _modern
from .modern_training import *  # noqa: F403
from .modern_training import __all__ as _modern_training
from .multi_head import *  # noqa: F403
from .multi_head import __all__ as _multi_head
from .positions import *  # noqa: F403
from .positions import __all__ as _positions
from .scaling import *  # noqa: F403
from .scaling import __all__ as _scaling
from .self_attention import *  # noqa: F403
from .self_attention import __all__ as _self_attention
from .sinks import *  # noqa: F403
from .sinks import __all__ as _sinks
from .sinks_explorer import *  # noqa: F403
from .sinks_explorer import __all__ as _sinks_explorer
from .toolbox import *  # noqa: F403
from .toolbox import __all__ as _toolbox
from .transformer_block import *  # noqa: F403
from .transformer_block import __all__ as _transformer_block

__all__ = [
    *_core,
    *_toolbox,
    *_lookup,
    *_scaling,
    *_self_attention,
    *_masking,
    *_multi_head,
    *_transformer_block,
    *_encoder_decoder,
    *_decoder_only,
    *_efficient,
    *_induction,
    *_positions,
    *_architecture,
    *_modern,
    *_modern_training,
    *_latent,
    *_latent_explorer,
    *_sinks,
    *_sinks_explorer,
    *_linear,
    *_linear_explorer,
]
