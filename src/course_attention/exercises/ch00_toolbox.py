"""Exercises of the toolbox chapter (chapter 0): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_, _
from .core import Exercise, Mistake, register, rng

LN2 = float(np.log(2.0))
BETAS = (0.9, 0.999)  #: Adam's β₁, β₂ in exercise toolbox-3 (PyTorch's defaults)
EPS = 1e-8  #: Adam's ε in exercise toolbox-3 (PyTorch's default)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _naive_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """A softmax without the maximum subtracted: large scores overflow to inf / inf = NaN."""
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


# --- toolbox-1: the gradient through a softmax (a vector–Jacobian product) ----------------------


def _softmax_backward_reference(s: np.ndarray, g: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    J = numpy_ref.softmax_jacobian(numpy_ref.softmax(s))  # (..., n, n)
    return (J @ g[..., :, None])[..., 0]  # (..., n): ∂L/∂s = J ∂L/∂p


def _softmax_backward_cases() -> list[tuple]:
    gen = rng(1)
    return [
        (gen.normal(size=4), gen.normal(size=4)),
        (2.0 * gen.normal(size=(3, 5)), gen.normal(size=(3, 5))),  # a batch: one softmax per row
        (gen.normal(size=6), np.full(6, 2.0)),  # the same ∂L/∂p for every weight: gradient 0
        (np.zeros(4), gen.normal(size=4)),  # uniform weights
        # scores in the thousands, two of them close in each row: np.exp overflows unless each
        # row's maximum is subtracted, and only the two close weights get a gradient
        (
            np.array([[1000.0, 1000.5, 0.0, -1000.0], [-500.0, 2000.0, 1999.0, 3.0]]),
            gen.normal(size=(2, 4)),
        ),
        (np.array([800.0, 799.0, -5.0]), gen.normal(size=3)),  # exp(800) is inf in float64
    ]


def _vjp(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    return p * (g - (p * g).sum(axis=-1, keepdims=True))


SOFTMAX_BACKWARD_MISTAKES = (
    Mistake(
        N_(
            "only diag(p) g = p * g: the term −p (p·g), which keeps the weights summing to 1, is "
            "missing"
        ),
        lambda s, g: _softmax(s) * g,
    ),
    Mistake(
        N_("only −p pᵀ g: the diagonal term p * g is missing"),
        lambda s, g: -_softmax(s) * (_softmax(s) * g).sum(axis=-1, keepdims=True),
    ),
    Mistake(
        N_("the sign flipped: p ((p·g) − g) instead of p (g − (p·g))"),
        lambda s, g: -_vjp(_softmax(s), g),
    ),
    Mistake(
        N_("the Jacobian taken at the scores s instead of at the weights p = softmax(s)"),
        lambda s, g: _vjp(s, g),
    ),
    Mistake(
        N_(
            "∂L/∂p returned unchanged: the gradient must still pass back through the softmax, "
            "∂L/∂s = J ∂L/∂p"
        ),
        lambda s, g: g,
    ),
    Mistake(
        N_(
            "p·g summed over the whole array instead of over each row: keep the last axis, "
            "`(p * g).sum(axis=-1, keepdims=True)`"
        ),
        lambda s, g: _softmax(s) * (g - (_softmax(s) * g).sum()),
    ),
    Mistake(
        N_("softmax over the first axis (axis 0) instead of the last: each row is one softmax"),
        lambda s, g: _vjp(_softmax(s, axis=0), g),
    ),
    Mistake(
        N_(
            "no maximum subtracted before `np.exp`: large scores overflow to inf, and inf / inf is "
            "NaN — subtract each row's maximum, `s.max(axis=-1, keepdims=True)`"
        ),
        lambda s, g: _vjp(_naive_softmax(s), g),
    ),
)


# --- toolbox-2: cross-entropy in bits ------------------------------------------------------------


def _cross_entropy_bits_reference(logits: np.ndarray, targets: np.ndarray) -> float:
    log_p = _log_softmax(logits)  # (n, vocab), natural log
    return float(-log_p[np.arange(len(targets)), targets].mean() / LN2)


def _cross_entropy_cases() -> list[tuple]:
    gen = rng(2)
    large = 1000.0 * gen.normal(size=(4, 6))
    large_targets = large.argmin(axis=-1)  # the least likely token: p underflows to 0
    large_targets[0] = large[0].argmax()
    return [
        (gen.normal(size=(5, 8)), gen.integers(0, 8, size=5)),
        (np.zeros((4, 16)), gen.integers(0, 16, size=4)),  # uniform: log2 16 = 4 bits
        (3.0 * gen.normal(size=(6, 3)), gen.integers(0, 3, size=6)),
        (gen.normal(size=(1, 10)), np.array([7])),  # one position
        # logits in the thousands: np.exp overflows unless the maximum is subtracted, and the
        # softmax of a token far below the maximum underflows to 0 (its log is −inf)
        (large, large_targets),
        (np.array([[2000.0, 0.0, -10.0], [800.0, 1500.0, 700.0]]), np.array([1, 2])),
        # large but close logits: exp(800) overflows, yet no probability underflows
        (np.array([[800.0, 799.0, 790.0]]), np.array([1])),
    ]


def _picked(log_p: np.ndarray, targets: np.ndarray) -> np.ndarray:
    return log_p[np.arange(len(targets)), targets]


CROSS_ENTROPY_MISTAKES = (
    Mistake(
        N_("nats instead of bits: the natural log gives nats; divide by ln 2 (or use np.log2)"),
        lambda z, y: float(-_picked(_log_softmax(z), y).mean()),
    ),
    Mistake(
        N_("log base 10 instead of base 2: bits use log₂ = ln / ln 2"),
        lambda z, y: float(-_picked(_log_softmax(z), y).mean() / np.log(10.0)),
    ),
    Mistake(
        N_("the sum over the positions instead of the mean"),
        lambda z, y: float(-_picked(_log_softmax(z), y).sum() / LN2),
    ),
    Mistake(
        N_("the minus sign is missing: a log-probability is ≤ 0, the loss is −log₂ p"),
        lambda z, y: float(_picked(_log_softmax(z), y).mean() / LN2),
    ),
    Mistake(
        N_("softmax over the positions (axis 0) instead of over the vocabulary (axis -1)"),
        lambda z, y: float(-_picked(np.log(_softmax(z, axis=0)), y).mean() / LN2),
    ),
    Mistake(
        N_(
            "probabilities treated as logits: the softmax taken twice (as when softmax output is "
            "passed to `F.cross_entropy`, which applies its own log-softmax)"
        ),
        lambda z, y: float(-_picked(_log_softmax(_softmax(z)), y).mean() / LN2),
    ),
    Mistake(
        N_(
            "no maximum subtracted before `np.exp`: large logits overflow to inf, and inf / inf "
            "is NaN"
        ),
        lambda z, y: float(-np.log2(_picked(_naive_softmax(z), y)).mean()),
    ),
    Mistake(
        N_(
            "no maximum subtracted in the log-softmax: log Σ exp(z) overflows to inf for large "
            "logits — subtract each row's maximum first, z − max − log Σ exp(z − max)"
        ),
        lambda z, y: float(
            -_picked(z - np.log(np.exp(z).sum(axis=-1, keepdims=True)), y).mean() / LN2
        ),
    ),
    Mistake(
        N_(
            "the log of the softmax: a probability that underflows to 0 gives −log 0 = inf. Take "
            "the log-softmax directly, z − max − log Σ exp(z − max)"
        ),
        lambda z, y: float(-np.log2(_picked(_softmax(z), y)).mean()),
    ),
)


# --- toolbox-3: one AdamW step -------------------------------------------------------------------


def _adamw_step_reference(
    p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, lr: float,
    weight_decay: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of ``torch.optim.AdamW`` (and of the package's ``training.Adam``)."""
    (b1, b2), eps = BETAS, EPS
    p = p * (1 - lr * weight_decay)  # decoupled decay: shrink the weights first
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g**2
    p = p - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return p, m, v


