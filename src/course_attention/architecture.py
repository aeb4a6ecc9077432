"""A model's architecture, read from one forward pass: what runs, in which order, in what shape.

Introduced on the welcome page (the course map) and drawn in chapters 6, 7 and 8 by
:func:`course_attention.viz.architecture_figure`. :func:`trace` runs a model once with forward
hooks on its submodules and follows the tensors between them, so nothing about the wiring is
typed by hand:

* a **box** is one call of a module the course builds as a unit (attention, feed-forward
  network, layer norm, embedding, positions, output layer), with the shape of its output as
  measured, e.g. ``(1, 9, 64)``;
* an **add** is an addition of two tensors that came out of different boxes, seen where it
  happens (a residual connection, or the token embedding plus the position embedding);
* an **edge** says which box's output reached which box, found by following the tensors:
  ``"flow"`` (the main input), ``"residual"`` (the input of an add that also reached the add's
  other input: the path that skips a sublayer) and ``"cross"`` (a second input stream: the
  encoder's output read as keys and values by the decoder's cross-attention).

Every box links to the chapter that builds it: :data:`CHAPTER_OF` is the one table from module
classes to chapters, :data:`CHAPTERS` the chapters' pages.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from . import gpt, mla, modern, modules
from .i18n import N_, language

__all__ = [
    "CHAPTERS",
    "CHAPTER_OF",
    "EDGE_KINDS",
    "Node",
    "Edge",
    "Stack",
    "Trace",
    "trace",
    "collapse_repeats",
    "chapter_url",
    "site_url",
    "chapter_example",
    "course_map_traces",
]

#: Chapter label -> (page of the book, title). The labels are the ``(ch-…)=`` lines above each
#: chapter's title; the tests check every page and title against the chapter itself.
CHAPTERS: dict[str, tuple[str, str]] = {
    "ch-scaled-dot-product": ("chapters/02_scaled_dot_product",
                              N_("Scores, softmax and the √dₖ scale")),
    "ch-masking": ("chapters/04_masking", N_("Masking: what a token may see")),
    "ch-multi-head": ("chapters/05_multi_head", N_("Multi-head attention")),
    "ch-transformer-block": ("chapters/06_transformer_block", N_("The Transformer block")),
    "ch-encoder-decoder": ("chapters/07_encoder_decoder",
                           N_("Encoder–decoder and cross-attention")),
    "ch-decoder-only": ("chapters/08_decoder_only", N_("A GPT you train yourself")),
    "ch-positions": ("chapters/10_positions", N_("Where is a token?")),
    "ch-efficient-attention": ("chapters/11_efficient_attention",
                               N_("Attention that fits in memory")),
    "ch-modern-attention": ("chapters/12_modern_attention",
                            N_("A modern attention layer: Llama and Qwen3")),
    "ch-latent-sparse": ("chapters/13_latent_and_sparse",
                         N_("DeepSeek's attention: latent KV and sparse top-k")),
}

#: The one table from module classes to chapters, ``class -> (chapter that builds it, chapters
#: it also relies on)``. A key ``(owner class, attribute)`` names one submodule of an owner (a
#: plain ``torch.nn.Embedding`` is a token table in one place and a position table in another).
#: A module missing from the table belongs to the chapter of the nearest enclosing module that
#: is in it (the GPT's output layer to chapter 8). At trace time a masked attention call also
#: names the masking chapter, and a cross-attention call the encoder–decoder chapter.
CHAPTER_OF: dict[Any, tuple[str, tuple[str, ...]]] = {
    modules.MultiHeadAttention: ("ch-multi-head", ("ch-scaled-dot-product",)),
    modules.FeedForward: ("ch-transformer-block", ()),
    torch.nn.LayerNorm: ("ch-transformer-block", ()),
    modules.PositionalEncoding: ("ch-transformer-block", ("ch-positions",)),
    modules.EncoderLayer: ("ch-transformer-block", ()),
    modules.DecoderLayer: ("ch-encoder-decoder", ()),
    modules.Seq2SeqTransformer: ("ch-encoder-decoder", ()),
    gpt.Block: ("ch-decoder-only", ()),
    gpt.GPT: ("ch-decoder-only", ()),
    (gpt.GPT, "pos_embed"): ("ch-decoder-only", ("ch-positions",)),
    modern.ModernAttention: ("ch-modern-attention",
                             ("ch-multi-head", "ch-positions", "ch-efficient-attention")),
    modern.SwiGLU: ("ch-modern-attention", ()),
    modern.RMSNorm: ("ch-modern-attention", ()),
    modern.ModernBlock: ("ch-modern-attention", ()),
    modern.ModernGPT: ("ch-modern-attention", ("ch-decoder-only",)),
    (modern.ModernGPT, "embed"): ("ch-decoder-only", ()),
    (modern.ModernGPT, "out"): ("ch-decoder-only", ()),
    mla.MultiHeadLatentAttention: ("ch-latent-sparse", ("ch-multi-head", "ch-positions",
                                                        "ch-efficient-attention")),
    mla.MLABlock: ("ch-modern-attention", ()),
    mla.MLAGPT: ("ch-latent-sparse", ("ch-modern-attention",)),
    (mla.MLAGPT, "embed"): ("ch-decoder-only", ()),
    (mla.MLAGPT, "out"): ("ch-decoder-only", ()),
}

#: Module classes drawn as one box (not opened up), besides every module without submodules.
BOX_CLASSES: tuple[type, ...] = (
    modules.MultiHeadAttention,
    modules.FeedForward,
    modern.ModernAttention,
    mla.MultiHeadLatentAttention,
    modern.SwiGLU,
    modern.RMSNorm,
    modules.PositionalEncoding,
    torch.nn.LayerNorm,
    torch.nn.Embedding,
    torch.nn.Linear,
)
#: Modules that change no shape and add no idea (their tensors pass straight through).
TRANSPARENT: tuple[type, ...] = (torch.nn.Dropout, torch.nn.Identity)
#: What an edge means (the main input, the path around a sublayer, a second input stream).
EDGE_KINDS = ("flow", "residual", "cross")
_ADD_OPS = {"__add__", "__radd__", "__iadd__", "add", "add_"}


@dataclass(frozen=True)
class Node:
    """One box of the diagram: a module call, an addition, the model's input or its output.

    ``kind`` is ``"module"``, ``"add"``, ``"input"`` or ``"output"``. ``path`` is the module's
    name inside the model (``"blocks.0.attn"``; the forward argument's name for an input).
    ``shape`` is the output's shape as measured, e.g. ``(1, 9, 64)`` for ``(batch, seq,
    d_model)``; ``inputs`` are the tensor arguments ``(name, shape)``. ``chapter`` is the label
    of the chapter that builds it, ``related`` the other chapters it relies on. ``group`` is the
    repeated layer it belongs to (``"blocks.0"``, or ``""``); after :func:`collapse_repeats`,
    ``repeat`` counts the identical layers it stands for and ``also`` names their copies.
    """

    id: int
    kind: str
    path: str
    cls: str
    shape: tuple[int, ...]
    chapter: str | None = None
    related: tuple[str, ...] = ()
    inputs: tuple[tuple[str, tuple[int, ...]], ...] = ()
    parameters: int = 0
    note: str = ""
    group: str = ""
    repeat: int = 1
    also: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The last part of the path (``"attn"``), or what the node is when it has no path."""
        return self.path.rsplit(".", 1)[-1] if self.path else self.kind

    @property
    def paths(self) -> tuple[str, ...]:
        """The module paths this box stands for (its own and those of its repeats)."""
        return (self.path, *self.also)


