"""Done-when: an independent ground truth (each shown program run as written in a fresh ``python -I``
subprocess over the latent grid) agrees with the generator on 2,000 problems across families."""

from __future__ import annotations

from iclr26.executable_counterfactuals import FAMILIES, generate, subprocess_truth


def test_subprocess_ground_truth_agrees_on_2000_problems():
    problems = [p for f in FAMILIES for p in generate(f, 400, seed=7)]
    problems += generate("if_else_long", 100, seed=8, difficulty={"modulus": 4})
    out = subprocess_truth(problems)
    assert len(out) == len(problems) == 2100
    for p, o in zip(problems, out, strict=True):
        assert set(o["answers"]) == set(p.answers_counterfactual), p.id
        assert [tuple(c) for c in o["consistent"]] == list(p.consistent_latents), p.id
