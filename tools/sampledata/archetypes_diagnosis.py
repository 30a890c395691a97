"""Patient archetypes, part 2: diagnostic traps (steroids, type 1, GDM, type 3c, sparse)."""

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
    who,
)
from tools.sampledata.profiles import Lab, NotePlan, Profile, Trap, base_profile


def steroid_hyperglycemia(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "steroid_hyperglycemia", rng.choice("FM"), "steroid")
    _, _, lab_new = schedule(rng, p)
    dc = p.index - days(rng.randint(40, 70))
    adm = dc - days(4)
    a_adm, glucose = r1(rng, 5.6, 5.9), rng.randint(248, 296)
    p.hba1c = [Lab(adm, a_adm, "inpatient"), Lab(lab_new, r1(rng, 5.5, 5.8))]
    p.egfr = [Lab(adm, rng.randint(68, 78), "inpatient"), Lab(lab_new, rng.randint(74, 88))]
    p.ckd = False
    p.meds = [med("tiotropium", display="tiotropium 18 mcg inhalation capsule, inhale once daily"),
              med("fluticasone", display="fluticasone-salmeterol 250/50 mcg, 1 inhalation twice "
                  "daily"),
              med("albuterol", display="albuterol HFA 90 mcg, 2 puffs every 4 hours as needed"),
              med("prednisone", display="prednisone 10 mg tablets, taper as directed",
                  start=dc, stop=dc + days(9), stop_reason="taper completed"),
              med("insulin_lispro", display="insulin lispro correction scale with meals",
                  klass="dm", inpatient_only=True)]
    if v == 0:
        p.meds.append(acearb("lisinopril", 10))
    p.family = family(rng, S("Brother: type 2 diabetes."))
    p.social = "Former smoker, 40 pack-years, quit 2 years ago. Lives alone; independent in ADLs."
    off = S("Insulin was discontinued at discharge as glucose normalized with the steroid taper; "
            "no glucose-lowering medication is prescribed.", "insulin_use", "current_dm_meds")
    p.notes = [
        NotePlan("dc", dc, {
            "dx": [S("Acute exacerbation of chronic obstructive pulmonary disease"),
                   S("Steroid-induced hyperglycemia; no prior diagnosis of diabetes mellitus",
                     "t2dm_dx", "diabetes_type")],
            "course": [S(f"{who(p)} admitted with worsening dyspnea and wheeze. Treated with "
                         "prednisone 40 mg daily, nebulized bronchodilators and doxycycline."),
                       S(f"Blood glucose rose to {glucose} mg/dL on hospital day 2 while on "
                         "prednisone and was managed with correctional insulin lispro per "
                         "sliding scale.", "t2dm_dx!trap", "insulin_use!trap"),
                       S(f"Hemoglobin A1c on admission was {a_adm} %, arguing against underlying "
                         "diabetes."), off]}),
        NotePlan("labs", lab_new),
        NotePlan("pcp", p.index, {
            "hpi": [S("Seen after hospitalization for a COPD exacerbation. Prednisone taper "
                      "completed. Home fingerstick glucose values 90-115 mg/dL."),
                    S("Denies polyuria or polydipsia. Breathing back to baseline.")],
            "pmh": [S("Chronic obstructive pulmonary disease, GOLD 3"),
                    S("Steroid-induced hyperglycemia during recent admission, resolved; no "
                      "history of diabetes", "t2dm_dx", "diabetes_type")],
            "ap": [S("Hyperglycemia resolved off steroids; HbA1c is normal. No diagnosis of "
                     "diabetes.", "t2dm_dx"),
                   S("COPD: continue inhalers; pulmonary rehabilitation referral.")]}),
        NotePlan("medlist", p.index),
    ]
    p.traps["t2dm_dx"] = Trap("default", True, "t2dm_dx!trap",
                              "Hyperglycemia above 200 mg/dL requiring insulin.")
    p.traps["insulin_use"] = Trap("default", True, "insulin_use!trap",
                                  "Insulin lispro was given per sliding scale.")
    p.traps["current_dm_meds"] = Trap("default", ["insulin_lispro"], "insulin_use!trap",
                                      "Insulin lispro sliding scale documented.")
    p.traps["diabetes_type"] = Trap("default", "other", "t2dm_dx!trap",
                                    "Drug-induced (steroid) diabetes.")
    p.traps["latest_hba1c"] = Trap("skeptical", a_adm, f"hba1c@{adm.isoformat()}",
                                   "HbA1c measured on admission in the discharge summary.")
    return p