def _adamw_cases() -> list[tuple]:
    gen = rng(3)

    def state(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        g_old = gen.normal(size=(20, *shape))  # moments of some earlier gradients
        return 0.5 * g_old.mean(axis=0), 0.3 * (g_old**2).mean(axis=0)

    g2 = gen.normal(size=(2, 3))
    g2[0, 1] = g2[1, 2] = 0.0  # no gradient: only the weight decay moves these
    g2[1, 0] = 1e-5  # a tiny gradient: √v̂ is close to ε, so where ε goes matters
    return [
        (gen.normal(size=4), gen.normal(size=4), np.zeros(4), np.zeros(4), 1, 0.1, 0.0),
        (gen.normal(size=(2, 3)), g2, np.zeros((2, 3)), np.zeros((2, 3)), 1, 0.1, 0.1),
        (gen.normal(size=5), gen.normal(size=5), *state((5,)), 5, 0.05, 0.1),
        # tiny gradients: √v̂ is close to ε, so where ε goes matters
        (gen.normal(size=4), 1e-4 * gen.normal(size=4), np.zeros(4), np.zeros(4), 1, 0.1, 0.0),
        (gen.normal(size=(3, 2)), gen.normal(size=(3, 2)), *state((3, 2)), 100, 1e-3, 0.5),
    ]


def _adam_update(p, g, m, v, t, lr, eps_inside=False, corrected=True):  # noqa: ANN001, ANN202
    (b1, b2), eps = BETAS, EPS
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g**2
    m_hat, v_hat = (m / (1 - b1**t), v / (1 - b2**t)) if corrected else (m, v)
    denom = np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps
    return p - lr * m_hat / denom, m, v


ADAMW_MISTAKES = (
    Mistake(
        N_(
            "weight decay added to the gradient (g + λ p, Adam's L2 penalty, as "
            "`torch.optim.Adam(weight_decay=…)` does) instead of shrinking the weights apart from "
            "it, p · (1 − lr · λ), as AdamW does"
        ),
        lambda p, g, m, v, t, lr, wd: _adam_update(p, g + wd * p, m, v, t, lr),
    ),
    Mistake(
        N_(
            "the weights shrunk by (1 − λ), the paper's decay at a constant schedule, instead of "
            "(1 − lr · λ): `torch.optim.AdamW` multiplies λ by the learning rate"
        ),
        lambda p, g, m, v, t, lr, wd: _adam_update(p * (1 - wd), g, m, v, t, lr),
    ),
    Mistake(
        N_(
            "the decay applied after the Adam step, to the updated weights; AdamW shrinks the "
            "weights first, then subtracts the step"
        ),
        lambda p, g, m, v, t, lr, wd: (
            lambda new: (new[0] * (1 - lr * wd), new[1], new[2])
        )(_adam_update(p, g, m, v, t, lr)),
    ),
    Mistake(
        N_("no bias correction: m and v were used without dividing by 1 − β₁ᵗ and 1 − β₂ᵗ"),
        lambda p, g, m, v, t, lr, wd: _adam_update(p * (1 - lr * wd), g, m, v, t, lr,
                                                   corrected=False),
    ),
    Mistake(
        N_("ε inside the square root, √(v̂ + ε), instead of added to it, √v̂ + ε"),
        lambda p, g, m, v, t, lr, wd: _adam_update(p * (1 - lr * wd), g, m, v, t, lr,
                                                   eps_inside=True),
    ),
    Mistake(
        N_("the old m and v returned: return the updated moments with the new weights"),
        lambda p, g, m, v, t, lr, wd: (_adamw_step_reference(p, g, m, v, t, lr, wd)[0], m, v),
    ),
)


# --- toolbox-4: inverted dropout -----------------------------------------------------------------


def _dropout_reference(x: np.ndarray, keep: np.ndarray, p: float) -> np.ndarray:
    return np.where(keep, x / (1 - p), 0.0)  # the shape of x


def _dropout_cases() -> list[tuple]:
    gen = rng(4)
    return [
        (gen.normal(size=8), gen.random(8) >= 0.25, 0.25),
        (gen.normal(size=(3, 4)), gen.random((3, 4)) >= 0.5, 0.5),
        (gen.normal(size=(2, 3, 5)), gen.random((2, 3, 5)) >= 0.1, 0.1),
        (gen.normal(size=5), np.ones(5, dtype=bool), 0.0),  # p = 0: nothing changes
        # a draw that kept 1 of 4 where 1 − p = 1/2 are kept on average
        (np.ones(4), np.array([True, False, False, False]), 0.5),
    ]


DROPOUT_MISTAKES = (
    Mistake(
        N_(
            "no rescaling: the surviving entries must be divided by 1 − p, or the mean shrinks by "
            "that factor"
        ),
        lambda x, keep, p: np.where(keep, x, 0.0),
    ),
    Mistake(
        N_("multiplied by 1 − p instead of divided by it"),
        lambda x, keep, p: np.where(keep, x * (1 - p), 0.0),
    ),
    Mistake(
        N_(
            "divided by p, the probability of dropping, instead of by 1 − p, the probability of "
            "keeping"
        ),
        lambda x, keep, p: np.where(keep, x / p, 0.0),
    ),
    Mistake(
        N_("the mask inverted: `keep` is True where an entry survives"),
        lambda x, keep, p: np.where(keep, 0.0, x / (1 - p)),
    ),
    Mistake(
        N_(
            "divided by the fraction this draw kept (`keep.mean()`) instead of 1 − p: the scale "
            "must not depend on the draw"
        ),
        lambda x, keep, p: np.where(keep, x / keep.mean(), 0.0),
    ),
)


register(
    Exercise(
        id="toolbox-1",
        title=N_("the gradient through a softmax, ∂L/∂s = J ∂L/∂p"),
        reference=_softmax_backward_reference,
        cases=_softmax_backward_cases,
        difficulty=2,
        minutes=10,
        mistakes=SOFTMAX_BACKWARD_MISTAKES,
        hint=N_(
            "with p = softmax(s) (subtract each row's maximum first), ∂L/∂s_j = Σ_i J[i, j] g_i "
            "and J = diag(p) − p pᵀ, so ∂L/∂s = p * (g − (p * g).sum(axis=-1, keepdims=True)): "
            "each weight's own gradient minus the weighted average of all of them."
        ),
        nudge=N_(
            "entry j of ∂L/∂s is Σ_i J[i, j] g_i with J = diag(p) − p pᵀ: write that sum out by "
            "hand, and the (n, n) matrix is never needed."
        ),
    )
)

register(
    Exercise(
        id="toolbox-2",
        title=N_("cross-entropy in bits"),
        reference=_cross_entropy_bits_reference,
        cases=_cross_entropy_cases,
        difficulty=2,
        minutes=10,
        mistakes=CROSS_ENTROPY_MISTAKES,
        hint=N_(
            "take the log-softmax of each row, z − max − log Σ exp(z − max) (never the log of a "
            "softmax that may be 0), pick each row's target entry with "
            "`log_p[np.arange(len(targets)), targets]`, average, negate, and divide by ln 2 to "
            "turn nats into bits."
        ),
        nudge=N_(
            "bits are nats divided by ln 2; and a probability far below the largest one "
            "underflows to 0, so stay with log-probabilities all the way."
        ),
    )
)

register(
    Exercise(
        id="toolbox-3",
        title=N_("one AdamW step"),
        reference=_adamw_step_reference,
        cases=_adamw_cases,
        difficulty=2,
        minutes=10,
        mistakes=ADAMW_MISTAKES,
        hint=N_(
            "first shrink the weights, p · (1 − lr · λ); then m ← β₁ m + (1 − β₁) g and "
            "v ← β₂ v + (1 − β₂) g²; then p ← p − lr · m̂ / (√v̂ + ε) with m̂ = m / (1 − β₁ᵗ), "
            "v̂ = v / (1 − β₂ᵗ), β₁ = 0.9, β₂ = 0.999, ε = 1e-8. Return (p, m, v)."
        ),
        nudge=N_(
            "AdamW is the chapter's adam_step plus one line: where does the shrink by "
            "(1 − lr · λ) go so that it stays apart from the gradient?"
        ),
    )
)

register(
    Exercise(
        id="toolbox-4",
        title=N_("inverted dropout"),
        reference=_dropout_reference,
        cases=_dropout_cases,
        difficulty=1,
        minutes=5,
        mistakes=DROPOUT_MISTAKES,
        hint=N_(
            "keep an entry where `keep` is True and divide it by 1 − p, the probability of "
            "keeping it; put 0 elsewhere: `np.where(keep, x / (1 - p), 0.0)`."
        ),
        nudge=N_(
            "an entry survives with probability 1 − p: by what must a survivor be multiplied so "
            "that its mean stays what it was?"
        ),
    )
)


# --- toolbox-5: one pre-norm block on the residual stream ---------------------------------------


class _Sublayer:
    """A sublayer the cases pass in, ``(seq, d_model) → (seq, d_model)``, named in messages."""

    def __init__(self, kind: str, gen: np.random.Generator, d: int) -> None:
        self.kind = kind
        self.W1 = gen.normal(size=(d, 2 * d)) / np.sqrt(d)
        self.W2 = gen.normal(size=(2 * d, d)) / np.sqrt(2 * d)
        self.gamma, self.beta = 1 + 0.3 * gen.normal(size=d), 0.3 * gen.normal(size=d)

    def __call__(self, h: np.ndarray) -> np.ndarray:
        if self.kind == "attn":  # causal attention with equal weights: row t averages rows 0 … t
            return np.cumsum(h, axis=0) / np.arange(1, len(h) + 1)[:, None] @ self.W1[:, : len(h.T)]
        if self.kind == "ff":
            return np.maximum(h @ self.W1, 0) @ self.W2
        centred = h - h.mean(axis=-1, keepdims=True)  # a layer norm with its own γ and β
        return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5) * self.gamma \
            + self.beta

    def __repr__(self) -> str:
        names = {"attn": N_("an attention sublayer"), "ff": N_("a feed-forward sublayer")}
        return _(names.get(self.kind, N_("a layer norm")))


