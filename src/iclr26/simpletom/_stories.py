"""Our own template-generated SimpleToM-style stories (NOT the authors' data set).

Each story states a piece of key information the main person cannot observe (an information
asymmetry in an everyday setting: a supermarket, a hospital, a school, an office, ...) and then what
the person does. Three questions follow, in the authors' record format: is the person aware of the
key information (mental state, ``_aware``; correct: No), what will they likely do next (behaviour,
``_action``; correct: the unaware action), and was that action reasonable (judgment, ``_judge``;
correct: Reasonable, since they could not know). Answer order is randomised per record (seeded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import check_int


@dataclass(frozen=True)
class _Scenario:
    slug: str
    setting: str
    story_sentence: str  # what {X} does; {X} is the person
    unaware_action: str  # the correct behaviour prediction
    variants: tuple[tuple[str, str], ...]  # (key information, the action a person who knew would take)


_SCENARIOS: tuple[_Scenario, ...] = (
    _Scenario(
        "milk_carton",
        "supermarket",
        "{X} takes the carton from the shelf and walks to the checkout.",
        "pay for the milk",
        (
            ("The sealed carton of milk has gone sour.", "complain that the milk is sour"),
            ("The sealed carton of milk has a dead fly floating in it.", "report the dead fly"),
            (
                "The sealed carton of milk was contaminated with bleach at the factory.",
                "warn the staff about the bleach",
            ),
        ),
    ),
    _Scenario(
        "egg_carton",
        "supermarket",
        "{X} picks up the closed egg carton and puts it in the shopping cart.",
        "buy the eggs",
        (
            (
                "One of the eggs inside the closed carton is cracked.",
                "swap the carton for one without cracks",
            ),
            ("All the eggs inside the closed carton are rotten.", "return the rotten eggs to the shelf"),
        ),
    ),
    _Scenario(
        "cereal_box",
        "supermarket",
        "{X} grabs the cereal box and heads to the cashier.",
        "pay for the cereal",
        (
            ("The sealed cereal box has a few stale flakes at the bottom.", "ask for a fresher box"),
            ("The sealed cereal box has small beetles crawling inside.", "report the beetles to the manager"),
        ),
    ),
    _Scenario(
        "juice_bottle",
        "grocery store",
        "{X} places the bottle of juice on the counter to pay.",
        "pay for the juice",
        (
            ("The opaque bottle of juice has mold growing inside.", "refuse the moldy juice"),
            ("The opaque bottle of juice has a shard of glass inside.", "warn the cashier about the glass"),
        ),
    ),
    _Scenario(
        "blood_chart",
        "hospital",
        "Dr. {X} reads the chart before starting the transfusion.",
        "go ahead with the transfusion",
        (
            (
                "A clerk typed the wrong blood type into the patient's chart.",
                "recheck the patient's blood type",
            ),
            (
                "A clerk swapped this patient's chart with another patient's chart.",
                "stop and find the right chart",
            ),
        ),
    ),
    _Scenario(
        "clinic_thermometer",
        "clinic",
        "Nurse {X} takes a child's temperature and reads a normal value.",
        "tell the parents the child has no fever",
        (
            ("The clinic's thermometer reads one degree too low.", "measure again with another thermometer"),
            (
                "The clinic's thermometer is broken and always shows a normal value.",
                "throw away the broken thermometer",
            ),
        ),
    ),
    _Scenario(
        "pill_bottle",
        "pharmacy",
        "{X} buys the bottle of vitamins and walks home.",
        "take the vitamins",
        (
            ("The sealed bottle of vitamins expired last month.", "return the expired vitamins"),
            (
                "Someone replaced the vitamins in the sealed bottle with sleeping pills.",
                "call the police about the swapped pills",
            ),
        ),
    ),
    _Scenario(
        "school_backpack",
        "school",
        "{X}, the teacher, sees Tom sit down at his desk with his backpack.",
        "start the lesson as usual",
        (
            ("Tom has a pet hamster hidden in his closed backpack.", "ask Tom to take the hamster outside"),
            ("Tom has stolen exam answers hidden in his closed backpack.", "take away the exam answers"),
        ),
    ),
    _Scenario(
        "copied_homework",
        "school",
        "{X}, the teacher, collects the homework from Anna.",
        "grade Anna's homework as usual",
        (
            ("Anna copied her homework from her older sister's old notebook.", "talk to Anna about copying"),
            ("Anna paid a stranger online to do all of her homework.", "report Anna for cheating"),
        ),
    ),
    _Scenario(
        "coffee_machine",
        "office",
        "{X} pours a cup from the office coffee machine and sits down.",
        "drink the coffee",
        (
            (
                "This morning the coffee machine's water tank was filled with descaling vinegar.",
                "pour the coffee away",
            ),
            (
                "This morning the coffee machine's water tank was filled with cleaning fluid.",
                "warn colleagues about the cleaning fluid",
            ),
        ),
    ),
    _Scenario(
        "phishing_email",
        "office",
        "{X} opens the email that looks like it comes from the bank.",
        "click the link to log in",
        (
            ("The email is a scam that steals passwords.", "delete the scam email"),
            (
                "The email's link installs a virus that locks every office computer.",
                "report the email to the IT team",
            ),
        ),
    ),
    _Scenario(
        "shared_folder",
        "office",
        "{X} walks into the meeting room to present from the shared folder.",
        "start the presentation from the shared folder",
        (
            ("Last night a colleague moved the slides out of the shared folder.", "bring a backup copy"),
            (
                "Last night the server holding the shared folder crashed and lost every file.",
                "cancel the presentation",
            ),
        ),
    ),
    _Scenario(
        "used_car",
        "car dealership",
        "{X} test-drives the shiny used car and smiles at the dealer.",
        "buy the car",
        (
            ("The car's air conditioning only blows warm air.", "ask for a lower price"),
            ("The car's brakes are worn out, which the dealer has hidden.", "walk away from the deal"),
        ),
    ),
    _Scenario(
        "apartment_tour",
        "apartment",
        "{X} tours the freshly painted apartment with the landlord.",
        "sign the lease",
        (
            ("The landlord painted over a damp patch behind the wardrobe.", "ask about the damp patch"),
            (
                "The landlord painted over black mold spreading behind the walls.",
                "refuse to rent the apartment",
            ),
        ),
    ),
    _Scenario(
        "dropped_steak",
        "restaurant",
        "The waiter brings the steak to {X}'s table.",
        "eat the steak",
        (
            (
                "In the kitchen, the cook dropped the steak on the floor before plating it.",
                "send the steak back",
            ),
            ("In the kitchen, a rat nibbled the steak before it was plated.", "complain about the rat"),
        ),
    ),
    _Scenario(
        "peanut_cake",
        "bakery",
        "{X}, who is allergic to peanuts, buys the cake labelled nut-free.",
        "eat a slice of the cake",
        (
            ("The baker used peanut oil in the cake by mistake.", "avoid eating the cake"),
            ("The cake is full of ground peanuts although its label says nut-free.", "return the cake"),
        ),
    ),
    _Scenario(
        "treadmill",
        "gym",
        "{X} steps onto the treadmill and starts to jog.",
        "keep running on the treadmill",
        (
            ("A bolt under the treadmill's cover is loose.", "tell the staff about the bolt"),
            (
                "The treadmill's motor under the cover is sparking and could catch fire.",
                "get off the treadmill at once",
            ),
        ),
    ),
    _Scenario(
        "library_book",
        "library",
        "{X} takes the book to the desk to borrow it.",
        "borrow the book",
        (
            ("The book has ten pages missing in the middle.", "ask for another copy"),
            ("Every chapter after the first is missing from the book's binding.", "pick a different book"),
        ),
    ),
    _Scenario(
        "concert_ticket",
        "stadium",
        "{X} arrives at the stadium gate holding the ticket bought online.",
        "hand the ticket to the gate attendant",
        (
            ("The ticket was sold to two people at once.", "ask the box office for help"),
            ("The ticket is a forgery made by a scammer.", "report the scammer to the police"),
        ),
    ),
    _Scenario(
        "hotel_bed",
        "hotel",
        "{X} checks into the room and unpacks next to the bed.",
        "go to sleep in the bed",
        (
            ("The sheets under the bedspread were not changed after the last guest.", "ask for clean sheets"),
            ("Bedbugs are living under the mattress.", "ask for a different room"),
        ),
    ),
    _Scenario(
        "necklace",
        "jewellery shop",
        "{X} admires the necklace the jeweller presents as real diamonds.",
        "buy the necklace",
        (
            ("The stones in the necklace are cheap crystals.", "refuse to pay the diamond price"),
            ("The necklace was stolen from a museum last week.", "call the police about the stolen necklace"),
        ),
    ),
    _Scenario(
        "moved_meeting",
        "office",
        "{X} walks to room 101 for the noon meeting.",
        "wait in room 101 for the meeting",
        (
            (
                "The meeting was moved to room 305 in a message that never reached {X}'s phone.",
                "go to room 305",
            ),
            ("The meeting was cancelled in a message that never reached {X}'s phone.", "go back to work"),
        ),
    ),
    _Scenario(
        "laptop_password",
        "office",
        "{X} sits down at a colleague's laptop to fix a typo in the report.",
        "try to open the report on the laptop",
        (
            (
                "The colleague changed the laptop's password this morning.",
                "ask the colleague for the password",
            ),
            (
                "The colleague's laptop was wiped clean by the IT team this morning.",
                "ask the colleague where the report is now",
            ),
        ),
    ),
    _Scenario(
        "water_bottle",
        "train station",
        "{X} buys the sealed-looking bottle of water at the kiosk and opens it.",
        "drink the water",
        (
            ("The bottle was refilled with tap water and resealed.", "ask for a refund"),
            ("The bottle was refilled with water from a polluted pond and resealed.", "throw the water away"),
        ),
    ),
)

_NAMES = ("Mary", "John", "Aisha", "Carlos", "Mei", "Olu", "Sara", "Ivan", "Priya", "Lukas", "Amara", "Kenji")


def n_embedded_stories() -> int:
    """How many distinct (scenario, key information) stories the templates give."""
    return sum(len(s.variants) for s in _SCENARIOS)


def generate_stories(n_stories: int | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """Our template-generated SimpleToM-style records: three per story (``_aware``, ``_action``,
    ``_judge``), in the authors' format (``id``, ``story``, ``question``, ``choices``, ``answerKey``)
    plus ``setting`` and ``source`` ("iclr26 templates, not the authors' data").

    Parameters
    ----------
    n_stories: how many stories (default: all :func:`n_embedded_stories`); a larger number cycles
        the scenarios with other person names.
    seed: picks the story order, names and answer order.

    The first ``k`` stories do not depend on ``n_stories``: ``generate_stories(25)`` is
    ``generate_stories(24)`` plus one story (same ids, same texts, same answer positions). Answer
    positions are balanced in pairs: for each question type, stories ``2j`` and ``2j + 1`` have the
    correct answer in opposite positions (which one first is drawn from ``seed``), so any prefix has
    the correct answer first in half of its records, give or take one.
    """
    seed = check_int(seed, "seed")
    total = n_embedded_stories()
    n = total if n_stories is None else check_int(n_stories, "n_stories", minimum=1)
    base = [(sc, k) for sc in _SCENARIOS for k in range(len(sc.variants))]
    order = np.random.default_rng([seed, 2026]).permutation(len(base))
    n_pairs = (n + 1) // 2
    first = {
        t: np.random.default_rng([seed, 2026, j]).random(max(n_pairs, 1)) < 0.5  # prefix-stable draws
        for j, t in enumerate(("aware", "action", "judge"))
    }
    flips = {t: [bool(first[t][i // 2]) != bool(i % 2) for i in range(n)] for t in first}
    records: list[dict[str, Any]] = []
    for i in range(n):
        sc, k = base[order[i % total]]
        rnd = i // total
        name = _NAMES[(int(order[i % total]) + 5 * rnd + seed) % len(_NAMES)]
        info, aware_action = (s.replace("{X}", name) for s in sc.variants[k])
        sentence = sc.story_sentence.replace("{X}", name)
        story = f"{info} {sentence}"
        unaware = sc.unaware_action
        sid = f"{sc.slug}_sev{k + 1}" + (f"_r{rnd}" if rnd else "")
        meta = {"setting": sc.setting, "source": "iclr26 templates (not the authors' SimpleToM data)"}
        records.append(
            _record(
                f"{sid}_aware",
                story,
                f'Is {name} likely to be aware that "{info}"?',
                "No",
                "Yes",
                bool(flips["aware"][i]),
                meta,
            )
        )
        records.append(
            _record(
                f"{sid}_action",
                story,
                f"What will {name} likely do next?",
                unaware,
                aware_action,
                bool(flips["action"][i]),
                meta,
            )
        )
        judge_q = (
            f'Next, {name} "{unaware}" and not "{aware_action}". '
            f"The behavior of {name} can be best described as: "
        )
        records.append(
            _record(
                f"{sid}_judge", story, judge_q, "Reasonable", "Not reasonable", bool(flips["judge"][i]), meta
            )
        )
    return records


def _record(rid: str, story: str, question: str, correct: str, wrong: str, correct_first: bool, meta: dict):
    texts = [correct, wrong] if correct_first else [wrong, correct]
    return {
        "id": rid,
        "story": story,
        "question": question,
        "choices": {"text": texts, "label": ["A", "B"]},
        "answerKey": "A" if correct_first else "B",
        **meta,
    }