def type1_ckd(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "type1_ckd", rng.choice("FM"), "type_1")
    p.age = rng.randint(36, 52)
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 1984, 1996), "day"
    at_age = p.age - (p.index.year - p.dx_date.year)
    p.hba1c = [Lab(lab_old, r1(rng, 7.8, 8.6)), Lab(lab_new, r1(rng, 7.0, 7.9))]
    e_old, e_new = rng.randint(45, 49), rng.randint(34, 42)
    p.egfr = [Lab(lab_old, e_old), Lab(lab_new, e_new)]
    p.uacr = [Lab(lab_old, rng.randint(250, 300)), Lab(lab_new, rng.randint(380, 520))]
    p.ckd = True
    if v == 0:
        p.meds = [med("insulin_glargine", units=rng.randint(20, 30)), med("insulin_lispro")]
    else:
        p.meds = [med("insulin_lispro", display=DISPLAY["insulin_lispro_pump"])]
    p.meds += [acearb("lisinopril", 10), med("atorvastatin"),
               med("levothyroxine", display="levothyroxine 75 mcg tablet, 1 tablet daily")]
    p.retino = "pdr"
    p.family = family(rng, S("Maternal uncle: type 1 diabetes."))
    p.social = rng.choice(SOCIAL)
    t1 = S(f"Type 1 diabetes mellitus, diagnosed {p.fmt(p.dx_date)} at age {at_age}",
           "t2dm_dx", "diabetes_type", "dm_dx_date")
    pdr = S("Proliferative diabetic retinopathy OU, s/p panretinal photocoagulation",
            "diabetic_retinopathy")
    p.notes = [
        NotePlan("endo", old, {
            "hpi": [S(f"{who(p)} with type 1 diabetes since childhood on "
                      f"{'basal-bolus injections' if v == 0 else 'an insulin pump'} returns for "
                      "follow-up. Two mild hypoglycemic episodes this month, self-treated."),
                    S("No diabetic ketoacidosis in the last 10 years.")],
            "pmh": [t1, S("Diabetic nephropathy with chronic kidney disease", "ckd_dx"), pdr,
                    S("Hashimoto hypothyroidism")],
            "ap": [S("Type 1 diabetes: reduce overnight basal by 10 % for hypoglycemia."),
                   S("Nephropathy: continue lisinopril; nephrology follows.")]}),
        NotePlan("labs", lab_new),
        NotePlan("nephro", p.index, {
            "hpi": [S(f"Follow-up of diabetic kidney disease. eGFR {e_new}, down from {e_old} "
                      "last year; albuminuria increasing despite lisinopril."),
                    S("Denies NSAID use, edema or dyspnea.")],
            "pmh": [S("DM with diabetic nephropathy", "t2dm_dx!trap"),
                    S("CKD stage 3b (G3b/A3)", "ckd_dx", "ckd_stage"), pdr],
            "ap": [S("CKD G3b/A3 from diabetic nephropathy; discuss adding an SGLT2 inhibitor "
                     "with endocrinology."), S("Renal diet education; repeat labs 3 months.")]}),
        NotePlan("medlist", p.index),
        eye_plan(p, p.index - days(rng.randint(30, 120))),
    ]
    p.traps["t2dm_dx"] = Trap("default", True, "t2dm_dx!trap",
                              "Diabetes mellitus with diabetic nephropathy is documented.")
    if v == 1:
        p.traps["ckd_stage"] = Trap("skeptical", "G3a", f"egfr@{lab_old.isoformat()}",
                                    f"eGFR {e_old} mL/min/1.73m2 documented.")
    return p


