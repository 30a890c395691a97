"""Synthetic patient profiles: the clinical facts behind each chart and the true answers.

A profile is the single source of truth for one patient. :mod:`.charts` renders its notes and
:func:`truths` derives the canonical answer of every criterion from the same facts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from tools.sampledata.skill_files import INSULINS, SGLT2

#: A piece of prose plus the anchor tags it supports (see :class:`tools.sampledata.charts.Doc`).
Snippet = tuple[str, tuple[str, ...]]

FIRST_F = ["Ada", "Bea", "Cleo", "Dara", "Elsie", "Fern", "Greta", "Hazel", "Ines", "Juno",
           "Kit", "Lorna", "Mae", "Nell", "Opal", "Pia", "Rosa", "Tilde"]
FIRST_M = ["Abel", "Bram", "Cyril", "Dov", "Emil", "Flint", "Gus", "Hal", "Ivo", "Jory",
           "Kurt", "Lev", "Milo", "Ned", "Otis", "Pim", "Rolf", "Tobin"]
LAST = ["Ashgrove", "Brindle", "Calloway", "Dunmore", "Elsworth", "Fairbank", "Garrow",
        "Hollins", "Ivers", "Jessop", "Kettering", "Larkspur", "Merriden", "Northcote",
        "Oakhurst", "Pennick", "Quarry", "Redfern", "Stanway", "Thistle", "Upwood", "Vance",
        "Whitlow", "Yardley"]
CLINICIANS = {
    "pcp": ["R. Okafor, MD (Internal Medicine)", "L. Brandt, DO (Family Medicine)",
            "S. Iqbal, MD (Internal Medicine)"],
    "nephro": ["M. Castellanos, MD (Nephrology)", "T. Whitcombe, MD (Nephrology)"],
    "endo": ["H. Lindqvist, MD (Endocrinology)", "P. Adeyemi, MD (Endocrinology)"],
    "eye": ["J. Moreau, MD (Ophthalmology)", "K. Tanaka, OD (Optometry)"],
    "dc": ["A. Varga, MD (Hospital Medicine)", "N. Osei, MD (Hospital Medicine)"],
    "ed": ["C. Dunleavy, MD (Emergency Medicine)"],
    "ortho": ["B. Halloran, MD (Orthopedics)"],
    "labs": ["Synthetic Regional Laboratory"],
    "medlist": ["Pharmacy medication reconciliation"],
    "gyn": ["E. Fontaine, MD (Obstetrics and Gynecology)"],
}


@dataclass(frozen=True)
class Lab:
    when: date
    value: float
    setting: str = "outpatient"


@dataclass(frozen=True)
class Med:
    """One medication. ``key`` is the list-criterion item (glucose-lowering) or a short name."""

    key: str
    display: str
    klass: str = "other"  # "dm", "acearb" or "other"
    start: date | None = None
    stop: date | None = None
    stop_reason: str = ""
    inpatient_only: bool = False

    def current_at(self, when: date) -> bool:
        if self.inpatient_only:
            return False
        started = self.start is None or self.start <= when
        return started and (self.stop is None or self.stop > when)


@dataclass(frozen=True)
class Trap:
    """A plausible wrong answer: which agent falls for it, the raw answer, its evidence tag."""

    agent: str
    value: Any
    tag: str | None
    why: str
    #: Adjudication class when the disagreement is not a plain agent error.
    classification: str | None = None


@dataclass
class NotePlan:
    kind: str
    when: date
    #: Free prose slots filled by the archetype: "hpi", "pmh", "ap", "course", "impression".
    slots: dict[str, list[Snippet]] = field(default_factory=dict)
    title: str = ""


@dataclass
class Profile:
    pid: str
    archetype: str
    name: str
    sex: str
    age: int
    mrn: str
    index: date
    dm: str  # type_2 type_1 other gestational_hx prediabetes steroid unknown
    dx_date: date | None = None
    dx_precision: str | None = None  # "day" or "year"
    hba1c: list[Lab] = field(default_factory=list)
    egfr: list[Lab] = field(default_factory=list)
    uacr: list[Lab] = field(default_factory=list)
    ckd: bool | None = None
    meds: list[Med] = field(default_factory=list)
    retino: str | None = None  # npdr pdr none htn_only
    family: list[Snippet] = field(default_factory=list)
    social: str = ""
    notes: list[NotePlan] = field(default_factory=list)
    traps: dict[str, Trap] = field(default_factory=dict)
    #: Cells whose truth is a judgement call, with the adjudication classification.
    ambiguity: dict[str, str] = field(default_factory=dict)
    #: Overrides of the derived truth (ambiguous cells adjudicated to a value).
    truth_override: dict[str, Any] = field(default_factory=dict)
    #: Extra anchors the renderer cannot infer, e.g. {"insulin_use": "dc"}.
    flags: set[str] = field(default_factory=set)
    date_style: str = "us"

    def fmt(self, d: date) -> str:
        """A date as this patient's clinicians write it."""
        if self.date_style == "iso":
            return d.isoformat()
        if self.date_style == "long":
            return f"{d:%B} {d.day}, {d.year}"
        return f"{d:%m/%d/%Y}"

    def current_meds(self) -> list[Med]:
        return [m for m in self.meds if m.current_at(self.index)]