@dataclass(frozen=True)
class Edge:
    """Data flowing from node ``src`` to node ``dst`` (ids); ``kind``: one of :data:`EDGE_KINDS`."""

    src: int
    dst: int
    kind: str = "flow"


@dataclass(frozen=True)
class Stack:
    """A list of layers of one class (``path`` ``"blocks"``, ``count`` 2, ``cls`` ``"Block"``).

    ``collapsed``: the layers ran identically (same modules, shapes and wiring), so
    :func:`collapse_repeats` keeps the first and marks it ``× count``.
    """

    path: str
    cls: str
    count: int
    chapter: str | None = None
    collapsed: bool = False


@dataclass(frozen=True)
class Trace:
    """A model's architecture as one forward pass ran it: nodes in the order they ran, edges.

    Introduced with the course map (welcome page); drawn by
    :func:`course_attention.viz.architecture_figure`. ``model`` is the class name, ``chapter``
    the chapter that builds the model.
    """

    model: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    stacks: tuple[Stack, ...] = ()
    chapter: str | None = None

    def node(self, id: int) -> Node:
        """The node with this id."""
        for n in self.nodes:
            if n.id == id:
                return n
        raise ValueError(f"no node with id {id} in this trace")

    def find(self, path: str) -> list[Node]:
        """Every node whose module path is ``path`` (a module called twice gives two)."""
        return [n for n in self.nodes if path in n.paths]