def gdm_history(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "gdm_history", "F", "gestational_hx")
    p.age = rng.randint(34, 44)
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2014, 2018), "day"
    a_new = r1(rng, 5.3, 5.6)
    p.hba1c = [Lab(lab_old, r1(rng, 5.4, 5.6)), Lab(lab_new, a_new)]
    p.egfr = [Lab(lab_new, rng.randint(98, 115))]
    p.ckd = False
    p.meds = [med("levothyroxine", display="levothyroxine 75 mcg tablet, 1 tablet daily"),
              med("norethindrone", display="norethindrone 0.35 mg tablet, 1 tablet daily")]
    p.family = family(rng, S("Mother: type 2 diabetes and hypertension."))
    p.social = "Works as a pharmacist. Never smoker. Exercises three times weekly. Two children."
    p.notes = [
        NotePlan("gyn", old, {
            "hpi": [S(f"{who(p)}, G2P2, presents for her annual examination. Her first pregnancy "
                      f"in {p.dx_date.year} was complicated by gestational diabetes managed with "
                      "diet; postpartum glucose tolerance test was normal."),
                    S("Denies abnormal bleeding or pelvic pain.")],
            "pmh": [S(f"Gestational diabetes mellitus, diagnosed {p.fmt(p.dx_date)} at 26 weeks; "
                      "diet-controlled; resolved postpartum", "diabetes_type", "dm_dx_date"),
                    S("Hypothyroidism")],
            "ap": [S("History of gestational diabetes: annual HbA1c screening; no diabetes.",
                     "t2dm_dx"), S("Cervical screening up to date.")]}),
        NotePlan("labs", lab_new),
        NotePlan("pcp", p.index, {
            "hpi": [S(f"{who(p)} establishing care. Feels well. Prior gestational diabetes.")],
            "pmh": [S("History of gestational diabetes (resolved)", "diabetes_type"),
                    S("Hypothyroidism")],
            "ap": [S(f"No diabetes: HbA1c {a_new} % (normal). Continue annual screening given "
                     "prior gestational diabetes.", "t2dm_dx"),
                   S("Hypothyroidism: TSH normal on levothyroxine.")]}),
        NotePlan("medlist", p.index),
    ]
    p.traps["diabetes_type"] = Trap("skeptical", "no_info", None,
                                    "Gestational diabetes resolved; no current diabetes.",
                                    classification="guideline_gap")
    p.ambiguity["diabetes_type"] = "guideline_gap"
    if v == 0:
        p.traps["dm_dx_date"] = Trap("skeptical", "no_info", None,
                                     "The patient does not currently have diabetes.")
    return p


def sparse_chart(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "sparse_chart", rng.choice("FM"), "unknown")
    p.age = rng.randint(24, 45)
    ed = p.index - days(rng.randint(30, 60))
    p.egfr = [Lab(ed, rng.randint(92, 112))]
    p.ckd = False
    p.meds = [med("albuterol", display="albuterol HFA 90 mcg, 2 puffs every 4 hours as needed"),
              med("omeprazole", display="omeprazole 20 mg capsule, 1 capsule daily"),
              med("acetaminophen", display="acetaminophen 500 mg, 2 tablets every 6 hours as "
                  "needed", start=ed)]
    p.social = "Warehouse supervisor. Smokes 5 cigarettes daily. Drinks socially."
    pmh = [S("Mild intermittent asthma; gastroesophageal reflux disease", "t2dm_dx!trap")]
    p.notes = [
        NotePlan("ed", ed, {
            "hpi": [S(f"{who(p)} presents after a ground-level fall on an icy step with right "
                      "ankle pain and swelling. No head strike or loss of consciousness."),
                    S("Denies numbness of the foot. Able to bear weight with pain.")],
            "pmh": pmh,
            "course": [S("X-ray: nondisplaced distal fibula fracture (Weber A). Basic metabolic "
                         "panel drawn before procedural sedation was considered; unremarkable."),
                       S("Placed in a walking boot; orthopedics follow-up arranged.")]}),
        NotePlan("labs", ed),
        NotePlan("ortho", p.index, {
            "hpi": [S("Follow-up of right distal fibula fracture. Pain improving; walking in "
                      "the boot without crutches."), S("Denies calf pain or swelling.")],
            "pmh": pmh,
            "course": [S("Repeat X-ray shows interval callus formation, alignment maintained."),
                       S("Wean from the boot over 2 weeks; physical therapy referral.")]}),
    ]
    if v == 0:
        p.notes.append(NotePlan("medlist", p.index))
    p.traps["t2dm_dx"] = Trap("default", False, "t2dm_dx!trap",
                              "Diabetes is not among the documented past medical history.")
    if v == 1:
        p.traps["ckd_dx"] = Trap("skeptical", "no_info", None,
                                 "A single emergency eGFR cannot establish chronicity.")
    return p


