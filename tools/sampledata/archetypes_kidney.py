"""Patient archetypes, part 3: kidney and treatment traps (stopped drugs, staging, eye)."""

from __future__ import annotations

import random

from tools.sampledata.archetypes import (
    DISPLAY,
    SOCIAL,
    S,
    acearb,
    days,
    dx_day,
    eye_plan,
    family,
    med,
    r1,
    schedule,
    t2_line,
    who,
)
from tools.sampledata.profiles import Lab, NotePlan, Profile, Trap, base_profile


def sglt2_stopped(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "sglt2_stopped", rng.choice("FM"), "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2005, 2016), "day"
    p.hba1c = [Lab(lab_old, r1(rng, 7.6, 8.3)), Lab(lab_new, r1(rng, 6.9, 7.6))]
    p.egfr = [Lab(lab_old, rng.randint(53, 58)), Lab(lab_new, rng.randint(46, 55))]
    p.uacr = [Lab(lab_old, rng.randint(35, 80)), Lab(lab_new, rng.randint(40, 120))]
    p.ckd = True
    stop = old + days(rng.randint(30, 120))
    infection = "vulvovaginal candidiasis" if p.sex == "F" else "candida balanitis"
    p.meds = [med("metformin", display=DISPLAY["metformin_low"]),
              med("empagliflozin", stop=stop, stop_reason=f"recurrent {infection}"),
              med("semaglutide", start=stop), acearb("losartan", 100), med("atorvastatin")]
    p.retino = "npdr" if v == 0 else None
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} with type 2 diabetes and CKD 3a presents for follow-up. "
                      f"Second episode of {infection} this year, treated with fluconazole."),
                    S("Denies fever, dysuria or flank pain.")],
            "pmh": [t2_line(p), S("Chronic kidney disease stage 3a", "ckd_dx"),
                    S("Hypertension")],
            "ap": [S("Diabetes: continue metformin and empagliflozin for now; counselled on "
                     "genital hygiene."), S("CKD 3a: continue losartan 100 mg.")]}),
        NotePlan("labs", lab_new),
        NotePlan("endo", p.index, {
            "hpi": [S(f"Empagliflozin was stopped on {p.fmt(stop)} after a third episode of "
                      f"{infection}; semaglutide was started in its place.",
                      "stopped:empagliflozin"),
                    S("Tolerating semaglutide with mild early satiety.")],
            "pmh": [t2_line(p), S("Chronic kidney disease stage 3a (G3a/A2)", "ckd_dx",
                                  "ckd_stage")],
            "ap": [S("Do not rechallenge with an SGLT2 inhibitor given recurrent mycotic "
                     "infections."), S("Continue metformin 500 mg twice daily and semaglutide "
                                       "1 mg weekly.")]}),
        NotePlan("medlist", p.index),
    ]
    if p.retino:
        p.notes.append(eye_plan(p, p.index - days(rng.randint(30, 120))))
    p.traps["on_sglt2i"] = Trap("default", "yes", "med:empagliflozin",
                                "Empagliflozin 10 mg daily is on the medication list.")
    p.traps["current_dm_meds"] = Trap("default", ["empagliflozin", "metformin", "semaglutide"],
                                      "med:empagliflozin",
                                      "Empagliflozin is listed with metformin and semaglutide.")
    return p


