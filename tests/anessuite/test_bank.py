"""The template bank: determinism, balance, keys recomputed independently, fact-table cross-check."""

from __future__ import annotations

import collections

import pytest

from iclr26.anessuite import generate_anes_questions, generate_anes_training

# Independent re-statements of the sources (docs/anessuite.md), written apart from _bank.py.
CLASS_WORD = {
    "propofol": "alkylphenol",
    "midazolam": "benzodiazepine",
    "ketamine": "NMDA",
    "rocuronium": "aminosteroid",
    "succinylcholine": "depolarising",
    "fentanyl": "opioid",
    "ondansetron": "5-HT3",
    "neostigmine": "acetylcholinesterase",
    "glycopyrrolate": "antimuscarinic",
    "sugammadex": "cyclodextrin",
    "bupivacaine": "amide",
    "chloroprocaine": "ester",
    "dexmedetomidine": "alpha-2",
    "cisatracurium": "benzylisoquinolinium",
}
ANTIDOTE = {
    "fentanyl": "naloxone",
    "morphine": "naloxone",
    "remifentanil": "naloxone",
    "midazolam": "flumazenil",
    "lorazepam": "flumazenil",
    "rocuronium": "sugammadex",
    "vecuronium": "sugammadex",
    "unfractionated heparin": "protamine sulfate",
    "dabigatran": "idarucizumab",
    "malignant hyperthermia": "dantrolene",
    "local anaesthetic systemic toxicity": "20% lipid emulsion",
}
MAC = {
    "sevoflurane": "2%",
    "desflurane": "6%",
    "isoflurane": "1.15%",
    "halothane": "0.75%",
    "nitrous oxide": "104%",
}
BG = {
    "desflurane": "0.42",
    "nitrous oxide": "0.47",
    "sevoflurane": "0.65",
    "isoflurane": "1.4",
    "halothane": "2.4",
}


def _key_value(p, fam):
    """The key recomputed from the record's parameters, with formulas written out afresh."""
    w = p.get("weight")
    if fam == "mabl":
        ebv = w * {"adult man": 75, "adult woman": 65, "infant": 80}[p["who"]]
        return ebv - ebv * p["hf"] / p["hi"]
    if fam == "fluids_421":
        rate = 4 * w if w <= 10 else (40 + 2 * (w - 10) if w <= 20 else 60 + (w - 20))
        return rate * (1 + p["hours"] / 2)
    if fam == "local_anaesthetic_max":
        mgkg = {
            ("lidocaine", False): 4.5,
            ("lidocaine", True): 7,
            ("bupivacaine", False): 2.5,
            ("bupivacaine", True): 3,
        }[(p["drug"], p["adrenaline"])]
        return mgkg * w / (10 * p["conc_pct"])
    if fam == "bolus_volume":
        per_kg, conc = {
            "rocuronium": (0.6, 10),
            "propofol": (2, 10),
            "succinylcholine": (1, 20),
            "ketamine": (1.5, 10),
            "fentanyl": (2, 50),
        }[p["drug"]]
        return per_kg * w / conc
    inches_over = (p["height"] - 152.4) / 2.54
    if fam == "ibw_rocuronium":
        return 0.6 * ((50 if p["male"] else 45.5) + 2.3 * inches_over)
    if fam == "lbw_propofol":
        bmi = w / (p["height"] / 100) ** 2
        a, b = (6680, 216) if p["male"] else (8780, 244)
        return 2 * 9270 * w / (a + b * bmi)
    raise AssertionError(fam)


@pytest.fixture(scope="module")
def bank():
    return generate_anes_questions(60, seed=3)


def test_deterministic_per_seed(bank):
    assert generate_anes_questions(60, seed=3) == bank
    assert generate_anes_questions(60, seed=4) != bank


def test_balanced_positions_and_levels(bank):
    for level in (1, 2, 3):
        answers = [r["answer"] for r in bank if r["level"] == level]
        assert len(answers) == 60
        for c, k in collections.Counter(answers).items():
            assert abs(k / 60 - 0.25) <= 0.02, (level, c, k)


def test_four_distinct_options(bank):
    for r in bank:
        opts = [r[f"en_{c}"] for c in "ABCD"]
        assert r["choice_num"] == 4 and len(set(opts)) == 4


def test_system2_keys_recomputed(bank):
    l3 = [r for r in bank if r["level"] == 3]
    assert {r["family"] for r in l3} == {
        "mabl",
        "fluids_421",
        "local_anaesthetic_max",
        "bolus_volume",
        "ibw_rocuronium",
        "lbw_propofol",
    }
    for r in l3:
        value = _key_value(r["params"], r["family"])
        key = float(r[f"en_{r['answer']}"].split()[0])
        digits = len(r[f"en_{r['answer']}"].split()[0].partition(".")[2])
        assert abs(key - value) <= 0.5 * 10**-digits + 1e-9, (r["id"], key, value)
        for c in "ABCD":
            if c != r["answer"]:
                assert abs(float(r[f"en_{c}"].split()[0]) - value) > 0.5 * 10**-digits


def test_fact_keys_cross_checked(bank):
    for r in bank:
        key, subject, fam = r[f"en_{r['answer']}"], r["params"].get("subject"), r["family"]
        if fam == "drug_class":
            assert CLASS_WORD[subject] in key
        elif fam in ("antidote", "vignette_antidote"):
            assert key == ANTIDOTE[subject]
        elif fam == "mac":
            assert key == MAC[subject]
        elif fam == "blood_gas":
            assert key == BG[subject]
        elif fam == "vignette_succinylcholine":
            assert key == "succinylcholine"
        else:
            assert r["level"] == 3


def test_training_split_separate(bank):
    train = generate_anes_training(20, seed=3)
    assert len(train) == 60 and all(r["id"].startswith("train-") for r in train)
    # A separate random stream, not de-duplicated: System 2 items rarely coincide (2 of 20 here).
    l3 = [r["en_question"] for r in train if r["level"] == 3]
    assert len(set(l3) & {r["en_question"] for r in bank}) <= 4
    assert all(r["en_reasoning"].endswith(f"The answer is {r['answer']}.") for r in train)


def test_chinese_rendering_same_items():
    from iclr26.anessuite import anesbench_messages, extract_answer

    en, zh = generate_anes_questions(12, seed=5), generate_anes_questions(12, seed=5, language="zh")
    assert [{k: v for k, v in r.items() if not k.startswith("zh_")} for r in zh] == en
    for r in zh:
        assert r["zh_question"] and all(r[f"zh_{c}"] for c in "ABCD")
        assert len({r[f"zh_{c}"] for c in "ABCD"}) == 4
        if r["level"] == 3:  # numbers and units kept
            assert all(r[f"zh_{c}"] == r[f"en_{c}"] for c in "ABCD")
        else:  # every fact option translated
            assert all(r[f"zh_{c}"] != r[f"en_{c}"] or r[f"en_{c}"][0].isdigit() for c in "ABCD")
        assert anesbench_messages(r, "zh")[1]["content"].endswith(f"D. {r['zh_D']}\n")
        assert extract_answer(f"答案：{r['answer']}", r, language="zh") == r["answer"]


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        ({"n_per_level": 0}, "n_per_level"),
        ({"seed": -1}, "seed"),
        ({"language": "fr"}, "language"),
        ({"n_per_level": 2.5}, "n_per_level"),
    ],
)
def test_bad_arguments(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        generate_anes_questions(**{"n_per_level": 4, **kwargs})
