"""The synthetic phenotype skill: SKILL.md, criterion files and edge-case files.

Criterion front matter is rendered with PyYAML from :data:`CRITERIA` so that it always
validates against :class:`schemas.skill.Criterion`.
"""

from __future__ import annotations

from typing import Any

import yaml

SKILL_NAME = "Type 2 diabetes with chronic kidney disease phenotype"
TASK_ID = "t2dm-ckd-v1"

BOOL_ENUM: list[Any] = [True, False, "no_info"]
YES_NO_ENUM = ["yes", "no", "no_info"]
DM_MEDS = [
    "metformin",
    "empagliflozin",
    "dapagliflozin",
    "canagliflozin",
    "semaglutide",
    "dulaglutide",
    "liraglutide",
    "tirzepatide",
    "sitagliptin",
    "linagliptin",
    "glipizide",
    "glimepiride",
    "pioglitazone",
    "insulin_glargine",
    "insulin_detemir",
    "insulin_lispro",
    "insulin_aspart",
]
SGLT2 = ("empagliflozin", "dapagliflozin", "canagliflozin")
INSULINS = ("insulin_glargine", "insulin_detemir", "insulin_lispro", "insulin_aspart")


def _crit(
    field_id: str,
    prompt: str,
    schema: dict[str, Any],
    body: str,
    *,
    edge_cases: tuple[str, ...] = (),
    keywords: tuple[str, ...] = (),
    gate: dict[str, Any] | None = None,
) -> dict[str, Any]:
    head: dict[str, Any] = {"field_id": field_id, "prompt": prompt, "answer_schema": schema}
    if gate:
        head["gate"] = gate
    if edge_cases:
        head["uses"] = {"edge_cases": list(edge_cases)}
    if keywords:
        head["keywords"] = list(keywords)
    return {"head": head, "body": body}


_BOOL = {"type": "boolean", "enum": BOOL_ENUM, "allows_no_info": True}

