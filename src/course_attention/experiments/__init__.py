"""Small measurements that explain the design of attention, vectorised and seeded.

Introduced in chapter 2. One module per question: ``experiments.scaling`` (chapter 2: why
√dₖ), ``experiments.recurrence`` (chapter 3: recurrence versus self-attention),
``experiments.heads`` (chapter 5: the shapes and cost of multi-head attention),
``deep_stacks`` (chapter 6: deep stacks at initialisation) and ``experiments.encoder_decoder``
(chapter 7: what two trained encoder–decoders learned, asserted for any seed). Every name is
re-exported here, as ``experiments.scaling_statistics``.
"""

from __future__ import annotations

from ..deep_stacks import FfnGradients, StackSignal, ffn_gradient_norms, residual_stack_signal
from .encoder_decoder import *  # noqa: F403
from .encoder_decoder import __all__ as _encoder_decoder
from .heads import *  # noqa: F403 - the chapters call every measurement as experiments.<name>
from .heads import __all__ as _heads
from .recurrence import *  # noqa: F403
from .recurrence import __all__ as _recurrence
from .scaling import *  # noqa: F403
from .scaling import __all__ as _scaling

__all__ = [
    *_scaling,
    *_recurrence,
    *_heads,
    *_encoder_decoder,
    "StackSignal",
    "residual_stack_signal",
    "FfnGradients",
    "ffn_gradient_norms",
]
