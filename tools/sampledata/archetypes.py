"""Patient archetypes, part 1: helpers and the diabetic-kidney archetypes.

Each builder returns a :class:`Profile` whose note plans carry the archetype-specific prose.
Tags on snippets name what a sentence is evidence for: ``<field_id>`` supports the true
answer, ``<field_id>!trap`` supports a plausible wrong answer (see :class:`Trap`).
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from tools.sampledata.profiles import Lab, Med, NotePlan, Profile, Snippet, Trap, base_profile

DISPLAY = {
    "metformin": "metformin 1000 mg tablet, 1 tablet by mouth twice daily with meals",
    "metformin_low": "metformin 500 mg tablet, 1 tablet by mouth twice daily with meals",
    "empagliflozin": "empagliflozin 10 mg tablet, 1 tablet by mouth once daily",
    "dapagliflozin": "dapagliflozin 10 mg tablet, 1 tablet by mouth once daily",
    "semaglutide": "semaglutide 1 mg pen, inject 1 mg subcutaneously once weekly",
    "dulaglutide": "dulaglutide 1.5 mg pen, inject 1.5 mg subcutaneously once weekly",
    "tirzepatide": "tirzepatide 5 mg pen, inject 5 mg subcutaneously once weekly",
    "sitagliptin": "sitagliptin 100 mg tablet, 1 tablet by mouth once daily",
    "linagliptin": "linagliptin 5 mg tablet, 1 tablet by mouth once daily",
    "glipizide": "glipizide 5 mg tablet, 1 tablet by mouth daily before breakfast",
    "glimepiride": "glimepiride 2 mg tablet, 1 tablet by mouth daily with breakfast",
    "pioglitazone": "pioglitazone 15 mg tablet, 1 tablet by mouth once daily",
    "insulin_glargine": "insulin glargine 100 units/mL pen, inject {u} units subcutaneously at "
    "bedtime",
    "insulin_lispro": "insulin lispro 100 units/mL pen, inject 4-8 units subcutaneously with "
    "meals per correction scale",
    "insulin_lispro_pump": "insulin lispro 100 units/mL via insulin pump, basal 0.8 units/hour "
    "with meal boluses",
    "insulin_aspart": "insulin aspart 100 units/mL pen, inject 3-6 units subcutaneously with meals",
    "lisinopril": "lisinopril {d} mg tablet, 1 tablet by mouth once daily",
    "losartan": "losartan {d} mg tablet, 1 tablet by mouth once daily",
    "ramipril": "ramipril 5 mg capsule, 1 capsule by mouth once daily",
    "atorvastatin": "atorvastatin 40 mg tablet, 1 tablet by mouth at bedtime",
    "amlodipine": "amlodipine 5 mg tablet, 1 tablet by mouth once daily",
    "aspirin": "aspirin 81 mg tablet, 1 tablet by mouth once daily",
    "furosemide": "furosemide 40 mg tablet, 1 tablet by mouth every morning",
    "bicarbonate": "sodium bicarbonate 650 mg tablet, 1 tablet by mouth twice daily",
    "chlorthalidone": "chlorthalidone 25 mg tablet, 1 tablet by mouth every morning",
}

SOCIAL = [
    "Retired bus driver. Never smoker. Drinks alcohol rarely. Lives with spouse.",
    "Works as a school librarian. Former smoker, quit 15 years ago. No alcohol.",
    "Retired electrician. Former smoker (20 pack-years). Walks 30 minutes most days.",
    "Works part time at a garden centre. Never smoker. One glass of wine weekly.",
]


def S(text: str, *tags: str) -> Snippet:
    return (text, tags)


def days(n: int) -> timedelta:
    return timedelta(days=n)


def r1(rng: random.Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 1)


def med(
    key: str,
    *,
    display: str | None = None,
    klass: str | None = None,
    start: date | None = None,
    stop: date | None = None,
    stop_reason: str = "",
    inpatient_only: bool = False,
    units: int = 20,
    dose: int = 20,
) -> Med:
    text = (display or DISPLAY[key]).format(u=units, d=dose)
    return Med(key=key, display=text, klass=klass or ("dm" if key in _DM_KEYS else "other"),
               start=start, stop=stop, stop_reason=stop_reason, inpatient_only=inpatient_only)


_DM_KEYS = {"metformin", "empagliflozin", "dapagliflozin", "semaglutide", "dulaglutide",
            "tirzepatide", "sitagliptin", "linagliptin", "glipizide", "glimepiride",
            "pioglitazone", "insulin_glargine", "insulin_lispro", "insulin_aspart"}


def acearb(key: str, dose: int = 20, *, stop: date | None = None, stop_reason: str = "") -> Med:
    return med(key, klass="acearb", dose=dose, stop=stop, stop_reason=stop_reason)


def schedule(rng: random.Random, p: Profile) -> tuple[date, date, date]:
    """(old visit, old labs, new labs) relative to the index date."""
    old = p.index - days(rng.randint(200, 320))
    return old, old - days(rng.randint(3, 9)), p.index - days(rng.randint(4, 18))


def dx_day(rng: random.Random, y0: int, y1: int) -> date:
    return date(rng.randint(y0, y1), rng.randint(1, 12), rng.randint(1, 28))


def who(p: Profile) -> str:
    return f"{p.age}-year-old {'woman' if p.sex == 'F' else 'man'}"


def t2_line(p: Profile) -> Snippet:
    assert p.dx_date is not None
    if p.dx_precision == "year":
        return S(f"Type 2 diabetes mellitus, diagnosed in {p.dx_date.year}",
                 "t2dm_dx", "diabetes_type", "dm_dx_date!trap")
    return S(f"Type 2 diabetes mellitus, diagnosed {p.fmt(p.dx_date)}",
             "t2dm_dx", "diabetes_type", "dm_dx_date")


def eye_plan(p: Profile, when: date) -> NotePlan:
    imp = {
        "npdr": [S("Mild nonproliferative diabetic retinopathy OU without macular edema.",
                   "diabetic_retinopathy")],
        "pdr": [S("Proliferative diabetic retinopathy OU, stable after panretinal "
                  "photocoagulation.", "diabetic_retinopathy")],
        "none": [S("No diabetic retinopathy in either eye.", "diabetic_retinopathy")],
        "htn_only": [S("Hypertensive retinopathy, grade 1 OU.", "diabetic_retinopathy!trap"),
                     S("No diabetic retinopathy.", "diabetic_retinopathy")],
    }[p.retino or "none"]
    return NotePlan("eye", when, {"impression": [*imp, S("Early cataract OU, not visually "
                                                        "significant.")]})


def family(rng: random.Random, *extra: Snippet) -> list[Snippet]:
    base = [S(rng.choice(["Mother: hypertension; died of stroke at 74.",
                          "Mother: osteoporosis and hypothyroidism."])),
            S(rng.choice(["Father: coronary artery disease, myocardial infarction at 66.",
                          "Father: prostate cancer, living."]))]
    taken = {text.split(":")[0] for text, _ in extra}
    return [*(b for b in base if b[0].split(":")[0] not in taken), *extra]


def t2dm_ckd_g3a(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "t2dm_ckd_g3a", rng.choice("FM"), "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2006, 2015), "day"
    a_old, a_new = r1(rng, 7.9, 9.2), r1(rng, 6.8, 7.6)
    e_old, e_new = rng.randint(52, 58), rng.randint(45, 51)
    p.hba1c = [Lab(lab_old, a_old), Lab(lab_new, a_new)]
    p.egfr = [Lab(lab_old, e_old), Lab(lab_new, e_new)]
    p.uacr = [Lab(lab_old, rng.randint(40, 90)), Lab(lab_new, rng.randint(60, 180))]
    p.ckd = True
    sglt = "empagliflozin" if v % 2 == 0 else "dapagliflozin"
    p.meds = [med("metformin", display=DISPLAY["metformin_low"]), med(sglt, start=old),
              acearb("lisinopril", 20), med("atorvastatin"), med("aspirin")]
    if v == 3:
        p.meds.insert(2, med("glipizide"))
    if v % 2:
        p.meds.append(med("amlodipine"))
    p.retino = "npdr" if v in (0, 2) else "none"
    p.family = family(rng, S("No family history of kidney disease."))
    p.social = rng.choice(SOCIAL)
    ckd3a = S("Chronic kidney disease stage 3a", "ckd_dx")
    hpi = [S(f"{who(p)} with type 2 diabetes, hypertension and chronic kidney disease presents "
             "for routine diabetes follow-up. Home fasting glucose readings are 140-190 mg/dL."),
           S("Denies hypoglycemic episodes. No chest pain or claudication.")]
    if v == 0:
        hpi.append(S("Eye exam is overdue; retinopathy status is unknown at this time.",
                     "diabetic_retinopathy!maybe"))
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": hpi,
            "pmh": [t2_line(p), ckd3a, S("Essential hypertension"), S("Hyperlipidemia")],
            "ap": [S(f"Type 2 diabetes, HbA1c {a_old} % above goal. Start {sglt} 10 mg daily for "
                     "glycemic and renal benefit; continue metformin at reduced dose."),
                   S("CKD stage 3a with albuminuria: continue lisinopril 20 mg daily; refer to "
                     "nephrology."),
                   S("Diabetic eye examination: referral placed to ophthalmology.")]}),
        NotePlan("labs", lab_new),
        NotePlan("nephro", p.index, {
            "hpi": [S(f"Seen in consultation for chronic kidney disease in the setting of "
                      f"long-standing type 2 diabetes. eGFR has declined from {e_old} to {e_new} "
                      "over the past year with moderately increased albuminuria."),
                    S(f"Outside records quote a hemoglobin A1c of {a_old} % from "
                      f"{p.fmt(lab_old)}.", f"hba1c@{lab_old.isoformat()}"),
                    S("Denies NSAID use. No history of kidney stones, gross hematuria or "
                      "recurrent urinary infections.")],
            "pmh": [t2_line(p),
                    S("Chronic kidney disease stage 3a (G3a/A2), attributed to diabetic kidney "
                      "disease", "ckd_dx", "ckd_stage"),
                    S("Essential hypertension"), S("Hyperlipidemia")],
            "ap": [S(f"CKD G3a/A2 from diabetic kidney disease. Continue lisinopril and {sglt}."),
                   S("Metformin may continue at 500 mg twice daily while eGFR stays above 45; "
                     "stop if eGFR falls below 30."),
                   S("Repeat basic metabolic panel and UACR in 3 months. Avoid NSAIDs.")]}),
        NotePlan("medlist", p.index),
        eye_plan(p, p.index - days(rng.randint(30, 120))),
    ]
    p.traps["latest_hba1c"] = Trap("default", a_old, f"hba1c@{lab_old.isoformat()}",
                                   f"The nephrology note reports an HbA1c of {a_old} %.")
    if v % 2:
        p.traps["latest_egfr"] = Trap("skeptical", e_old, f"egfr@{lab_old.isoformat()}",
                                      f"eGFR {e_old} mL/min/1.73m2 is the value documented in the "
                                      "progress note.")
    return p


def t2dm_no_ckd(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "t2dm_no_ckd", rng.choice("FM"), "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2012, 2019), "year"
    a_old, a_new = r1(rng, 7.2, 8.4), r1(rng, 6.5, 7.3)
    p.hba1c = [Lab(lab_old, a_old), Lab(lab_new, a_new)]
    e_new = rng.randint(78, 96)
    p.egfr = [Lab(lab_old, rng.randint(80, 95)), Lab(lab_new, e_new)]
    u = rng.randint(8, 24)
    p.uacr = [Lab(lab_new, u)]
    p.ckd = False
    glp1 = ["semaglutide", "dulaglutide", "tirzepatide"][v]
    p.meds = [med("metformin"), med(glp1, start=old), med("atorvastatin")]
    if v != 2:
        p.meds.insert(2, acearb("losartan", 50))
    p.retino = "none"
    p.family = family(rng, S("Mother: type 2 diabetes, on insulin."), S("Brother: hypertension."))
    p.social = rng.choice(SOCIAL)
    year = p.dx_date.year
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} with type 2 diabetes diagnosed in {year} presents for follow-up. "
                      "Reports good adherence to metformin; fasting sugars 130-160 mg/dL."),
                    S("No polyuria, polydipsia or hypoglycemia.")],
            "pmh": [t2_line(p), S("Obesity"), S("Obstructive sleep apnea on CPAP")],
            "ap": [S(f"Type 2 diabetes, HbA1c {a_old} %, not at goal. Start {glp1} once weekly; "
                     "counselled on nausea and injection technique."),
                   S("Kidney screening: eGFR normal; urine albumin/creatinine ratio ordered."),
                   S("Annual dilated eye examination due.")]}),
        NotePlan("labs", lab_new),
        NotePlan("endo", p.index, {
            "hpi": [S(f"Follow-up of type 2 diabetes. Weight down 4 kg since starting {glp1}; "
                      "early nausea has resolved. Checks glucose twice daily.")],
            "pmh": [t2_line(p), S("No chronic kidney disease; eGFR and urine albumin normal",
                                  "ckd_dx"), S("Obesity")],
            "ap": [S(f"Type 2 diabetes, HbA1c {a_new} % at goal. Continue metformin and {glp1}."),
                   S(f"Renal: eGFR {e_new}, UACR {u} mg/g - no evidence of diabetic kidney "
                     "disease.", "ckd_dx")]}),
        NotePlan("medlist", p.index),
        eye_plan(p, p.index - days(rng.randint(30, 120))),
    ]
    p.traps["dm_dx_date"] = Trap("default", f"{year}-01-01", "dm_dx_date!trap",
                                 f"Diabetes was diagnosed in {year}; dated to the start of that "
                                 "year.")
    return p


def t2dm_ckd_g3b_metformin_stopped(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "t2dm_ckd_g3b_metformin_stopped", rng.choice("FM"), "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2001, 2010), "day"
    p.hba1c = [Lab(lab_old, r1(rng, 8.0, 8.8)), Lab(lab_new, r1(rng, 7.2, 7.9))]
    e_old, e_new = rng.randint(40, 44), rng.randint(31, 38)
    p.egfr = [Lab(lab_old, e_old), Lab(lab_new, e_new)]
    p.uacr = [Lab(lab_old, rng.randint(220, 290)), Lab(lab_new, rng.randint(340, 620))]
    p.ckd = True
    stop = old + days(rng.randint(40, 90))
    units = rng.randint(16, 28)
    p.meds = [med("metformin", stop=stop, stop_reason="declining eGFR and diarrhea"),
              med("insulin_glargine", units=units, start=stop), med("linagliptin", start=stop),
              med("dapagliflozin"), acearb("lisinopril", 40), med("atorvastatin"),
              med("furosemide")]
    p.retino = "npdr" if v == 0 else None
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} with long-standing type 2 diabetes and chronic kidney disease "
                      "stage 3b presents for follow-up. Reports loose stools on metformin."),
                    S("Denies chest pain. No history of foot ulcers or amputation.")],
            "pmh": [t2_line(p), S("Chronic kidney disease stage 3b", "ckd_dx"),
                    S("Essential hypertension"), S("Heart failure with preserved ejection "
                                                   "fraction")],
            "ap": [S("Type 2 diabetes above goal. Metformin continued for now; will reassess if "
                     "eGFR declines further or diarrhea persists."),
                   S("CKD 3b with albuminuria: continue lisinopril and dapagliflozin.")]}),
        NotePlan("labs", lab_new),
        NotePlan("nephro", p.index, {
            "hpi": [S(f"Metformin was discontinued on {p.fmt(stop)} because of declining eGFR and "
                      "diarrhea; insulin glargine and linagliptin were started at that time.",
                      "stopped:metformin"),
                    S("Denies edema or orthopnea on furosemide. No NSAID use.")],
            "pmh": [t2_line(p), S("Chronic kidney disease stage 3b (G3b/A3), diabetic "
                                  "nephropathy", "ckd_dx", "ckd_stage"),
                    S("Heart failure with preserved ejection fraction")],
            "ap": [S(f"CKD G3b/A3, eGFR {e_new}. Continue dapagliflozin and lisinopril 40 mg."),
                   S(f"Diabetes: insulin glargine {units} units nightly and linagliptin; do not "
                     "restart metformin.", "med:insulin_glargine"),
                   S("Dietitian referral for a renal diet; recheck labs in 3 months.")]}),
        NotePlan("medlist", p.index),
    ]
    if p.retino:
        p.notes.append(eye_plan(p, p.index - days(rng.randint(30, 120))))
    truth = sorted(["insulin_glargine", "linagliptin", "dapagliflozin"])
    p.traps["current_dm_meds"] = Trap("default", sorted([*truth, "metformin"]), "med:metformin",
                                      "Metformin appears on the medication list.")
    p.traps["uacr_category"] = Trap("skeptical", "A2", f"uacr@{lab_old.isoformat()}",
                                    "UACR in the A2 range in the progress note.")
    return p


def prediabetes_famhx(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "prediabetes_famhx", rng.choice("FM"), "prediabetes")
    old, lab_old, lab_new = schedule(rng, p)
    a_old, a_new = r1(rng, 5.8, 6.0), r1(rng, 6.1, 6.4)
    p.hba1c = [Lab(lab_old, a_old), Lab(lab_new, a_new)]
    p.egfr = [Lab(lab_new, rng.randint(86, 99))]
    if v == 0:
        p.uacr = [Lab(lab_new, rng.randint(10, 20))]
    p.ckd = False
    p.meds = [med("atorvastatin", display="atorvastatin 10 mg tablet, 1 tablet by mouth daily")]
    if v != 1:
        p.meds.append(acearb("lisinopril", 10))
    p.meds.append(med("vitd", display="cholecalciferol 2000 units capsule, 1 capsule daily"))
    extra = [S("Mother: type 2 diabetes mellitus, diagnosed in her 50s.", "t2dm_dx!trap"),
             S("Father: end-stage kidney disease from diabetic nephropathy, on hemodialysis.",
               "ckd_dx!trap")]
    if v == 2:
        extra.append(S("Sister: type 2 diabetes with diabetic retinopathy.",
                       "diabetic_retinopathy!trap"))
    p.family = family(rng, *extra)
    p.social = rng.choice(SOCIAL)
    no_dm = S("Prediabetes; no history of diabetes mellitus", "t2dm_dx", "diabetes_type")
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} presents for an annual examination. Worried about diabetes "
                      "because of a strong family history."),
                    S("Denies polyuria, polydipsia or blurred vision.")],
            "pmh": [no_dm, S("Hypertension"), S("Hyperlipidemia")],
            "ap": [S(f"Prediabetes, HbA1c {a_old} %: lifestyle modification, 150 minutes of "
                     "weekly activity."), S("Blood pressure and lipids at goal.")]}),
        NotePlan("labs", lab_new),
        NotePlan("pcp", p.index, {
            "hpi": [S(f"Returns to review labs. HbA1c {a_new} %, in the prediabetes range."),
                    S("Metformin was discussed as an option; the patient prefers to continue "
                      "lifestyle changes and declined a prescription.", "current_dm_meds!trap")],
            "pmh": [S("Prediabetes (HbA1c 5.7-6.4 %); does not meet criteria for diabetes",
                      "t2dm_dx", "diabetes_type"), S("Hypertension")],
            "ap": [S(f"Prediabetes: HbA1c {a_new} %, no diabetes. Not on glucose-lowering "
                     "medication.", "t2dm_dx", "current_dm_meds"),
                   S("Referral to the diabetes prevention program; recheck HbA1c in 6 months."),
                   S("Kidney function normal.", "ckd_dx")]}),
        NotePlan("medlist", p.index),
    ]
    p.traps["t2dm_dx"] = Trap("default", True, "t2dm_dx!trap",
                              "Diabetes is documented in the history.")
    p.traps["diabetes_type"] = Trap("default", "type_2", "t2dm_dx!trap",
                                    "Type 2 diabetes is mentioned in the history.")
    if v == 0:
        p.traps["current_dm_meds"] = Trap("skeptical", None, None,
                                          "No glucose-lowering medication is documented.")
    if v == 1:
        p.traps["current_dm_meds"] = Trap("default", ["metformin"], "current_dm_meds!trap",
                                          "Metformin was discussed at the last visit.")
    if v == 2:
        p.traps["diabetic_retinopathy"] = Trap("default", True, "diabetic_retinopathy!trap",
                                               "Diabetic retinopathy is documented.")
    return p


def aki_recovered(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "aki_recovered", rng.choice("FM"), "type_2")
    _, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2008, 2018), "day"
    dc = p.index - days(rng.randint(50, 80))
    aki_day = dc - days(3)
    e_aki, e_new = rng.randint(28, 34), rng.randint(74, 84)
    p.egfr = [Lab(lab_old, rng.randint(76, 86)), Lab(aki_day, e_aki, "inpatient"),
              Lab(lab_new, e_new)]
    p.hba1c = [Lab(lab_old, r1(rng, 7.0, 7.8)), Lab(lab_new, r1(rng, 6.8, 7.5))]
    p.uacr = [Lab(lab_new, rng.randint(10, 26))]
    p.ckd = False
    p.meds = [med("metformin"), med("dulaglutide"), acearb("lisinopril", 20),
              med("atorvastatin")]
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    held = S("Metformin and lisinopril were held on admission because of acute kidney injury.",
             "ace_arb_use!trap", "current_dm_meds!trap")
    p.notes = [
        NotePlan("dc", dc, {
            "dx": [S("Sepsis due to acute pyelonephritis"),
                   S(f"Acute kidney injury, prerenal, nadir eGFR {e_aki} mL/min/1.73m2",
                     "ckd_dx!trap"), t2_line(p)],
            "course": [S(f"{who(p)} admitted with fever, flank pain and hypotension. Blood and "
                         "urine cultures grew pansensitive E. coli; treated with ceftriaxone."),
                       held,
                       S("Creatinine improved with fluids to 1.0 mg/dL by discharge; metformin "
                         "and lisinopril were resumed at discharge.", "ace_arb_use")]}),
        NotePlan("labs", lab_new),
        NotePlan("pcp", p.index, {
            "hpi": [S(f"Hospital follow-up after urosepsis with acute kidney injury "
                      f"{(p.index - dc).days} days ago. Feels well; completed antibiotics."),
                    S("Denies dysuria, fever or flank pain. Eating and drinking normally.")],
            "pmh": [t2_line(p), S("Acute kidney injury during hospitalization for "
                                  "pyelonephritis, resolved"), S("Hypertension")],
            "ap": [S(f"AKI resolved: eGFR back to {e_new}, at baseline; no chronic kidney "
                     "disease.", "ckd_dx"),
                   S("Diabetes controlled on metformin and dulaglutide; continue."),
                   S("Hypertension: lisinopril resumed, blood pressure at goal.")]}),
        NotePlan("medlist", p.index),
    ]
    p.traps["ckd_dx"] = Trap("default", True, "ckd_dx!trap",
                             "Kidney injury with reduced eGFR is documented.")
    p.traps["ckd_stage"] = Trap("default", "G3b" if e_aki >= 30 else "G4",
                                f"egfr@{aki_day.isoformat()}",
                                f"Staged from the eGFR of {e_aki} during the admission.")
    if v == 1:
        p.traps["latest_egfr"] = Trap("default", e_aki, f"egfr@{aki_day.isoformat()}",
                                      "eGFR reported in the discharge summary.")
        p.traps["ace_arb_use"] = Trap("skeptical", "no", "ace_arb_use!trap",
                                      "Lisinopril was held for acute kidney injury.")
    else:
        p.traps["current_dm_meds"] = Trap("skeptical", ["dulaglutide"], "current_dm_meds!trap",
                                          "Metformin was held for acute kidney injury.")
    return p
