"""Our verifiable template bank of anaesthesiology multiple-choice questions in AnesBench's format.

Levels follow the paper's cognitive demands: System 1 (one recalled fact), System 1.x (one fact applied
to a short vignette) and System 2 (a multi-step computation with a deterministic key). Every fact and
formula has its source in ``docs/anessuite.md``. Each question has 4 options; the key's position is
balanced within a level (a shuffled round robin); distractors of System 2 are the results of common
errors. Every record keeps its ``family`` and ``params`` so keys can be recomputed independently, and a
worked ``en_reasoning`` (AnesR1 style) for the training split.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._extract import letters

# --- fact tables (sources in docs/anessuite.md) -------------------------------------------------
DRUG_CLASS = {
    "propofol": "alkylphenol intravenous hypnotic",
    "midazolam": "benzodiazepine",
    "ketamine": "NMDA receptor antagonist",
    "dexmedetomidine": "alpha-2 adrenergic agonist",
    "rocuronium": "aminosteroid non-depolarising neuromuscular blocker",
    "cisatracurium": "benzylisoquinolinium non-depolarising neuromuscular blocker",
    "succinylcholine": "depolarising neuromuscular blocker",
    "fentanyl": "mu-opioid receptor agonist",
    "ondansetron": "5-HT3 receptor antagonist",
    "neostigmine": "acetylcholinesterase inhibitor",
    "glycopyrrolate": "antimuscarinic (anticholinergic)",
    "sugammadex": "modified gamma-cyclodextrin (selective relaxant binding agent)",
    "bupivacaine": "amide local anaesthetic",
    "chloroprocaine": "ester local anaesthetic",
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
#: MAC (vol %, adult about 40 years, in oxygen) and blood/gas partition coefficient at 37 C.
MAC = {"sevoflurane": 2.0, "desflurane": 6.0, "isoflurane": 1.15, "halothane": 0.75, "nitrous oxide": 104.0}
BLOOD_GAS = {
    "desflurane": 0.42,
    "nitrous oxide": 0.47,
    "sevoflurane": 0.65,
    "isoflurane": 1.4,
    "halothane": 2.4,
}
#: Estimated blood volume, ml/kg.
EBV_ML_KG = {"adult man": 75, "adult woman": 65, "infant": 80}
#: Maximum local-anaesthetic dose, mg/kg: (plain, with adrenaline).
LA_MAX_MG_KG = {"lidocaine": (4.5, 7.0), "bupivacaine": (2.5, 3.0)}
#: Bolus doses: (dose per kg, dose unit, supplied concentration per ml).
BOLUS = {
    "rocuronium": (0.6, "mg", 10.0),
    "propofol": (2.0, "mg", 10.0),
    "succinylcholine": (1.0, "mg", 20.0),
    "ketamine": (1.5, "mg", 10.0),
    "fentanyl": (2.0, "mcg", 50.0),
}


# --- independent formulas (tests recompute them separately) --------------------------------------
def maintenance_421(weight: float) -> float:
    """Hourly maintenance fluid (ml/h) by the 4-2-1 rule."""
    return 4 * min(weight, 10) + 2 * min(max(weight - 10, 0), 10) + max(weight - 20, 0)


def ibw_devine(height_cm: float, male: bool) -> float:
    """Devine ideal body weight (kg): 50 (men) or 45.5 (women) + 2.3 kg per inch over 5 ft."""
    return (50.0 if male else 45.5) + 2.3 * (height_cm / 2.54 - 60)


def lbw_janmahasatian(weight: float, height_cm: float, male: bool) -> float:
    """Janmahasatian lean body weight (kg): 9270 W / (6680 + 216 BMI) men, (8780 + 244 BMI) women."""
    bmi = weight / (height_cm / 100) ** 2
    return 9270 * weight / ((6680 + 216 * bmi) if male else (8780 + 244 * bmi))


# --- families: rng -> (question, key text, 3 distractor texts, params, reasoning) ----------------
Item = tuple[str, str, list[str], dict[str, Any], str]


def _pick(rng: np.random.Generator, seq, k: int | None = None):
    seq = list(seq)
    if k is None:
        return seq[int(rng.integers(len(seq)))]
    return [seq[i] for i in rng.choice(len(seq), size=k, replace=False)]


def _fact_item(rng, table: dict, question: str, fmt: Callable[[Any], str], why: str) -> Item:
    subject = _pick(rng, table)
    key = table[subject]
    others = _pick(rng, sorted({v for v in table.values() if v != key}, key=str), 3)
    return (
        question.format(x=subject),
        fmt(key),
        [fmt(v) for v in others],
        {"subject": subject},
        why.format(x=subject, y=fmt(key)),
    )


def f_drug_class(rng) -> Item:
    return _fact_item(
        rng,
        DRUG_CLASS,
        "To which pharmacological class does {x} belong?",
        str,
        "{x} belongs to the class: {y}.",
    )


def f_antidote(rng) -> Item:
    return _fact_item(
        rng,
        ANTIDOTE,
        "What is the specific reversal agent or treatment for {x}?",
        str,
        "The specific reversal agent or treatment for {x} is {y}.",
    )


def f_mac(rng) -> Item:
    return _fact_item(
        rng,
        MAC,
        "What is the MAC of {x} in oxygen for a 40-year-old adult?",
        lambda v: f"{v:g}%",
        "The MAC of {x} at about age 40 is {y}.",
    )


def f_blood_gas(rng) -> Item:
    return _fact_item(
        rng,
        BLOOD_GAS,
        "What is the blood/gas partition coefficient of {x} at 37 C?",
        lambda v: f"{v:g}",
        "The blood/gas partition coefficient of {x} is {y}.",
    )


_VIGNETTES = {
    "fentanyl": "In the recovery room, a {age}-year-old patient given fentanyl has a respiratory rate of "
    "{rr}/min, "
    "pinpoint pupils and is hard to rouse.",
    "morphine": "A {age}-year-old patient on a morphine PCA is found with a respiratory rate of {rr}/min and "
    "pinpoint pupils.",
    "midazolam": "After midazolam sedation for endoscopy, a {age}-year-old patient remains unrousable with a "
    "respiratory rate of {rr}/min; no opioid was given.",
    "rocuronium": "At the end of laparoscopy, a {age}-year-old patient given rocuronium has a train-of-four "
    "count of 0 and a post-tetanic count of {ptc}.",
    "unfractionated heparin": "After cardiopulmonary bypass with unfractionated heparin, a {age}-year-old "
    "patient's activated clotting time is {act} s and heparin must be neutralised.",
    "dabigatran": "A {age}-year-old patient taking dabigatran needs emergency laparotomy within the hour.",
    "malignant hyperthermia": "During sevoflurane anaesthesia a {age}-year-old patient develops masseter "
    "rigidity, end-tidal CO2 of {etco2} mmHg and a temperature of 39.{t} C.",
    "local anaesthetic systemic toxicity": "Shortly after a bupivacaine nerve block, "
    "a {age}-year-old patient "
    "has a seizure followed by ventricular tachycardia.",
}


def f_vignette_antidote(rng) -> Item:
    subject = _pick(rng, _VIGNETTES)
    key = ANTIDOTE[subject]
    ctx = {
        "age": int(rng.integers(18, 80)),
        "rr": int(rng.integers(4, 8)),
        "ptc": int(rng.integers(1, 4)),
        "act": int(rng.integers(400, 600)),
        "etco2": int(rng.integers(70, 95)),
        "t": int(rng.integers(0, 9)),
    }
    stem = _VIGNETTES[subject].format(**ctx)
    stem = stem[0].upper() + stem[1:]
    others = _pick(rng, sorted({v for v in ANTIDOTE.values() if v != key}), 3)
    why = f"The picture is that of {subject}; its specific reversal agent or treatment is {key}."
    return f"{stem} Which drug is indicated?", key, others, {"subject": subject, **ctx}, why


_SUX_RISK = (
    "a 40% burn sustained 10 days ago",
    "a spinal cord injury 3 weeks ago",
    "Duchenne muscular dystrophy",
    "a serum potassium of 6.4 mmol/l",
)


def f_vignette_sux(rng) -> Item:
    risk = _pick(rng, _SUX_RISK)
    age = int(rng.integers(8, 70))
    q = (
        f"A {age}-year-old patient with {risk} needs rapid sequence induction. "
        "Which neuromuscular blocker should be avoided?"
    )
    why = f"With {risk}, succinylcholine can cause life-threatening hyperkalaemia, so it is avoided."
    return (
        q,
        "succinylcholine",
        ["rocuronium", "cisatracurium", "vecuronium"],
        {"risk": risk, "age": age},
        why,
    )


def _num(v: float, unit: str, digits: int = 0) -> str:
    return f"{v:.{digits}f} {unit}"


def f_mabl(rng) -> Item:
    who = _pick(rng, EBV_ML_KG)
    w = int(rng.integers(6, 12)) if who == "infant" else int(rng.integers(50, 100))
    hi = int(rng.integers(36, 46))
    hf = int(rng.integers(21, 30))
    ebv = w * EBV_ML_KG[who]
    key = ebv * (hi - hf) / hi
    wrong = [ebv * (hi - hf) / hf, ebv * hf / hi, w * 70 * (hi - hf) / hi]  # MABL, 70 ml/kg for all
    q = (
        f"An {who} weighing {w} kg has a haematocrit of {hi}%. Taking the lowest acceptable haematocrit as "
        f"{hf}% and an estimated blood volume of {EBV_ML_KG[who]} ml/kg, "
        "what is the maximum allowable blood loss?"
    )
    why = (
        f"EBV = {w} x {EBV_ML_KG[who]} = {ebv} ml. "
        f"MABL = EBV x (Hi - Hf) / Hi = {ebv} x ({hi} - {hf}) / {hi} "
        f"= {key:.0f} ml."
    )
    return (
        q,
        _num(key, "ml"),
        [_num(x, "ml") for x in wrong],
        {"who": who, "weight": w, "hi": hi, "hf": hf},
        why,
    )


def f_fluids(rng) -> Item:
    w = int(rng.integers(5, 40))
    h = int(rng.integers(4, 11))
    m = maintenance_421(w)
    key = m + m * h / 2
    wrong = [m + m * h, m * h / 2, 4 * w + 4 * w * h / 2]
    q = (
        f"A {w} kg child fasted for {h} hours before surgery. Using the 4-2-1 rule and replacing half of the "
        "fasting deficit in the first hour on top of maintenance, how much fluid is given in the first hour?"
    )
    why = (
        f"Maintenance by 4-2-1 = {m:g} ml/h; deficit = {m:g} x {h} = {m * h:g} ml; first hour = {m:g} + "
        f"{m * h:g}/2 = {key:g} ml."
    )
    return q, _num(key, "ml"), [_num(x, "ml") for x in wrong], {"weight": w, "hours": h}, why


def f_local_max(rng) -> Item:
    drug = _pick(rng, LA_MAX_MG_KG)
    adr = bool(rng.integers(2))
    w = int(rng.integers(40, 67))
    conc = _pick(rng, (1.0, 2.0) if drug == "lidocaine" else (0.25, 0.5))
    plain, with_adr = LA_MAX_MG_KG[drug]
    dose = with_adr if adr else plain
    other = plain if adr else with_adr
    key = dose * w / (conc * 10)
    wrong = [other * w / (conc * 10), dose * w / conc, dose * w / (conc * 100)]
    label = "with adrenaline (epinephrine)" if adr else "plain (without adrenaline)"
    q = (
        f"What is the maximum volume of {conc:g}% {drug} {label} for a {w} kg adult, taking {dose:g} mg/kg "
        "as the maximum dose?"
    )
    why = (
        f"{conc:g}% = {conc * 10:g} mg/ml. Maximum dose = {dose:g} x {w} = {dose * w:g} mg; volume = "
        f"{dose * w:g} / {conc * 10:g} = {key:.1f} ml."
    )
    params = {"drug": drug, "adrenaline": adr, "weight": w, "conc_pct": conc}
    return q, _num(key, "ml", 1), [_num(x, "ml", 1) for x in wrong], params, why


def f_bolus_volume(rng) -> Item:
    drug = _pick(rng, BOLUS)
    per_kg, unit, conc = BOLUS[drug]
    w = int(rng.integers(45, 110))
    key = per_kg * w / conc
    wrong = [per_kg * w / (conc / 10), per_kg * w / (conc * 10), per_kg * w / conc * 2]
    q = (
        f"A {w} kg patient is to receive {drug} {per_kg:g} {unit}/kg. The vial contains {conc:g} {unit}/ml. "
        "What volume is drawn up?"
    )
    why = (
        f"Dose = {per_kg:g} x {w} = {per_kg * w:g} {unit}; volume = {per_kg * w:g} / {conc:g} = {key:.1f} ml."
    )
    return q, _num(key, "ml", 1), [_num(x, "ml", 1) for x in wrong], {"drug": drug, "weight": w}, why


def _sex_body(rng) -> tuple[bool, int, int]:
    male = bool(rng.integers(2))
    h = int(rng.integers(165, 191)) if male else int(rng.integers(155, 181))
    bmi = float(rng.uniform(35, 48))
    return male, h, int(round(bmi * (h / 100) ** 2))


def f_ibw_rocuronium(rng) -> Item:
    male, h, w = _sex_body(rng)
    ibw = ibw_devine(h, male)
    key = 0.6 * ibw
    wrong = [0.6 * w, 0.6 * ibw_devine(h, not male), 1.2 * ibw]
    sex = "man" if male else "woman"
    q = (
        f"An obese {sex}, {h} cm tall and weighing {w} kg, needs rocuronium 0.6 mg/kg "
        "dosed on ideal body weight "
        "(Devine formula). What dose is given?"
    )
    why = (
        f"Devine IBW = {50 if male else 45.5} + 2.3 x ({h}/2.54 - 60) = {ibw:.1f} kg; dose = 0.6 x {ibw:.1f} "
        f"= {key:.1f} mg."
    )
    return (
        q,
        _num(key, "mg", 1),
        [_num(x, "mg", 1) for x in wrong],
        {"male": male, "height": h, "weight": w},
        why,
    )


def f_lbw_propofol(rng) -> Item:
    male, h, w = _sex_body(rng)
    lbw = lbw_janmahasatian(w, h, male)
    key = 2.0 * lbw
    wrong = [2.0 * w, 2.0 * ibw_devine(h, male), 2.0 * lbw_janmahasatian(w, h, not male)]
    sex = "man" if male else "woman"
    q = (
        f"An obese {sex}, {h} cm tall and weighing {w} kg, is induced with propofol "
        "2 mg/kg of lean body weight "
        "(Janmahasatian formula). What dose is given?"
    )
    bmi = w / (h / 100) ** 2
    why = (
        f"BMI = {bmi:.1f}; LBW = 9270 x {w} / ({'6680 + 216' if male else '8780 + 244'} x BMI) "
        f"= {lbw:.1f} kg; "
        f"dose = 2 x {lbw:.1f} = {key:.0f} mg."
    )
    return q, _num(key, "mg"), [_num(x, "mg") for x in wrong], {"male": male, "height": h, "weight": w}, why


FAMILIES: dict[int, dict[str, Callable]] = {
    1: {"drug_class": f_drug_class, "antidote": f_antidote, "mac": f_mac, "blood_gas": f_blood_gas},
    2: {"vignette_antidote": f_vignette_antidote, "vignette_succinylcholine": f_vignette_sux},
    3: {
        "mabl": f_mabl,
        "fluids_421": f_fluids,
        "local_anaesthetic_max": f_local_max,
        "bolus_volume": f_bolus_volume,
        "ibw_rocuronium": f_ibw_rocuronium,
        "lbw_propofol": f_lbw_propofol,
    },
}


def _item(family: Callable, rng: np.random.Generator) -> Item:
    """A draw of ``family`` whose 4 option texts are distinct (redrawn otherwise)."""
    while True:
        q, key, wrong, params, why = family(rng)
        if len({key, *wrong}) == 4:
            return q, key, wrong, params, why


def generate(n_per_level: int, seed: int, prefix: str = "bank") -> list[dict[str, Any]]:
    """``3 * n_per_level`` records (levels 1, 2, 3 in order); deterministic per ``seed``."""
    out = []
    for level, fams in FAMILIES.items():
        rng = np.random.default_rng([seed, level, 0 if prefix == "bank" else 1])
        names = list(fams)
        family_of = [names[i % len(names)] for i in rng.permutation(n_per_level)]
        positions = rng.permutation(np.arange(n_per_level) % 4)
        for i in range(n_per_level):
            q, key, wrong, params, why = _item(fams[family_of[i]], rng)
            order = [int(x) for x in rng.permutation(3)]
            opts = [wrong[j] for j in order]
            opts.insert(int(positions[i]), key)
            ls = letters(4)
            answer = ls[int(positions[i])]
            out.append(
                {
                    "id": f"{prefix}-L{level}-{i:04d}",
                    "choice_num": 4,
                    "answer": answer,
                    "level": level,
                    "en_question": q,
                    **{f"en_{c}": o for c, o in zip(ls, opts)},
                    "family": family_of[i],
                    "params": params,
                    "en_reasoning": f"{why} The answer is {answer}.",
                }
            )
    return out