def g_category(egfr: float) -> str:
    for bound, cat in ((90, "G1"), (60, "G2"), (45, "G3a"), (30, "G3b"), (15, "G4")):
        if egfr >= bound:
            return cat
    return "G5"


def a_category(uacr: float) -> str:
    return "A1" if uacr < 30 else ("A2" if uacr <= 300 else "A3")


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else v


def truths(p: Profile) -> dict[str, Any]:
    """The true answer of every criterion, as a raw JSON-ready value in the house style."""
    cur = p.current_meds()
    dm_keys = sorted(m.key for m in cur if m.klass == "dm")
    t: dict[str, Any] = {
        "t2dm_dx": {"type_2": True, "unknown": "no_info"}.get(p.dm, False),
        "diabetes_type": {"type_2": "type_2", "type_1": "type_1", "other": "other",
                          "gestational_hx": "gestational"}.get(p.dm, "no_info"),
        "dm_dx_date": p.dx_date.isoformat() if p.dx_date and p.dx_precision == "day" else "no_info",
        "latest_hba1c": _num(p.hba1c[-1].value) if p.hba1c else "no_info",
        "latest_egfr": _num(p.egfr[-1].value) if p.egfr else "no_info",
        "ckd_dx": "no_info" if p.ckd is None else p.ckd,
        "uacr_category": a_category(p.uacr[-1].value) if p.uacr else "no_info",
        "current_dm_meds": dm_keys,
        "on_sglt2i": "yes" if any(k in SGLT2 for k in dm_keys) else "no",
        "ace_arb_use": "yes" if any(m.klass == "acearb" for m in cur) else "no",
        "insulin_use": any(k in INSULINS for k in dm_keys),
        "diabetic_retinopathy": {"npdr": True, "pdr": True, "none": False,
                                 "htn_only": False}.get(p.retino or "", "no_info"),
    }
    if p.ckd:
        t["ckd_stage"] = g_category(p.egfr[-1].value)
    t.update(p.truth_override)
    return t


def base_profile(rng: random.Random, pid: str, archetype: str, sex: str, dm: str) -> Profile:
    first = rng.choice(FIRST_F if sex == "F" else FIRST_M)
    index = date(2024, 1, 8) + timedelta(days=rng.randint(0, 110))
    return Profile(
        pid=pid,
        archetype=archetype,
        name=f"{first} {rng.choice(LAST)}",
        sex=sex,
        age=rng.randint(48, 79),
        mrn=f"SYN-{rng.randint(100000, 999999)}",
        index=index,
        dm=dm,
        date_style=rng.choice(["us", "iso", "long"]),
    )