def _pre_norm_block_reference(x: np.ndarray, attn: _Sublayer, ff: _Sublayer,
                              norm: _Sublayer) -> np.ndarray:
    h = x + attn(norm(x))  # (seq, d_model): attention reads a normalised copy, adds its output
    return h + ff(norm(h))  # the feed-forward network reads the updated stream


def _pre_norm_block_cases() -> list[tuple]:
    gen = rng(5)
    cases = []
    for seq, d in ((4, 6), (5, 8), (3, 4), (6, 8)):
        x = 2.0 + 3.0 * gen.normal(size=(seq, d))  # a stream far from mean 0 and spread 1
        cases.append((x, _Sublayer("attn", gen, d), _Sublayer("ff", gen, d),
                      _Sublayer("norm", gen, d)))
    return cases


PRE_NORM_MISTAKES = (
    Mistake(
        N_(
            "post-norm, norm(x + attn(x)): chapter 6's original order; gpt.Block normalises only "
            "what each sublayer reads"
        ),
        lambda x, attn, ff, norm: (lambda h: norm(h + ff(h)))(norm(x + attn(x))),
    ),
    Mistake(
        N_(
            "the feed-forward network read the stream from before attention's write, ff(norm(x)): "
            "it reads the updated stream x + attn(norm(x))"
        ),
        lambda x, attn, ff, norm: x + attn(norm(x)) + ff(norm(x)),
    ),
    Mistake(
        N_(
            "no residual additions: each sublayer's output replaced the stream instead of being "
            "added to it"
        ),
        lambda x, attn, ff, norm: ff(norm(attn(norm(x)))),
    ),
    Mistake(
        N_(
            "the stream itself normalised, norm(x) + attn(norm(x)): the layer norm belongs on the "
            "sublayer's input only, the stream keeps what was added"
        ),
        lambda x, attn, ff, norm: (lambda h: norm(h) + ff(norm(h)))(norm(x) + attn(norm(x))),
    ),
)