def type3c(rng: random.Random, pid: str, v: int) -> Profile:
    p = base_profile(rng, pid, "type3c", rng.choice("FM"), "other")
    old, lab_old, lab_new = schedule(rng, p)
    p.dx_date, p.dx_precision = dx_day(rng, 2017, 2021), "day"
    p.hba1c = [Lab(lab_old, r1(rng, 8.2, 9.0)), Lab(lab_new, r1(rng, 7.3, 8.0))]
    p.egfr = [Lab(lab_new, rng.randint(68, 84))]
    p.uacr = [Lab(lab_new, rng.randint(10, 25))]
    p.ckd = False
    p.meds = [med("insulin_glargine", units=rng.randint(12, 18)), med("insulin_aspart"),
              med("pancrelipase", display="pancrelipase 36,000 units capsule, 2 with meals"),
              med("pantoprazole", display="pantoprazole 40 mg tablet, 1 tablet daily")]
    if v == 1:
        p.meds.append(acearb("lisinopril", 5))
    p.family = family(rng)
    p.social = "Alcohol use disorder in sustained remission since 2016. Never smoker."
    proc = "total pancreatectomy with islet autotransplantation"
    p.notes = [
        NotePlan("ed", old, {
            "hpi": [S(f"{who(p)} with chronic pancreatitis s/p {proc} presents with two days "
                      "of crampy abdominal pain and loose stools; tolerating fluids."),
                    S("Denies hematemesis, melena or fever.")],
            "pmh": [S("DM2 on insulin", "t2dm_dx!trap", "diabetes_type!trap"),
                    S(f"Chronic pancreatitis s/p {proc}")],
            "course": [S("CT abdomen without acute findings. Symptoms improved with IV fluids; "
                         "pancrelipase dose reviewed.")]}),
        NotePlan("labs", lab_new),
        NotePlan("endo", p.index, {
            "hpi": [S("Follow-up of diabetes that began after pancreatectomy. The emergency "
                      "department problem list labels this type 2 diabetes, which is incorrect."),
                    S("Reports one hypoglycemic episode after a missed meal.")],
            "pmh": [S(f"Pancreatogenic (type 3c) diabetes mellitus after {proc}, diagnosed "
                      f"{p.fmt(p.dx_date)}", "t2dm_dx", "diabetes_type", "dm_dx_date"),
                    S("Exocrine pancreatic insufficiency")],
            "ap": [S("Type 3c diabetes: continue insulin glargine and aspart; glucagon kit "
                     "prescribed."), S("Kidney function normal; no nephropathy.", "ckd_dx")]}),
        NotePlan("medlist", p.index),
    ]
    p.traps["t2dm_dx"] = Trap("default", True, "t2dm_dx!trap", "DM2 on the problem list.")
    p.traps["diabetes_type"] = Trap("default", "type_2", "diabetes_type!trap",
                                    "Problem list documents DM2.")
    p.traps["ckd_dx"] = Trap("skeptical", "no_info", None,
                             "Only one eGFR on file; chronicity of kidney function unknown.")
    return p