def ckd_labs_only(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "ckd_labs_only", rng.choice("FM"), "type_2")
    p.dx_date, p.dx_precision = dx_day(rng, 2009, 2017), "day"
    d1, d2, d3 = (p.index - days(rng.randint(250, 290)), p.index - days(rng.randint(120, 160)),
                  p.index - days(rng.randint(4, 14)))
    p.egfr = [Lab(d1, rng.randint(52, 56)), Lab(d2, rng.randint(50, 55)),
              Lab(d3, rng.randint(47, 53))]
    p.hba1c = [Lab(d1, r1(rng, 7.4, 8.0)), Lab(d3, r1(rng, 6.9, 7.5))]
    p.uacr = [Lab(d3, rng.randint(45, 120))]
    p.ckd = True
    p.flags.add("ckd_from_labs")
    second = "glipizide" if v == 0 else "pioglitazone"
    p.meds = [med("metformin", display=DISPLAY["metformin_low"]), med(second),
              acearb("lisinopril", 10), med("atorvastatin")]
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    pmh = [t2_line(p), S("Hypertension"), S("Osteoarthritis of both knees")]
    p.notes = [
        NotePlan("pcp", d1 + days(5), {
            "hpi": [S(f"{who(p)} with type 2 diabetes and hypertension, routine visit. Knee "
                      "pain limits walking."), S("Denies chest pain or dyspnea.")],
            "pmh": pmh,
            "ap": [S("Diabetes: continue current regimen."),
                   S("Kidney function reviewed; avoid NSAIDs for knee pain.")]}),
        NotePlan("pcp", d2 + days(5), {
            "hpi": [S("Follow-up of diabetes and hypertension. Using acetaminophen for knees."),
                    S("No hypoglycemia.")],
            "pmh": pmh,
            "ap": [S("Kidney function stable compared with prior."),
                   S("Hypertension controlled on lisinopril.")]}),
        NotePlan("labs", d3),
        NotePlan("medlist", p.index),
    ]
    p.traps["ckd_dx"] = Trap("skeptical", False, None,
                             "No clinician documents chronic kidney disease.")
    return p


def ckd4_arb_stopped(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "ckd4_arb_stopped", rng.choice("FM"), "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 1998, 2008), "day"
    p.hba1c = [Lab(lab_old, r1(rng, 7.6, 8.4)), Lab(lab_new, r1(rng, 7.0, 7.8))]
    p.egfr = [Lab(lab_old, rng.randint(31, 34)), Lab(lab_new, rng.randint(19, 26))]
    p.uacr = [Lab(lab_old, rng.randint(500, 700)), Lab(lab_new, rng.randint(800, 1400))]
    p.ckd = True
    stop = p.index - days(rng.randint(25, 60))
    p.meds = [acearb("losartan", 100, stop=stop, stop_reason="hyperkalemia, potassium 6.1"),
              med("insulin_glargine", units=rng.randint(12, 16)), med("insulin_lispro"),
              med("linagliptin"), med("furosemide"), med("bicarbonate"),
              med("amlodipine", display="amlodipine 10 mg tablet, 1 tablet by mouth daily")]
    p.retino = "npdr"
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} with type 2 diabetes and advanced kidney disease. Fatigue, "
                      "mild ankle swelling."), S("Denies chest pain, nausea or pruritus.")],
            "pmh": [t2_line(p), S("Chronic kidney disease stage 3b", "ckd_dx", "ckd_stage!trap"),
                    S("Hypertension"), S("Anemia of chronic kidney disease")],
            "ap": [S("CKD 3b with heavy albuminuria: continue losartan 100 mg; nephrology "
                     "follow-up."), S("Diabetes: basal-bolus insulin and linagliptin.")]}),
        NotePlan("labs", lab_new),
        NotePlan("nephro", p.index, {
            "hpi": [S(f"Losartan was stopped on {p.fmt(stop)} for hyperkalemia (potassium "
                      "6.1 mmol/L) and has not been restarted.", "stopped:acearb"),
                    S("Appetite reduced; no uremic symptoms. Urine output unchanged.")],
            "pmh": [t2_line(p), S("Chronic kidney disease stage 4 (G4/A3) due to diabetic "
                                  "nephropathy", "ckd_dx", "ckd_stage"),
                    S("Anemia of chronic kidney disease")],
            "ap": [S("Discussed kidney replacement therapy options; referred for dialysis "
                     "education and transplant evaluation."),
                   S("Hyperkalemia resolved off losartan; will not rechallenge RAAS blockade at "
                     "this time.")]}),
        NotePlan("medlist", p.index),
        eye_plan(p, p.index - days(rng.randint(30, 120))),
    ]
    p.traps["ace_arb_use"] = Trap("default", "yes", "acearb",
                                  "Losartan 100 mg daily is documented.")
    p.traps["ckd_stage"] = Trap("skeptical", "G3b", "ckd_stage!trap",
                                "Chronic kidney disease stage 3b is documented.")
    return p