# --- toolbox-6: a linear probe's accuracy on new vectors ----------------------------------------


def _probe_fit(X: np.ndarray, y: np.ndarray, bias: bool = True) -> np.ndarray:
    A = np.c_[X, np.ones(len(X))] if bias else X
    return np.linalg.lstsq(A, np.where(y, 1.0, -1.0), rcond=None)[0]


def _probe_score(w: np.ndarray, X: np.ndarray, y: np.ndarray, bias: bool = True) -> float:
    A = np.c_[X, np.ones(len(X))] if bias else X
    return float(((A @ w > 0) == y).mean())


def _probe_reference(X_fit: np.ndarray, y_fit: np.ndarray, X_new: np.ndarray,
                     y_new: np.ndarray) -> float:
    return _probe_score(_probe_fit(X_fit, y_fit), X_new, y_new)


def _probe_cases() -> list[tuple]:
    gen = rng(6)
    cases = []
    for n_fit, n_new, d in ((60, 40, 4), (80, 50, 6), (40, 40, 3), (30, 60, 8)):
        X = gen.normal(size=(n_fit + n_new, d))  # (n, d)
        score = X @ gen.normal(size=d) + 0.5 * gen.normal(size=len(X))  # a noisy linear rule
        y = score > np.quantile(score, 0.75)  # 25 % True: the boundary misses the origin
        cases.append((X[:n_fit], y[:n_fit], X[n_fit:], y[n_fit:]))
    return cases


