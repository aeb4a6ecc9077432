"""Chapter 9's explorer without a browser: the typed sequence, its errors, the model file."""

from __future__ import annotations

import json

import pytest
import torch

from course_attention import induction as ind
from course_attention import widgets
from course_attention.explorers import induction as live


@pytest.fixture(scope="module")
def run():
    return ind.train_induction(steps=4, every=2, eval_size=2, progress=False)


@pytest.mark.parametrize(
    ("text", "culprit"),
    [
        ("3 x 5", "x"),
        ("1 64", "64"),
        ("  ", "Type"),
        (" ".join(["1"] * 49), "49"),
        ("2 -1", "-1"),
        ("1.5", "1.5"),
        ("٣", "٣"),
    ],
)
def test_bad_token_text_names_the_value_at_fault(text, culprit):
    with pytest.raises(ValueError, match=culprit):
        live.parse_tokens(text, vocab=64, seq_len=48)


def test_token_text_round_trips():
    assert live.parse_tokens("5, 17  42", 64, 48) == [5, 17, 42]
    assert live.parse_tokens(live.tokens_text(torch.tensor([0, 63])), 64, 48) == [0, 63]


def test_the_model_file_rebuilds_the_same_model(run):
    file = json.loads(json.dumps(live.payload(run.model)))  # as the page fetches it
    model = live.model_from_payload(file)
    assert not model.training
    tokens = run.eval_batch.tokens
    with torch.no_grad():
        for a, b in zip(model(tokens), run.model(tokens), strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    with pytest.raises(ValueError, match="AttentionOnlyTransformer"):
        live.payload(torch.nn.Linear(2, 2))


def test_typed_sequences_run_the_trained_model_and_bad_text_says_why(run):
    explorer = widgets.induction_explorer(run=run)
    assert "after 4 steps" in explorer.figure.layout.title.text  # the evaluation sequence
    explorer.controls["tokens"].value = "5 9 2 5 9"
    with torch.no_grad():
        weights = run.model(torch.tensor([[5, 9, 2, 5, 9]]))[1][1, 0, 0]
    torch.testing.assert_close(
        torch.tensor(explorer.figure.data[0].z).float(), weights, rtol=0, atol=1e-4
    )
    assert list(explorer.figure.data[0].y) == ind.position_labels([5, 9, 2, 5, 9])
    before = explorer.figure
    explorer.controls["tokens"].value = "5 99"  # the page's message, and the last figure stays
    assert explorer.message == "99 is outside the vocabulary: token ids run from 0 to 63."
    assert explorer.figure is before
    right, n = live.predicted_right(run.model, [5, 9, 2, 5, 9])
    assert n == 4 and f"predicted right at {right} of 4 positions" in before.layout.title.text
    spec = explorer.spec()
    assert [c["name"] for c in spec["controls"]] == ["layer", "head", "tokens", "draw"]


def test_the_notebooks_draw_button_types_a_sequence_with_a_repeat(run):
    explorer = widgets.induction_explorer(run=run)
    assert explorer.buttons["draw"].description == live.DRAW
    explorer.buttons["draw"].click()
    ids = [int(t) for t in explorer.controls["tokens"].value.split()]
    c = run.model.config
    assert len(ids) == c.seq_len and explorer.message == ""
    repeats = [n for n in range(c.min_len, c.max_len + 1)
               if any(ids[a:a + n] == ids[b:b + n] for a in range(c.seq_len)
                      for b in range(a + n, c.seq_len - n + 1))]
    assert repeats, "a segment of min_len … max_len tokens appears twice"
    right, n = live.predicted_right(run.model, ids)
    assert f"predicted right at {right} of {n} positions" in explorer.figure.layout.title.text
    assert explorer.figure.layout.height <= live.MAX_HEIGHT
    assert explorer.controls["tokens"].layout.width == "100%"