def _chapter(model: torch.nn.Module, path: str) -> tuple[str | None, tuple[str, ...]]:
    """The chapter of the module at ``path``: its own entry, else the nearest listed owner's."""
    parts = path.split(".") if path else []
    if parts:
        owner = model.get_submodule(".".join(parts[:-1]))
        key = (type(owner), parts[-1])
        if key in CHAPTER_OF:
            return CHAPTER_OF[key]
    for depth in range(len(parts), -1, -1):
        module = model.get_submodule(".".join(parts[:depth]))
        for cls in type(module).__mro__:
            if cls in CHAPTER_OF:
                return CHAPTER_OF[cls]
    return None, ()


def _is_box(module: torch.nn.Module) -> bool:
    if isinstance(module, TRANSPARENT):
        return False
    return isinstance(module, BOX_CLASSES) or not any(True for _ in module.children())


def _tensors(obj: Any) -> Iterator[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


def _shape(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


class _Tracer(TorchFunctionMode):
    """Follows tensors between boxes: which box (or add) each tensor came from."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.names = {id(m): p for p, m in model.named_modules()}
        self.stack_children = _stack_children(model)
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.origin: dict[int, frozenset[int]] = {}  # id(tensor) -> the nodes it came from
        self.keep: list[torch.Tensor] = []  # tagged tensors stay alive: their ids stay theirs
        self.path_stack: list[str] = []
        self.box_depth = 0
        self.pending: list[tuple[str, list[tuple[str, torch.Tensor]], dict[str, Any]]] = []
        self.adds: dict[str, int] = {}
        self.order: dict[int, int] = {}  # node id -> position in the run
        self.ancestors: dict[int, set[int]] = {}

    # ---- bookkeeping -------------------------------------------------------------------------
    def tag(self, t: torch.Tensor, origin: frozenset[int]) -> None:
        if origin and t.dtype != torch.bool:
            self.origin[id(t)] = origin
            self.keep.append(t)

    def origin_of(self, t: torch.Tensor) -> frozenset[int]:
        return self.origin.get(id(t), frozenset())

    def group(self) -> str:
        for p in reversed(self.path_stack):
            if p in self.stack_children:
                return p
        return ""

    def add_node(self, node: Node, sources: list[tuple[frozenset[int], str]]) -> Node:
        self.nodes.append(node)
        self.order[node.id] = len(self.order)
        anc: set[int] = set()
        seen: set[tuple[int, str]] = set()
        for origin, kind in sources:
            for src in sorted(origin, key=self.order.__getitem__):
                anc |= self.ancestors[src] | {src}
                if (src, kind) not in seen and not (kind == "cross" and (src, "flow") in seen):
                    seen.add((src, kind))
                    self.edges.append(Edge(src, node.id, kind))
        self.ancestors[node.id] = anc
        return node

    # ---- torch functions between boxes: follow the data, record additions ---------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.box_depth == 0:
            self._follow(func, args, kwargs, out)
        return out

    def _follow(self, func: Any, args: tuple, kwargs: dict, out: Any) -> None:
        outs = list(_tensors(out))
        if not outs:
            return
        origins = [self.origin_of(t) for t in _tensors((args, kwargs))]
        origins = [o for o in origins if o]
        name = getattr(func, "__name__", "")
        if name in _ADD_OPS and len(origins) >= 2 and outs[0].dtype != torch.bool:
            group = self.group()
            where = self.path_stack[-1] if self.path_stack else ""
            k = self.adds[where] = self.adds.get(where, 0) + 1
            node = Node(
                id=len(self.nodes), kind="add", path=f"{where}.add{k}".lstrip("."), cls="add",
                shape=_shape(outs[0]), group=group,
                inputs=tuple((f"operand {i + 1}", _shape(t))
                             for i, t in enumerate(_tensors(args)) if self.origin_of(t)),
            )
            # an operand that also reached another operand skipped a sublayer: a residual
            sources = []
            for i, origin in enumerate(origins):
                others = frozenset().union(*(o for j, o in enumerate(origins) if j != i))
                reached = set().union(*(self.ancestors[x] for x in others))
                sources.append((origin, "residual" if origin <= reached else "flow"))
            self.add_node(node, sorted(sources, key=lambda s: s[1] == "flow"))
            for t in outs:
                self.tag(t, frozenset({node.id}))
            return
        merged = frozenset().union(*origins) if origins else frozenset()
        for t in outs:
            if t.dtype != torch.bool and id(t) not in self.origin:
                self.tag(t, merged)

    # ---- module hooks ------------------------------------------------------------------------
    def pre_hook(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        path = self.names[id(module)]
        self.path_stack.append(path)
        if self.box_depth == 0 and _is_box(module):
            try:
                bound = inspect.signature(module.forward).bind(*args, **kwargs)
                named = list(bound.arguments.items())
            except TypeError:
                named = [(f"arg{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
            tensors = [(n, v) for n, v in named if isinstance(v, torch.Tensor)]
            self.pending.append((path, tensors, dict(named)))
        if _is_box(module) or self.box_depth:
            self.box_depth += 1

    def post_hook(self, module: torch.nn.Module, args: tuple, kwargs: dict, out: Any) -> None:
        self.path_stack.pop()
        if _is_box(module) or self.box_depth:
            self.box_depth -= 1
        if self.box_depth or not _is_box(module):
            return
        path, tensors, named = self.pending.pop()
        result = next(_tensors(out), None)
        if result is None:
            raise ValueError(f"module {path or type(module).__name__!r} returned no tensor")
        chapter, related = _chapter(self.model, path)
        data = [(n, t) for n, t in tensors if t.dtype != torch.bool]
        masks = [(n, t) for n, t in tensors if t.dtype == torch.bool]
        note = ", ".join(
            ["causal mask"] * bool(named.get("causal")) + [f"{n} {_shape(t)}" for n, t in masks]
        )
        sources: list[tuple[frozenset[int], str]] = []
        main = self.origin_of(data[0][1]) if data else frozenset()
        if main:
            sources.append((main, "flow"))
        cross = False
        for _, t in data[1:]:
            o = self.origin_of(t)
            if o and o != main:
                sources.append((o, "cross"))
                cross = True
        extra = tuple(
            c for c in (("ch-masking",) * bool(note) + ("ch-encoder-decoder",) * cross)
            if c != chapter and c not in related
        )
        node = Node(
            id=len(self.nodes), kind="module", path=path, cls=type(module).__name__,
            shape=_shape(result), chapter=chapter, related=related + extra,
            inputs=tuple((n, _shape(t)) for n, t in data),
            parameters=sum(p.numel() for p in module.parameters()), note=note, group=self.group(),
        )
        self.add_node(node, sources)
        for t in _tensors(out):
            self.tag(t, frozenset({node.id}))


def _stack_children(model: torch.nn.Module) -> dict[str, tuple[str, int, int]]:
    """``layer path -> (stack path, index, count)`` for every list of layers of one class."""
    out: dict[str, tuple[str, int, int]] = {}
    for path, module in model.named_modules():
        if isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)) and not _is_box(module):
            children = list(module.children())
            if children and len({type(c) for c in children}) == 1:
                for i in range(len(children)):
                    out[f"{path}.{i}".lstrip(".")] = (path, i, len(children))
    return out


def _input_names(model: torch.nn.Module, n: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        params = []
    return [params[i] if i < len(params) else f"input{i}" for i in range(n)]


def trace(model: torch.nn.Module, *inputs: torch.Tensor, **kwargs: Any) -> Trace:
    """Run ``model(*inputs, **kwargs)`` once and record its architecture as it ran.

    Introduced with the course map (welcome page); chapters 6, 7 and 8 draw their models with
    it. For chapter 8's GPT, ``trace(model, tokens)`` with ``tokens`` ``(1, 9)`` gives boxes
    such as ``blocks.0.attn · MultiHeadAttention (1, 9, 64)``. Runs in eval mode without
    gradients (the model's mode is restored). Returns a :class:`Trace`: its nodes in the order
    they ran (each repeated layer in full; :func:`collapse_repeats` keeps one of each).

    Raises ``ValueError`` when ``model`` is not a ``torch.nn.Module``, an input is not a
    tensor, or the forward pass rejects the inputs (the message names the shapes given).
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module; got {type(model).__name__}")
    if not inputs:
        raise ValueError(f"trace needs the inputs of {type(model).__name__}.forward; got none")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"input {i} must be a torch.Tensor; got {type(x).__name__}")
    tracer = _Tracer(model)
    for name, x in zip(_input_names(model, len(inputs)), inputs, strict=True):
        node = Node(id=len(tracer.nodes), kind="input", path=name, cls=str(x.dtype).split(".")[-1],
                    shape=_shape(x))
        tracer.add_node(node, [])
        tracer.tag(x, frozenset({node.id}))
    handles = []
    for module in model.modules():
        handles.append(module.register_forward_pre_hook(tracer.pre_hook, with_kwargs=True))
        handles.append(module.register_forward_hook(tracer.post_hook, with_kwargs=True))
    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        with torch.no_grad(), tracer:
            out = model(*inputs, **kwargs)
    except ValueError:
        raise
    except (RuntimeError, TypeError, IndexError) as err:
        shapes = ", ".join(str(_shape(x)) for x in inputs)
        raise ValueError(
            f"{type(model).__name__} rejected inputs of shapes {shapes}: {err}"
        ) from err
    finally:
        for m, mode in modes:
            m.training = mode
        for h in handles:
            h.remove()
    result = next(_tensors(out), None)
    if result is None:
        raise ValueError(f"{type(model).__name__} returned no tensor to trace")
    origin = tracer.origin_of(result)
    tracer.add_node(Node(id=len(tracer.nodes), kind="output", path="output", cls="output",
                         shape=_shape(result)), [(origin, "flow")] if origin else [])
    stacks = []
    seen = set()
    for child, (path, _, count) in tracer.stack_children.items():
        if path not in seen:
            seen.add(path)
            layer = model.get_submodule(child)
            stacks.append(Stack(path, type(layer).__name__, count, _chapter(model, child)[0]))
    chapter, _ = _chapter(model, "")
    return Trace(type(model).__name__, tuple(tracer.nodes), tuple(tracer.edges), tuple(stacks),
                 chapter)


def _relative(path: str, layer: str) -> str:
    return path[len(layer) + 1:] if path.startswith(layer + ".") else path


def collapse_repeats(tr: Trace) -> Trace:
    """The trace with each list of identical layers drawn once, marked ``× count``.

    Layers are identical when they ran the same modules, in the same order, with the same
    output shapes and the same wiring. The first layer's nodes stay (``repeat`` = count,
    ``also`` = the paths of their copies); edges into later layers move to the first, and edges
    between layers go. A list whose layers differ is kept in full.
    """
    if not isinstance(tr, Trace):
        raise ValueError(f"collapse_repeats needs a Trace; got {type(tr).__name__}")
    nodes, edges, stacks = list(tr.nodes), list(tr.edges), []
    for stack in tr.stacks:
        layers = [f"{stack.path}.{i}".lstrip(".") for i in range(stack.count)]
        members = [[n for n in nodes if n.group == layer] for layer in layers]
        ids = [{n.id for n in m} for m in members]

        layer_of = {nid: i for i, s in enumerate(ids) for nid in s}
        feeds_all = set.intersection(*({e.src for e in edges if e.dst in s and e.src not in
                                        layer_of} for s in ids)) if all(ids) else set()

        def signature(i: int, members=members, ids=ids, layers=layers, layer_of=layer_of,
                      feeds_all=feeds_all, edges=edges) -> tuple:
            index = {n.id: k for k, n in enumerate(members[i])}
            wiring = []
            for e in edges:
                if e.dst in ids[i]:  # from this layer, the one before, or outside the list
                    if e.src in ids[i]:
                        source: Any = index[e.src]
                    elif e.src in layer_of:
                        source = ("layer", i - layer_of[e.src])
                    else:  # the list's input acts as layer -1; a node feeding every layer stays
                        source = ("node", e.src) if e.src in feeds_all else ("layer", 1)
                    wiring.append((str(source), index[e.dst], e.kind))
                elif e.src in ids[i] and e.dst not in layer_of and i < len(ids) - 1:
                    wiring.append(("out", index[e.src], e.kind))  # read before the last layer
            nodes_ = tuple((_relative(n.path, layers[i]), n.cls, n.shape, n.kind, n.note)
                           for n in members[i])
            return nodes_, tuple(sorted(wiring))

        same = stack.count > 1 and all(members) and all(
            signature(i) == signature(0) for i in range(1, stack.count)
        )
        if not same:
            stacks.append(stack)
            continue
        twin = {m.id: first.id for copy in members[1:] for first, m in zip(members[0], copy,
                                                                              strict=True)}
        also = {first.id: tuple(copy[k].path for copy in members[1:])
                for k, first in enumerate(members[0])}
        kept: list[Edge] = []
        for e in edges:
            a, b = layer_of.get(e.src), layer_of.get(e.dst)
            if a is not None and b is not None and a != b:
                continue  # from one layer into the next: the repeat says it
            new = Edge(twin.get(e.src, e.src), twin.get(e.dst, e.dst), e.kind)
            if new not in kept:
                kept.append(new)
        edges = kept
        nodes = [replace(n, repeat=stack.count, also=also[n.id]) if n.id in also else n
                 for n in nodes if n.id not in twin]
        stacks.append(replace(stack, collapsed=True))
    return replace(tr, nodes=tuple(nodes), edges=tuple(edges), stacks=tuple(stacks))


# ---- links to the website --------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _repository() -> str | None:
    """The repository URL from ``pyproject.toml`` (a checkout) or the installed metadata."""
    source = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if source.exists():
        found = re.search(r'^Repository\s*=\s*"([^"]+)"', source.read_text(encoding="utf-8"),
                          re.MULTILINE)
        if found:
            return found.group(1)
    try:
        from importlib.metadata import PackageNotFoundError, metadata
    except ImportError:  # pragma: no cover
        return None
    try:
        urls = metadata("course-attention").get_all("Project-URL") or []
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled copy
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip() == "Repository":
            return url.strip()
    return None  # pragma: no cover


def site_url() -> str | None:
    """The website's address, ``https://OWNER.github.io/NAME``, from the repository URL in
    ``pyproject.toml`` (as the reader notebooks' links: ``course_book.reader.site_url``);
    ``None`` when the package carries no repository URL."""
    repository = _repository()
    if not repository or "github.com/" not in repository:
        return None
    owner, name = repository.rstrip("/").split("github.com/", 1)[1].split("/")[:2]
    return f"https://{owner.lower()}.github.io/{name}"


def chapter_url(label: str) -> str | None:
    """The absolute website address of a chapter (``"ch-multi-head"`` → ``…/05_multi_head.html``).

    Absolute, so the link works in the book, in JupyterLab and in Colab alike.
    """
    if label not in CHAPTERS:
        raise ValueError(f"unknown chapter label {label!r}; known: {', '.join(CHAPTERS)}")
    base = site_url()
    edition = "" if language() == "en" else f"/{language()}"  # the Chinese site is under zh/
    return f"{base}{edition}/{CHAPTERS[label][0]}.html" if base else None


# ---- the chapters' own models ----------------------------------------------------------------
def chapter_example(label: str, seed: int = 0) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """The model a chapter builds, untrained, with the chapter's configuration, and its inputs.

    ``"ch-transformer-block"``: ``modules.EncoderLayer(d_model=32, n_heads=4, d_ff=128)`` (post-
    norm, as chapter 6 counts its parameters) on ``x`` ``(1, 5, 32)``.
    ``"ch-encoder-decoder"``: chapter 7's ``Seq2SeqTransformer`` (2 + 2 layers, width 32, 4
    heads, ``max_len=16``) on the source ``31415`` ``(1, 11)`` and the target prefix ``[BOS]
    5 1 4 1 3`` ``(1, 6)``. ``"ch-decoder-only"``: ``gpt.GPT(gpt.CHAPTER_CONFIG)`` on
    ``"def f(x):"`` ``(1, 9)``. Seeded (``seed``) without touching the caller's random state.
    """
    from . import corpus, tasks

    if label not in _EXAMPLES:
        raise ValueError(f"no example model for {label!r}; one of {', '.join(_EXAMPLES)}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if label == "ch-transformer-block":
            model: torch.nn.Module = modules.EncoderLayer(d_model=32, n_heads=4, d_ff=128)
            return model, (torch.randn(1, 5, 32),)
        if label == "ch-encoder-decoder":
            model = modules.Seq2SeqTransformer(
                tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
            )
            src = torch.as_tensor(tasks.encode_source("31415"))  # (1, 11)
            answer = tasks.encode_digits([5, 1, 4, 1, 3], 5)
            tgt_in = torch.as_tensor([[tasks.BOS_ID, *answer.tolist()]])  # (1, 6)
            return model, (src, tgt_in)
        model = gpt.GPT(gpt.CHAPTER_CONFIG)
        return model, (torch.as_tensor(corpus.encode("def f(x):"))[None],)  # (1, 9)


_EXAMPLES = {
    "ch-transformer-block": N_("Chapter 6 · a Transformer block"),
    "ch-encoder-decoder": N_("Chapter 7 · the encoder–decoder"),
    "ch-decoder-only": N_("Chapter 8 · the GPT (decoder-only)"),
}


def course_map_traces(seed: int = 0) -> list[tuple[str, Trace]]:
    """``(title, trace)`` of chapter 6's block, chapter 7's encoder–decoder and chapter 8's GPT,
    each built untrained by :func:`chapter_example` and traced on its example input."""
    return [(title, trace(*_flat(chapter_example(label, seed)))) for label, title in
            _EXAMPLES.items()]


def _flat(example: tuple[torch.nn.Module, tuple[torch.Tensor, ...]]) -> tuple:
    model, inputs = example
    return (model, *inputs)
