"""The KV cache per token of published models: MLA (DeepSeek-V2, V3) beside GQA and MHA
(chapter 13, next to chapter 11's :func:`~course_attention.grouped_query.kv_cache_table`).

Introduced in chapter 13. MLA caches ``d_c + d_rope`` numbers per token and layer, whatever the
number of heads; MHA ``2 · n_heads · d_head``, GQA ``2 · n_kv_heads · d_head`` (chapter 11).
Every number below is recomputed from the shape its source gives; none is copied from a table
of results.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..grouped_query import MODEL_CONFIGS, kv_cache_bytes_per_token

__all__ = ["PublishedConfig", "PUBLISHED", "cache_bytes_per_token", "published_table"]


@dataclass(frozen=True)
class PublishedConfig:
    """The attention shape of a published model, with where each number comes from.

    ``attention``: ``"MLA"``, ``"GQA"`` or ``"MHA"``. MLA models give ``d_c`` (``kv_lora_rank``)
    and ``d_rope`` (``qk_rope_head_dim``); ``d_head`` is then the per-head key width without
    position (``qk_nope_head_dim``), the width an MHA of the same heads would cache.
    ``n_kv_heads`` is ``n_heads`` for MHA and MLA (MLA's heads all read the one latent).
    """

    name: str
    attention: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    source: str  # the citation key in references.bib
    where: str  # where in the source the numbers are given
    d_c: int = 0
    d_rope: int = 0

    def __post_init__(self) -> None:
        if self.attention not in ("MLA", "GQA", "MHA"):
            raise ValueError(f"attention must be 'MLA', 'GQA' or 'MHA'; got {self.attention!r}")
        for name in ("n_layers", "n_heads", "n_kv_heads", "d_head"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be ≥ 1; got {name}={getattr(self, name)}")
        if (self.attention == "MLA") != (self.d_c > 0 and self.d_rope > 0):
            raise ValueError(f"{self.name}: d_c and d_rope are given for MLA and only for MLA; "
                             f"got attention={self.attention!r}, d_c={self.d_c}, "
                             f"d_rope={self.d_rope}")
        if self.attention == "MHA" and self.n_kv_heads != self.n_heads:
            raise ValueError(f"{self.name}: MHA has n_kv_heads = n_heads; got "
                             f"{self.n_kv_heads} and {self.n_heads}")

    @property
    def numbers_per_token_layer(self) -> int:
        """The numbers cached per token in one layer, ``d_c + d_rope`` (MLA), ``2 · n_kv_heads ·
        d_head`` (MHA, GQA)."""
        if self.attention == "MLA":
            return self.d_c + self.d_rope
        return 2 * self.n_kv_heads * self.d_head


def _chapter_11(name: str) -> PublishedConfig:
    c = next(c for c in MODEL_CONFIGS if c.name == name)
    return PublishedConfig(c.name, c.kind, c.n_layers, c.n_heads, c.n_kv_heads, c.d_head,
                           c.source, c.where)


_V3 = "github.com/deepseek-ai/DeepSeek-V3, inference/configs/"

#: Published configurations — two MLA models, two GQA models of 2024–2025, Mistral 7B (chapter
#: 11's entry) and an MHA baseline.
PUBLISHED: tuple[PublishedConfig, ...] = (
    PublishedConfig(
        "DeepSeek-V2", "MLA", 60, 128, 128, 128, "deepseekai2024deepseekv2",
        "the released configuration of the 236B model (" + _V3
        + "config_236B.json): n_layers 60, n_heads 128, qk_nope_head_dim 128, kv_lora_rank "
        "512, qk_rope_head_dim 64", d_c=512, d_rope=64,
    ),
    PublishedConfig(
        "DeepSeek-V3", "MLA", 61, 128, 128, 128, "deepseekai2024deepseekv3",
        "the released configuration of the 671B model (" + _V3
        + "config_671B.json): n_layers 61, n_heads 128, qk_nope_head_dim 128, kv_lora_rank "
        "512, qk_rope_head_dim 64", d_c=512, d_rope=64,
    ),
    PublishedConfig(
        "Llama 3 70B", "GQA", 80, 64, 8, 128, "grattafiori2024llama3",
        "Table 3: 80 layers, model dimension 8192, 64 attention heads, 8 key/value heads "
        "(d_head 8192 / 64 = 128)",
    ),
    PublishedConfig(
        "Qwen3-32B", "GQA", 64, 64, 8, 128, "yang2025qwen3",
        "Table 1: 64 layers, 64 query and 8 key/value heads; head_dim 128 in the released "
        "configuration (Qwen/Qwen3-32B, config.json; hidden_size 5120 ≠ 64 · 128)",
    ),
    _chapter_11("Mistral 7B"),
    PublishedConfig(
        "LLaMA 7B", "MHA", 32, 32, 32, 128, "touvron2023llama",
        "Table 2: dimension 4096, 32 heads, 32 layers (d_head 4096 / 32 = 128); multi-head "
        "attention",
    ),
)


def cache_bytes_per_token(config: PublishedConfig, bytes_per_number: int = 2) -> int:
    """Bytes a decoder caches per token, all layers (2 bytes: bfloat16).

    Introduced in chapter 13. MLA: ``n_layers · (d_c + d_rope) · bytes``; MHA and GQA: chapter
    11's :func:`~course_attention.grouped_query.kv_cache_bytes_per_token`.
    """
    if not isinstance(config, PublishedConfig):
        raise ValueError(f"config must be a PublishedConfig; got {type(config).__name__}")
    if isinstance(bytes_per_number, bool) or bytes_per_number < 1:
        raise ValueError(f"bytes_per_number must be ≥ 1; got {bytes_per_number!r}")
    if config.attention == "MLA":
        return config.n_layers * (config.d_c + config.d_rope) * bytes_per_number
    return kv_cache_bytes_per_token(config.n_layers, config.n_kv_heads, config.d_head,
                                    bytes_per_number)


def published_table(configs: tuple[PublishedConfig, ...] = PUBLISHED, context: int = 4096,
                    bytes_per_number: int = 2) -> list[dict]:
    """One row per model: its cache per token, for ``context`` tokens (GiB) and as MHA of the
    same heads; ``saving`` is the MHA cache divided by the model's own.

    Introduced in chapter 13, with the columns of chapter 11's ``kv_cache_table`` plus the
    numbers cached per token and layer.
    """
    if context < 1:
        raise ValueError(f"context must be ≥ 1; got {context}")
    rows = []
    for c in configs:
        own = cache_bytes_per_token(c, bytes_per_number)
        mha = kv_cache_bytes_per_token(c.n_layers, c.n_heads, c.d_head, bytes_per_number)
        rows.append({
            "model": c.name, "attention": c.attention, "layers": c.n_layers,
            "heads": c.n_heads, "numbers / token / layer": c.numbers_per_token_layer,
            "KV bytes / token": own, f"GiB at {context} tokens": own * context / 2**30,
            "as MHA: bytes / token": mha, "saving": mha / own,
        })
    return rows