def htn_retinopathy(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "htn_retinopathy", rng.choice("FM"), "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2010, 2019), "day"
    p.hba1c = [Lab(lab_old, r1(rng, 7.5, 8.5)), Lab(lab_new, r1(rng, 7.0, 8.0))]
    p.egfr = [Lab(lab_old, rng.randint(72, 86)), Lab(lab_new, rng.randint(70, 88))]
    p.uacr = [Lab(lab_new, rng.randint(8, 25))]
    p.ckd = False
    p.meds = [med("metformin"), med("sitagliptin"), med("glipizide" if v == 0 else "glimepiride"),
              acearb("lisinopril", 40),
              med("amlodipine", display="amlodipine 10 mg tablet, 1 tablet by mouth daily"),
              med("chlorthalidone")]
    p.retino = "htn_only"
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} with type 2 diabetes and resistant hypertension on three "
                      "agents. Home blood pressures 140s/90s."), S("Denies headache or vision "
                                                                    "change.")],
            "pmh": [t2_line(p), S("Resistant hypertension"), S("Gout")],
            "ap": [S("Hypertension: add chlorthalidone; recheck potassium in 2 weeks."),
                   S("Kidney function normal; UACR normal - no diabetic kidney disease.",
                     "ckd_dx")]}),
        NotePlan("labs", lab_new),
        eye_plan(p, p.index - days(rng.randint(10, 60))),
        NotePlan("medlist", p.index),
    ]
    p.traps["diabetic_retinopathy"] = Trap("default", True, "diabetic_retinopathy!trap",
                                           "Retinopathy documented on the dilated examination.")
    return p


def borderline_ckd(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "borderline_ckd", "F", "type_2")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2010, 2016), "day"
    p.hba1c = [Lab(lab_old, r1(rng, 7.0, 7.6)), Lab(lab_new, r1(rng, 6.6, 7.2))]
    p.egfr = [Lab(lab_old, 57), Lab(lab_new, 58)]
    p.uacr = [Lab(lab_new, rng.randint(35, 60))]
    p.ckd = True
    p.meds = [med("metformin"), med("empagliflozin"), acearb("lisinopril", 20)]
    p.family = family(rng)
    p.social = rng.choice(SOCIAL)
    cys = S("eGFR (creatinine-cystatin C, CKD-EPI 2021): 63 mL/min/1.73m2 (ref >=60)",
            "latest_egfr!trap", "ckd_stage!trap")
    p.notes = [
        NotePlan("pcp", old, {
            "hpi": [S(f"{who(p)} with type 2 diabetes, routine follow-up. Muscular build; "
                      "walks 8 km daily.")],
            "pmh": [t2_line(p), S("Hypertension")],
            "ap": [S("eGFR 57; creatinine may overestimate kidney disease given muscle mass. "
                     "Cystatin C ordered."), S("Diabetes at goal; continue.")]}),
        NotePlan("labs", lab_new, {"chem": [cys]}),
        NotePlan("nephro", p.index, {
            "hpi": [S("Referred for borderline eGFR. eGFR by creatinine 58 and by "
                      "creatinine-cystatin C 63 on the same sample; this places her at the "
                      "G2/G3a boundary.")],
            "pmh": [t2_line(p), S("Chronic kidney disease, G3a by creatinine, with mildly "
                                  "increased albuminuria", "ckd_dx", "ckd_stage")],
            "ap": [S("Continue empagliflozin and lisinopril; repeat both estimates in "
                     "6 months.")]}),
        NotePlan("medlist", p.index),
    ]
    p.traps["latest_egfr"] = Trap("skeptical", 63, "latest_egfr!trap",
                                  "The cystatin-based eGFR is the more accurate estimate.",
                                  classification="true_ambiguity")
    p.traps["ckd_stage"] = Trap("skeptical", "G2", "ckd_stage!trap",
                                "G2 by the creatinine-cystatin C eGFR of 63.",
                                classification="true_ambiguity")
    p.ambiguity.update({"latest_egfr": "true_ambiguity", "ckd_stage": "true_ambiguity"})
    return p