def _logistic_probe(X_fit: np.ndarray, y_fit: np.ndarray, X_new: np.ndarray,
                    y_new: np.ndarray) -> float:
    """Logistic regression with a bias, fitted as scikit-learn's ``LogisticRegression()`` fits it
    by default: log-loss plus ½‖w‖² on the weights (not on the bias), minimised by Newton's
    method; it predicts True where ``X w + b > 0``."""
    A = np.c_[X_fit, np.ones(len(X_fit))]  # (n_fit, d + 1)
    y = np.asarray(y_fit, dtype=float)
    penalty = np.diag(np.r_[np.ones(A.shape[1] - 1), 0.0])  # (d + 1, d + 1): the bias is free
    w = np.zeros(A.shape[1])
    for _step in range(30):  # Newton's method: a few steps reach float64 precision
        p = 1 / (1 + np.exp(-np.clip(A @ w, -500, 500)))  # (n_fit,)
        grad = A.T @ (p - y) + penalty @ w
        w = w - np.linalg.solve((A * (p * (1 - p))[:, None]).T @ A + penalty, grad)
    return _probe_score(w, X_new, y_new)


PROBE_MISTAKES = (
    Mistake(
        N_(
            "no bias column: the boundary was forced through the origin, where this property's "
            "boundary is not"
        ),
        lambda Xf, yf, Xn, yn: _probe_score(_probe_fit(Xf, yf, bias=False), Xn, yn, bias=False),
    ),
    Mistake(
        N_("scored on the vectors it was fitted on: a probe's accuracy counts on new vectors only"),
        lambda Xf, yf, Xn, yn: _probe_reference(Xf, yf, Xf, yf),
    ),
    Mistake(
        N_(
            "fitted onto 0 and 1 but thresholded at 0: with 0/1 targets the boundary is 0.5 (or "
            "fit onto −1 and +1, as the chapter does)"
        ),
        lambda Xf, yf, Xn, yn: float(((np.c_[Xn, np.ones(len(Xn))] @ np.linalg.lstsq(
            np.c_[Xf, np.ones(len(Xf))], yf.astype(float), rcond=None)[0] > 0) == yn).mean()),
    ),
    Mistake(
        N_("the share of wrong answers, 1 − accuracy"),
        lambda Xf, yf, Xn, yn: 1 - _probe_reference(Xf, yf, Xn, yn),
    ),
    Mistake(
        N_(
            "logistic regression (scikit-learn's `LogisticRegression()`, say) instead of the "
            "chapter's rule: a linear probe too, but it draws another boundary. Fit by least "
            "squares onto +1 and −1, with a column of ones"
        ),
        _logistic_probe,
    ),
)