CRITERIA: list[dict[str, Any]] = [
    _crit(
        "t2dm_dx",
        "Does the patient have a diagnosis of type 2 diabetes mellitus?",
        _BOOL,
        "Answer true when a clinician documents type 2 diabetes mellitus (problem list,\n"
        "assessment, discharge diagnosis) or the patient is treated for it. Answer false when\n"
        "the chart affirmatively documents that the patient does not have type 2 diabetes:\n"
        "another diabetes type, prediabetes only, transient steroid-induced hyperglycemia, or an\n"
        "explicit 'no history of diabetes'. Answer no_info when glycemic status is never\n"
        "addressed; the mere absence of diabetes from a short problem list is not a negative.\n\n"
        "When documents conflict, specialist (endocrinology) documentation outranks an emergency\n"
        "department problem list.",
        edge_cases=(
            "prediabetes_vs_diabetes",
            "family_history_mentions",
            "steroid_induced_hyperglycemia",
        ),
        keywords=("diabetes", "DM2", "T2DM", "A1c", "prediabetes", "hyperglycemia"),
    ),
    _crit(
        "diabetes_type",
        "Which type of diabetes mellitus does the patient have?",
        {
            "type": "enum",
            "enum": ["type_1", "type_2", "gestational", "other", "no_info"],
            "allows_no_info": True,
        },
        "Use the most specific clinician-documented type. 'other' covers pancreatogenic (type\n"
        "3c), monogenic and drug-induced diabetes that persists. Answer no_info when the patient\n"
        "has no diabetes (prediabetes, transient hyperglycemia) or the type is not stated.",
        edge_cases=("prediabetes_vs_diabetes", "steroid_induced_hyperglycemia"),
        keywords=("type 1", "type 2", "gestational", "pancreatogenic", "LADA", "MODY"),
    ),
    _crit(
        "dm_dx_date",
        "On what date was diabetes mellitus (any type) first diagnosed?",
        {"type": "date", "format": "YYYY-MM-DD", "allows_no_info": True},
        "Answer with a full calendar date. Use the earliest diagnosis date documented. When the\n"
        "chart gives only a year or a month ('diagnosed in 2016'), answer no_info rather than\n"
        "inventing a day.",
        edge_cases=("partial_and_conflicting_dates", "prediabetes_vs_diabetes"),
        keywords=("diagnosed", "diagnosis", "onset", "since"),
    ),
    _crit(
        "latest_hba1c",
        "What is the patient's most recent hemoglobin A1c value?",
        {"type": "number", "unit": "%", "allows_no_info": True},
        "Report the numeric result of the most recently collected HbA1c (by collection date, not\n"
        "by the date of the note that repeats it), in percent.",
        edge_cases=("most_recent_value_selection",),
        keywords=("A1c", "HbA1c", "hemoglobin A1c", "glycated"),
    ),
    _crit(
        "latest_egfr",
        "What is the patient's most recent estimated glomerular filtration rate (eGFR)?",
        {"type": "number", "unit": "mL/min/1.73m2", "allows_no_info": True},
        "Report the most recently collected eGFR, in mL/min/1.73m2, including values measured\n"
        "during a hospital stay if nothing newer exists.",
        edge_cases=("most_recent_value_selection", "aki_vs_ckd"),
        keywords=("eGFR", "GFR", "creatinine", "renal function", "BMP"),
    ),
    _crit(
        "ckd_dx",
        "Does the patient have chronic kidney disease?",
        _BOOL,
        "Answer true when a clinician documents chronic kidney disease, or when two eGFR values\n"
        "below 60 mL/min/1.73m2 are at least 90 days apart, or when albuminuria (UACR >= 30 mg/g)\n"
        "persists beyond 3 months. Answer false when eGFR values are >= 60 and no clinician\n"
        "documents CKD or albuminuria. Acute kidney injury that recovered is not CKD.",
        edge_cases=("aki_vs_ckd", "family_history_mentions"),
        keywords=("CKD", "chronic kidney disease", "nephropathy", "eGFR", "albuminuria"),
    ),
    _crit(
        "ckd_stage",
        "What is the patient's current CKD G (eGFR) category?",
        {
            "type": "enum",
            "enum": ["G1", "G2", "G3a", "G3b", "G4", "G5", "no_info"],
            "allows_no_info": True,
        },
        "Only answered when ckd_dx is true. Derive the KDIGO G category from the most recent\n"
        "eGFR (G1 >= 90, G2 60-89, G3a 45-59, G3b 30-44, G4 15-29, G5 < 15); a documented stage\n"
        "that contradicts the latest eGFR is outranked by the eGFR.",
        gate={"field_id": "ckd_dx", "value": True},
        edge_cases=("aki_vs_ckd", "most_recent_value_selection"),
        keywords=("CKD stage", "stage 3a", "stage 3b", "stage 4", "eGFR"),
    ),
    _crit(
        "uacr_category",
        "What is the KDIGO albuminuria (A) category of the most recent urine albumin-to-creatinine "
        "ratio?",
        {"type": "enum", "enum": ["A1", "A2", "A3", "no_info"], "allows_no_info": True},
        "A1 < 30 mg/g, A2 30-300 mg/g, A3 > 300 mg/g. Use only a quantitative UACR; a dipstick\n"
        "protein result does not count. Answer no_info when no UACR is in the chart.",
        edge_cases=("most_recent_value_selection",),
        keywords=("UACR", "microalbumin", "albumin/creatinine", "albuminuria"),
    ),
    _crit(
        "current_dm_meds",
        "Which glucose-lowering medications is the patient currently taking?",
        {"type": "list", "enum": DM_MEDS, "allows_no_info": True},
        "List every glucose-lowering drug on the current outpatient regimen, using the allowed\n"
        "item names. Exclude discontinued drugs, drugs only given in hospital, and drugs that\n"
        "were discussed but not started. Answer an empty list when a medication list is\n"
        "documented and contains none; answer no_info only when no medication list exists.",
        edge_cases=("historical_vs_current_medication", "steroid_induced_hyperglycemia"),
        keywords=("metformin", "insulin", "glargine", "empagliflozin", "semaglutide", "glipizide"),
    ),
    _crit(
        "on_sglt2i",
        "Is the patient currently prescribed an SGLT2 inhibitor?",
        {"type": "enum", "enum": YES_NO_ENUM, "allows_no_info": True},
        "SGLT2 inhibitors: empagliflozin, dapagliflozin, canagliflozin. A drug held during an\n"
        "admission and resumed at discharge is current; a drug stopped for an adverse effect is\n"
        "not.",
        edge_cases=("historical_vs_current_medication",),
        keywords=("empagliflozin", "dapagliflozin", "canagliflozin", "Jardiance", "Farxiga"),
    ),
    _crit(
        "ace_arb_use",
        "Is the patient currently taking an ACE inhibitor or an angiotensin receptor blocker?",
        {"type": "enum", "enum": YES_NO_ENUM, "allows_no_info": True},
        "ACE inhibitors (lisinopril, ramipril, enalapril ...) and ARBs (losartan, valsartan,\n"
        "irbesartan ...). A switch from one to the other still counts as yes; a drug stopped\n"
        "for hyperkalemia or angioedema without a replacement is no.",
        edge_cases=("historical_vs_current_medication",),
        keywords=("lisinopril", "losartan", "ramipril", "valsartan", "ACE", "ARB"),
    ),
    _crit(
        "insulin_use",
        "Is the patient currently using insulin as an outpatient?",
        _BOOL,
        "True for any basal or prandial insulin on the current outpatient regimen (including\n"
        "pump therapy). Sliding-scale insulin given only during an admission does not count.",
        edge_cases=("historical_vs_current_medication", "steroid_induced_hyperglycemia"),
        keywords=("insulin", "glargine", "lispro", "aspart", "pump", "units"),
    ),
    _crit(
        "diabetic_retinopathy",
        "Has diabetic retinopathy been diagnosed in either eye?",
        _BOOL,
        "True for any documented nonproliferative or proliferative diabetic retinopathy or\n"
        "diabetic macular edema, current or treated. False when an eye examination documents no\n"
        "diabetic retinopathy; hypertensive retinopathy alone is false. no_info when no eye\n"
        "examination result is documented.",
        edge_cases=("family_history_mentions",),
        keywords=("retinopathy", "NPDR", "PDR", "dilated eye exam", "macular edema", "fundus"),
    ),
]

