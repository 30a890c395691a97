"""Render a profile's notes as realistic plain-text clinical documents with evidence anchors.

Every piece of text that can support an answer is added with tags; :class:`Doc` records its
exact ``[start, end)`` character offsets so answers can quote it verbatim. Notes are ASCII, so
character offsets equal byte offsets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from tools.sampledata.profiles import CLINICIANS, Lab, Med, NotePlan, Profile, g_category

#: Allowed size of one note in bytes (ASCII, so also in characters).
NOTE_BYTES = (1024, 4096)
LAB_NAMES = {"hba1c": "Hemoglobin A1c", "egfr": "eGFR (CKD-EPI 2021)",
             "uacr": "Urine albumin/creatinine ratio"}
LAB_UNITS = {"hba1c": "%", "egfr": "mL/min/1.73m2", "uacr": "mg/g"}
LAB_FIELDS = {"hba1c": "latest_hba1c", "egfr": "latest_egfr", "uacr": "uacr_category"}
TITLES = {"pcp": "PRIMARY CARE PROGRESS NOTE", "nephro": "NEPHROLOGY CLINIC NOTE",
          "endo": "ENDOCRINOLOGY CLINIC NOTE", "labs": "LABORATORY REPORT",
          "medlist": "MEDICATION RECONCILIATION", "eye": "DILATED EYE EXAMINATION",
          "dc": "DISCHARGE SUMMARY", "ed": "EMERGENCY DEPARTMENT NOTE",
          "ortho": "ORTHOPEDIC CLINIC NOTE", "gyn": "GYNECOLOGY ANNUAL VISIT"}


@dataclass
class Anchor:
    tag: str
    start: int
    end: int


@dataclass
class Doc:
    parts: list[str] = field(default_factory=list)
    size: int = 0
    anchors: list[Anchor] = field(default_factory=list)

    def add(self, text: str, tags: tuple[str, ...] = ()) -> None:
        for tag in tags:
            self.anchors.append(Anchor(tag, self.size, self.size + len(text)))
        self.parts.append(text)
        self.size += len(text)

    def line(self, text: str = "", tags: tuple[str, ...] = (), prefix: str = "") -> None:
        self.add(prefix)
        self.add(text, tags)
        self.add("\n")

    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class Note:
    note_id: str
    kind: str
    when: date
    text: str
    anchors: list[Anchor]


def _lab_value(kind: str, lab: Lab) -> str:
    v = lab.value
    shown = f"{v:.1f}" if kind == "hba1c" else f"{v:g}"
    return f"{shown} {LAB_UNITS[kind]}"


def _lab_tags(p: Profile, kind: str, lab: Lab) -> tuple[str, ...]:
    series: list[Lab] = getattr(p, kind)
    tags = [f"{kind}@{lab.when.isoformat()}"]
    if lab is series[-1]:
        tags.append(LAB_FIELDS[kind])
        if kind == "egfr" and p.ckd:
            tags.append("ckd_stage")
    if kind == "egfr" and "ckd_from_labs" in p.flags and lab.value < 60:
        tags.append("ckd_dx")
    return tuple(tags)


def _creatinine(p: Profile, egfr: float) -> float:
    base = 0.9 if p.sex == "M" else 0.7
    return round(base * (92.0 / max(egfr, 5.0)) ** 0.83, 2)


def _med_lines(doc: Doc, p: Profile, when: date, header: str) -> None:
    doc.line(header)
    first = True
    for med in p.meds:
        if not med.current_at(when):
            continue
        tags: list[str] = []
        if med.klass == "dm":
            tags.append(f"med:{med.key}")
        if med.klass == "acearb":
            tags.append("acearb")
        if first:
            tags.append("medlist")
            first = False
        doc.line(med.display, tuple(tags), prefix="- ")
    if first:
        doc.line("No regular medications.", ("medlist",), prefix="- ")


def _stopped_lines(doc: Doc, p: Profile, when: date) -> None:
    stopped = [m for m in p.meds if m.stop and m.stop <= when and not m.inpatient_only
               and (when - m.stop).days < 400]
    doc.line("RECENTLY DISCONTINUED")
    if not stopped:
        doc.line("None in the last 12 months.", prefix="- ")
    for med in stopped:
        assert med.stop is not None
        tags = [f"stopped:{med.key}"] + (["stopped:acearb"] if med.klass == "acearb" else [])
        doc.line(f"{med.display} - stopped {p.fmt(med.stop)} ({med.stop_reason})", tuple(tags),
                 prefix="- ")


def _slot(doc: Doc, plan: NotePlan, name: str, prefix: str = "") -> None:
    for text, tags in plan.slots.get(name, []):
        doc.line(text, tags, prefix=prefix)


def _recent_labs(doc: Doc, p: Profile, when: date) -> None:
    doc.line("RESULTS REVIEWED")
    shown = False
    for kind in ("hba1c", "egfr", "uacr"):
        for lab in getattr(p, kind):
            if when - timedelta(days=45) <= lab.when <= when and lab.setting == "outpatient":
                doc.line(f"{LAB_NAMES[kind]} {_lab_value(kind, lab)} on {p.fmt(lab.when)}",
                         _lab_tags(p, kind, lab), prefix="- ")
                shown = True
    if not shown:
        doc.line("No new laboratory results since the last visit.", prefix="- ")


def _ros_exam(doc: Doc, p: Profile, rng: random.Random, injury: bool = False) -> None:
    doc.line("REVIEW OF SYSTEMS")
    doc.line("Constitutional: Denies fever, chills or unintended weight loss.")
    doc.line(rng.choice(["Cardiovascular: Denies chest pain, palpitations or orthopnea.",
                         "Cardiovascular: No chest pain or exertional dyspnea. Denies syncope."]))
    doc.line("Respiratory: Denies cough or shortness of breath.")
    doc.line(rng.choice(["Genitourinary: Denies dysuria, hematuria or foamy urine.",
                         "Genitourinary: No dysuria. Nocturia once nightly."]))
    doc.line(rng.choice(["Neurological: Denies numbness or tingling in the feet.",
                         "Neurological: Mild tingling of the toes at night; no weakness."]))
    doc.line("Eyes: Denies blurred vision or floaters.")
    doc.line()
    doc.line("PHYSICAL EXAM")
    sbp, dbp = rng.randint(118, 152), rng.randint(68, 92)
    doc.line(f"Vitals: BP {sbp}/{dbp} mmHg, HR {rng.randint(58, 92)}, "
             f"Temp 36.{rng.randint(4, 9)} C, BMI {rng.randint(240, 380) / 10:.1f} kg/m2")
    doc.line("General: Alert, well-appearing, in no acute distress.")
    doc.line("Cardiac: Regular rate and rhythm; no murmurs, rubs or gallops.")
    doc.line("Lungs: Clear to auscultation bilaterally; no wheezes or crackles.")
    if injury:
        doc.line("Right ankle: swelling and tenderness over the lateral malleolus; "
                 "neurovascularly intact.")
        return
    doc.line(rng.choice(["Extremities: No edema. Monofilament sensation intact bilaterally.",
                         "Extremities: Trace ankle edema. Monofilament sensation intact.",
                         "Extremities: No edema; pedal pulses 2+; no foot ulcers."]))


def _header(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    doc.line("SYNTHETIC TEST RECORD - generated for software testing; not a real patient.")
    doc.line(plan.title or TITLES[plan.kind])
    doc.line(f"Patient: {p.name}    MRN: {p.mrn}    Sex: {p.sex}    Age: {p.age}")
    doc.line(f"Date of service: {plan.when.isoformat()}    "
             f"Author: {rng.choice(CLINICIANS[plan.kind])}")
    doc.line()


def _history(doc: Doc, plan: NotePlan) -> None:
    """The two sections every clinic and ED note opens with."""
    doc.line("HISTORY OF PRESENT ILLNESS")
    _slot(doc, plan, "hpi")
    doc.line()
    doc.line("PAST MEDICAL HISTORY")
    _slot(doc, plan, "pmh", prefix="- ")
    doc.line()


def _clinic_note(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    _history(doc, plan)
    if plan.kind in ("pcp", "endo", "gyn"):
        doc.line("FAMILY HISTORY")
        for text, tags in p.family:
            doc.line(text, tags, prefix="- ")
        doc.line()
        doc.line("SOCIAL HISTORY")
        doc.line(p.social)
        doc.line()
    _med_lines(doc, p, plan.when, "CURRENT MEDICATIONS")
    doc.line()
    _ros_exam(doc, p, rng)
    doc.line()
    _recent_labs(doc, p, plan.when)
    _slot(doc, plan, "results", prefix="- ")
    doc.line()
    doc.line("ASSESSMENT AND PLAN")
    for i, (text, tags) in enumerate(plan.slots.get("ap", []), start=1):
        doc.line(text, tags, prefix=f"{i}. ")
    doc.line(f"Return visit in {rng.choice([3, 4, 6])} months, sooner if needed.")


def _labs_note(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    fasting = "no" if any(n.kind == "ed" and n.when == plan.when for n in p.notes) else "yes"
    doc.line(f"Collected: {plan.when.isoformat()} 07:{rng.randint(10, 55)}    "
             f"Received: {plan.when.isoformat()} 09:{rng.randint(10, 55)}    Fasting: {fasting}")
    doc.line("Ordering clinician: see encounter")
    doc.line()
    doc.line("CHEMISTRY")
    doc.line(f"Sodium: {rng.randint(136, 143)} mmol/L (ref 135-145)")
    k = 6.1 if "hyperkalemia" in p.flags else rng.randint(39, 50) / 10
    doc.line(f"Potassium: {k:.1f} mmol/L (ref 3.5-5.1)")
    doc.line(f"Chloride: {rng.randint(99, 107)} mmol/L (ref 98-107)")
    doc.line(f"CO2: {rng.randint(21, 28)} mmol/L (ref 22-29)")
    egfr = [x for x in p.egfr if x.when == plan.when]
    if egfr:
        doc.line(f"BUN: {rng.randint(12, 38)} mg/dL (ref 7-20)")
        doc.line(f"Creatinine: {_creatinine(p, egfr[0].value):.2f} mg/dL")
        lab = egfr[0]
        flag = " [L]" if lab.value < 60 else ""
        doc.line(f"{LAB_NAMES['egfr']}: {_lab_value('egfr', lab)}{flag} (ref >=60)",
                 _lab_tags(p, "egfr", lab))
    _slot(doc, plan, "chem")
    lo, hi = {"prediabetes": (100, 124), "type_2": (112, 176), "type_1": (96, 210),
              "other": (110, 190)}.get(p.dm, (76, 98))
    doc.line(f"Glucose: {rng.randint(lo, hi)} mg/dL (ref 70-99)")
    doc.line(f"Calcium: {rng.randint(88, 101) / 10:.1f} mg/dL (ref 8.6-10.3)")
    doc.line()
    doc.line("HEMATOLOGY")
    doc.line(f"WBC: {rng.randint(48, 96) / 10:.1f} x10^3/uL (ref 4.0-11.0)")
    hgb = rng.randint(98, 118) if p.ckd and p.egfr[-1].value < 45 else rng.randint(121, 152)
    doc.line(f"Hemoglobin: {hgb / 10:.1f} g/dL (ref 12.0-16.0)")
    doc.line(f"Platelets: {rng.randint(170, 360)} x10^3/uL (ref 150-400)")
    doc.line()
    for kind, section, ref in (("hba1c", "GLYCEMIC", "ref 4.0-5.6 %"),
                               ("uacr", "URINE", "ref <30 mg/g")):
        labs = [x for x in getattr(p, kind) if x.when == plan.when]
        if labs:
            doc.line(section)
            doc.line(f"{LAB_NAMES[kind]}: {_lab_value(kind, labs[0])} ({ref})",
                     _lab_tags(p, kind, labs[0]))
            doc.line()
    doc.line("PRIOR RESULTS")
    prior = False
    for kind in ("hba1c", "egfr", "uacr"):
        for lab in getattr(p, kind):
            if lab.when < plan.when and lab.setting == "outpatient":
                doc.line(f"{p.fmt(lab.when)}: {LAB_NAMES[kind]} {_lab_value(kind, lab)}",
                         _lab_tags(p, kind, lab), prefix="- ")
                prior = True
    if not prior:
        doc.line("No prior results on file.", prefix="- ")
    doc.line()
    doc.line("Results verified electronically. Reference ranges are laboratory specific.")
    doc.line("eGFR calculated with the race-free CKD-EPI 2021 creatinine equation.")
    doc.line("HbA1c by HPLC, NGSP certified; results may be unreliable with hemoglobin variants,")
    doc.line("recent transfusion or shortened red cell survival. Critical values are phoned to")
    doc.line("the ordering clinician and documented.")


def _medlist_note(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    doc.line("Source: patient interview, pharmacy fill history and prior medication list.")
    doc.line(f"Preferred pharmacy: Synthetic Community Pharmacy #{rng.randint(100, 999)}")
    doc.line()
    _med_lines(doc, p, plan.when, "ACTIVE OUTPATIENT MEDICATIONS")
    doc.line()
    _stopped_lines(doc, p, plan.when)
    doc.line()
    _slot(doc, plan, "notes")
    doc.line("ALLERGIES")
    doc.line(rng.choice(["No known drug allergies.", "Sulfa antibiotics (rash).",
                         "Penicillin (hives)."]), prefix="- ")
    doc.line()
    doc.line("Reconciliation completed with the patient, who confirms taking medications as")
    doc.line("listed. Adherence aids reviewed; patient uses a weekly pill organizer. Any")
    doc.line("over-the-counter supplements were reviewed for interactions; none significant.")
    doc.line("Patient instructed to bring all medication bottles to the next visit.")
    doc.line("Reviewed the indication, dose and common side effects of each active medication;")
    doc.line("the patient verbalized understanding. Updated list shared with the primary care")
    doc.line("clinician and the preferred pharmacy.")


def _eye_note(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    doc.line("Reason for visit: annual diabetic eye examination.")
    doc.line("Ocular history: " + ("panretinal photocoagulation OU in prior years."
                                  if p.retino == "pdr" else "no prior ocular surgery or laser."))
    doc.line("Current ocular medications: none. Wears bifocals for reading.")
    doc.line(f"Visual acuity (cc): OD 20/{rng.choice([20, 25, 30])}, "
             f"OS 20/{rng.choice([20, 25, 30, 40])}")
    doc.line(f"Intraocular pressure: OD {rng.randint(12, 19)}, OS {rng.randint(12, 19)} mmHg")
    doc.line("Pupils dilated with tropicamide 1% and phenylephrine 2.5%.")
    doc.line("Anterior segment: lids and lashes normal; cornea clear; early nuclear sclerosis OU.")
    doc.line()
    doc.line("DILATED FUNDUS EXAMINATION")
    doc.line("Optic nerve: cup-to-disc ratio 0.3 OU, healthy rims.")
    findings = {
        "npdr": ("Scattered dot-blot hemorrhages and microaneurysms in the posterior pole OU; "
                 "no neovascularization."),
        "pdr": ("Panretinal photocoagulation scars OU; fibrovascular tissue along the superior "
                "arcade OS without traction."),
        "none": "No microaneurysms, hemorrhages or hard exudates in either eye.",
        "htn_only": "Arteriolar narrowing with arteriovenous nicking OU.",
    }[p.retino or "none"]
    trap = ("diabetic_retinopathy!trap",) if p.retino == "htn_only" else ()
    doc.line(f"Retina: {findings}", trap)
    doc.line("Macula: flat, no clinically significant macular edema OU.")
    doc.line("Periphery: attached 360 degrees OU.")
    doc.line(f"OCT macula: central subfield thickness {rng.randint(248, 280)} microns OD and "
             f"{rng.randint(248, 280)} microns OS; no intraretinal or subretinal fluid.")
    doc.line()
    doc.line("IMPRESSION")
    _slot(doc, plan, "impression", prefix="- ")
    doc.line()
    doc.line("PLAN")
    doc.line("Letter sent to the primary care clinician. Continue glycemic and blood pressure")
    doc.line(f"control. Repeat dilated examination in {rng.choice([6, 12])} months.")


def _dc_note(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    stay = rng.randint(3, 6)
    doc.line(f"Admission date: {(plan.when - timedelta(days=stay)).isoformat()}    "
             f"Discharge date: {plan.when.isoformat()}")
    doc.line()
    doc.line("DISCHARGE DIAGNOSES")
    _slot(doc, plan, "dx", prefix="- ")
    doc.line()
    doc.line("HOSPITAL COURSE")
    _slot(doc, plan, "course")
    doc.line()
    doc.line("PERTINENT RESULTS")
    for kind in ("hba1c", "egfr"):
        for lab in getattr(p, kind):
            if plan.when - timedelta(days=stay) <= lab.when <= plan.when:
                doc.line(f"{LAB_NAMES[kind]} {_lab_value(kind, lab)} on {p.fmt(lab.when)}",
                         _lab_tags(p, kind, lab), prefix="- ")
    _slot(doc, plan, "results", prefix="- ")
    doc.line()
    _med_lines(doc, p, plan.when, "DISCHARGE MEDICATIONS")
    _slot(doc, plan, "dc_meds", prefix="- ")
    doc.line()
    doc.line("FOLLOW-UP")
    doc.line("Primary care within 7 days with a basic metabolic panel. Return for fever,")
    doc.line("chest pain, shortness of breath, confusion or reduced urine output.")
    doc.line("Condition at discharge: stable. Discharged home with family.")


def _ed_note(doc: Doc, p: Profile, plan: NotePlan, rng: random.Random) -> None:
    _history(doc, plan)
    _med_lines(doc, p, plan.when, "HOME MEDICATIONS")
    doc.line()
    _ros_exam(doc, p, rng, injury=p.dm == "unknown")
    doc.line()
    doc.line("COURSE AND DISPOSITION")
    _slot(doc, plan, "course")
    doc.line("Discharged in stable condition with return precautions reviewed.")


RENDERERS = {"pcp": _clinic_note, "nephro": _clinic_note, "endo": _clinic_note,
             "gyn": _clinic_note, "ortho": _ed_note, "ed": _ed_note, "labs": _labs_note,
             "medlist": _medlist_note, "eye": _eye_note, "dc": _dc_note}


def render(p: Profile, rng: random.Random) -> list[Note]:
    """All notes of one patient, oldest first, ids ``<pid>-N01`` ..."""
    notes: list[Note] = []
    for i, plan in enumerate(sorted(p.notes, key=lambda n: n.when), start=1):
        doc = Doc()
        _header(doc, p, plan, rng)
        RENDERERS[plan.kind](doc, p, plan, rng)
        text = doc.text()
        if not text.isascii() or not NOTE_BYTES[0] <= len(text) <= NOTE_BYTES[1]:
            raise ValueError(f"{p.pid}: note {i} is not ASCII or is {len(text)} bytes")
        notes.append(Note(f"{p.pid}-N{i:02d}", plan.kind, plan.when, text, doc.anchors))
    return notes


def stage_text(egfr: float) -> str:
    return g_category(egfr).replace("G", "")


__all__ = ["Doc", "Med", "Note", "render", "stage_text"]
