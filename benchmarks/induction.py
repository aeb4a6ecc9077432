"""Chapter 9's training for seeds 0, 1, 2: the chapter's numbers and claims, and the time.

The chapter's models (``induction.train_induction`` defaults: 2 attention-only layers, d_model
64, 4 heads, 64 token ids, sequences of 48 with a repeated segment of 12 to 24 tokens; AdamW lr
1e-2, batch 64, 1000 steps, the first 750 on uneven copy distances, the last 250 on even ones;
checkpoints every 10 steps), its 1-layer control and its 100-step fixed-offset model. For every
seed it prints the numbers the chapter states (``induction_claims.analyse``): the phase-change
window and the plateau before it, the 1-layer control, the order in which the heads rise, the
loss on repeated tokens by copy distance (at step 750 and 1000), the scores, the ablations, the
copying check; then whether ``induction_claims.check_claims`` holds, and the training times.
Targets: every claim holds on every seed; the three trainings of one seed ≤ 30 s on 2 idle cores.

    .venv/bin/python benchmarks/induction.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from course_attention import induction, induction_claims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(f"torch {torch.__version__}, training on 1 thread (training.fit's default)")
    worst = []
    for seed in args.seeds:
        run = induction.train_induction(seed=seed, progress=False)
        control = induction.train_induction(
            induction.RepeatConfig(n_layers=1), seed=seed, every=50, progress=False
        )
        fixed = induction.train_induction(
            induction.RepeatConfig(fixed_offset=True), steps=100, lr=3e-2, every=50, seed=seed,
            progress=False,
        )
        f = induction_claims.analyse(run, control)
        f.update(induction_claims.analyse_fixed(fixed, run.eval_batch))
        try:
            induction_claims.check_claims(f)
            verdict = "all claims hold"
        except AssertionError as error:
            verdict = str(error)
        seconds = run.seconds + control.seconds + fixed.seconds
        worst.append((verdict == "all claims hold", f["distance_worst"], seconds))
        by_d = {k: np.round(v, 2).tolist() for k, v in run.by_distance.items()}
        print(
            f"seed {seed}: steepest 100 steps {f['window_start']}-{f['window_end']}: repeated "
            f"tokens {f['loss_window_start']:.2f} -> {f['loss_window_end']:.2f} nats (200 steps "
            f"before: fell {f['plateau_drop']:.2f}); "
            f"final {f['loss_after']:.2f}, other tokens {f['other_after']:.2f}; training loss "
            f"{f['train_before']:.2f} -> {f['train_after']:.2f} (1 layer {f['control_before']:.2f}"
            f" -> {f['control_after']:.2f}, repeated tokens never below {f['control_min']:.2f})\n"
            f"  half-way steps: previous-token {f['rise_prev']}, induction {f['rise_ind']}, loss "
            f"{f['rise_loss']} (a fifth of the way: {f['start_prev']}, {f['start_ind']}); "
            f"loss by distance {induction.DISTANCES}: {by_d}\n"
            f"  previous-token score {f['prev_score']:.2f} (next {f['prev_second']:.2f}); "
            f"induction scores of layer 1 >= {f['ind_layer1_min']:.2f} (best {f['ind_score']:.2f},"
            f" exercise 2's score {f['token_score']:.2f}); ablation: previous-token head "
            f"{f['abl_prev']:.2f}, other layer-0 heads within {f['others0']:.3f}, one layer-1 head"
            f" {f['abl_l1_min']:.2f}-{f['abl_l1_max']:.2f}; off in Q/K/V {f['key_off_q']:.2f}/"
            f"{f['key_off_k']:.2f}/{f['key_off_v']:.2f}; logit attribution layer 1 >= "
            f"{f['dla_l1_min']:.2f}, layer 0 <= {f['dla_l0_max']:.2f}; Try it "
            f"{f['try_right']}/{f['try_total']}; fixed-offset {f['fixed_loss']:.2f} / "
            f"{f['fixed_moved']:.2f} nats\n"
            f"  {verdict}; {run.seconds:.1f} s + 1 layer {control.seconds:.1f} s + fixed "
            f"{fixed.seconds:.1f} s",
            flush=True,
        )
    print(
        f"induction: claims hold on {sum(w[0] for w in worst)} of {len(worst)} seeds, worst "
        f"distance loss {max(w[1] for w in worst):.2f} nats, {max(w[2] for w in worst):.1f} s"
    )


if __name__ == "__main__":
    main()