EDGE_CASES: dict[str, str] = {
    "prediabetes_vs_diabetes": (
        "# Prediabetes versus diabetes\n\n"
        "HbA1c 5.7-6.4 % or fasting glucose 100-125 mg/dL is prediabetes, not diabetes. A\n"
        "note that says 'borderline sugars' or 'A1c elevated' without a diabetes diagnosis\n"
        "is prediabetes. Lifestyle counselling or a metformin discussion does not make it\n"
        "diabetes. Resolved gestational diabetes is a past diagnosis of gestational diabetes.\n"
    ),
    "family_history_mentions": (
        "# Family history mentions\n\n"
        "Conditions listed under FAMILY HISTORY ('mother with type 2 diabetes', 'father on\n"
        "hemodialysis for diabetic nephropathy', 'sister with diabetic retinopathy') belong to\n"
        "relatives and never answer a criterion about the patient.\n"
    ),
    "historical_vs_current_medication": (
        "# Historical versus current medication\n\n"
        "A drug is current when it appears on the most recent outpatient medication list or\n"
        "discharge medication list without a stop. 'Discontinued', 'stopped', 'previously on',\n"
        "'held' without a resume instruction, and inpatient-only orders are not current. The\n"
        "most recent document wins over older notes that still list the drug.\n"
    ),
    "steroid_induced_hyperglycemia": (
        "# Steroid-induced hyperglycemia\n\n"
        "Hyperglycemia during glucocorticoid therapy, with a normal HbA1c and resolution after\n"
        "the taper, is not diabetes. Inpatient correctional insulin for it is not outpatient\n"
        "insulin use. Only persistent diabetes after steroids would be diabetes type 'other'.\n"
    ),
    "aki_vs_ckd": (
        "# Acute kidney injury versus chronic kidney disease\n\n"
        "A creatinine rise during an acute illness that returns to baseline is AKI, not CKD.\n"
        "Do not stage CKD from values measured during the AKI. CKD needs abnormal kidney\n"
        "markers for more than 3 months.\n"
    ),
    "most_recent_value_selection": (
        "# Selecting the most recent value\n\n"
        "Order results by collection date. Progress notes often quote an older result in the\n"
        "history ('last A1c 8.1 %'); the lab report with a later collection date wins. If two\n"
        "results share a date, prefer the laboratory value over point-of-care.\n"
    ),
    "partial_and_conflicting_dates": (
        "# Partial and conflicting dates\n\n"
        "A year alone or a month and year is not a full date: answer no_info. When two\n"
        "documents give different full dates for the same diagnosis, use the earliest one\n"
        "that the chart supports with a result or a clinician statement.\n"
    ),
}

SKILL_MD = f"""# {SKILL_NAME}

Synthetic phenotype skill used by the judgeflow sample data. It identifies adults with type 2
diabetes mellitus and chronic kidney disease and extracts the facts a registry needs: diabetes
type and diagnosis date, the latest HbA1c and eGFR, the CKD G and A categories, current
glucose-lowering and renin-angiotensin therapy, and diabetic retinopathy.

## How criteria are answered

- Each criterion lives in `references/criteria/<field_id>.md`: YAML front matter (the exact
  prompt and the answer schema) followed by the definition an agent must apply.
- Answer with a value allowed by `answer_schema`: booleans as `true`/`false`, enum values
  exactly as listed, numbers in the stated unit, dates as `YYYY-MM-DD`, lists as item names
  from the enum. Use `no_info` when the chart does not answer the question.
- Cite evidence: a verbatim quote from a note with its character offsets.
- Gated criteria (`gate`) are only answered when the gate criterion has the gate value
  (for example `ckd_stage` only when `ckd_dx` is true).
- Edge cases in `references/edge_cases/` describe the traps that recur in real charts:
  family history, historical medications, steroid-induced hyperglycemia, AKI, partial dates.

Task id: `{TASK_ID}`.
"""


def criterion_text(crit: dict[str, Any]) -> str:
    """One criterion file: YAML front matter then the prose body."""
    head = yaml.safe_dump(crit["head"], sort_keys=False, width=100, allow_unicode=False)
    return f"---\n{head}---\n{crit['body']}\n"


def skill_files() -> dict[str, str]:
    """Every file of the skill folder, by path relative to the folder."""
    files = {"SKILL.md": SKILL_MD}
    for crit in CRITERIA:
        files[f"references/criteria/{crit['head']['field_id']}.md"] = criterion_text(crit)
    for name, text in EDGE_CASES.items():
        files[f"references/edge_cases/{name}.md"] = text
    return files


def schema_of(field_id: str) -> dict[str, Any]:
    for crit in CRITERIA:
        if crit["head"]["field_id"] == field_id:
            return dict(crit["head"]["answer_schema"])
    raise KeyError(field_id)


FIELD_IDS: list[str] = [c["head"]["field_id"] for c in CRITERIA]