register(
    Exercise(
        id="toolbox-5",
        title=N_("one pre-norm block on the residual stream"),
        reference=_pre_norm_block_reference,
        cases=_pre_norm_block_cases,
        difficulty=1,
        minutes=5,
        mistakes=PRE_NORM_MISTAKES,
        hint=N_(
            "two lines: h = x + attn(norm(x)), then return h + ff(norm(h)). Each sublayer reads "
            "a normalised copy of the stream and adds its output to the stream itself."
        ),
        nudge=N_(
            "a sublayer *reads* the stream through the layer norm and *writes* by adding: what "
            "does the feed-forward network read, the stream before or after attention's write?"
        ),
    )
)

register(
    Exercise(
        id="toolbox-6",
        title=N_("a linear probe's accuracy on new vectors"),
        reference=_probe_reference,
        cases=_probe_cases,
        difficulty=2,
        minutes=10,
        mistakes=PROBE_MISTAKES,
        hint=N_(
            "fit w by least squares, np.linalg.lstsq(np.c_[X_fit, np.ones(len(X_fit))], "
            "np.where(y_fit, 1.0, -1.0), rcond=None)[0]; predict True where "
            "np.c_[X_new, np.ones(len(X_new))] @ w > 0; return the share of predictions equal "
            "to y_new as a float."
        ),
        nudge=N_(
            "three steps: add a column of ones, fit onto ±1 by least squares on the fit "
            "vectors, then count the right answers on the *new* vectors only."
        ),
    )
)
