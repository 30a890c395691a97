"""Building blocks of one agent answer: evidence quotes, rationales and format variants."""

from __future__ import annotations

from datetime import date
from typing import Any

from tools.sampledata.charts import Note
from tools.sampledata.profiles import Profile
from tools.sampledata.skill_files import INSULINS, SGLT2

Quote = tuple[str, str, tuple[int, int]]  # note_id, verbatim quote, [start, end)

#: Format-drift categories, each turning a raw answer into an equal-but-differently-written one.
DRIFT_CATEGORIES = (
    "bool_yes_string", "bool_word", "no_info_null", "enum_case", "enum_whitespace",
    "yes_no_boolean", "number_unit", "number_float", "number_string", "date_us", "date_long",
    "date_day_month", "date_slash", "list_case",
)

LOW_REASONS = {
    "t2dm_dx": "Diabetes is mentioned only in passing; no problem-list entry.",
    "diabetes_type": "Type is stated in one note only.",
    "dm_dx_date": "Diagnosis date appears once and is not corroborated.",
    "latest_hba1c": "Result seen only in the lab report; collection date partly illegible.",
    "latest_egfr": "Two estimates in the chart; unsure which the registry wants.",
    "ckd_dx": "Kidney diagnosis relies on laboratory values rather than a clinician statement.",
    "ckd_stage": "Stage inferred from a single eGFR value.",
    "uacr_category": "Only one quantitative UACR available.",
    "current_dm_meds": "Medication list and clinic note were written on different dates.",
    "on_sglt2i": "Medication list may not reflect recent changes.",
    "ace_arb_use": "Antihypertensive regimen changed recently.",
    "insulin_use": "Insulin use is not mentioned in the most recent note.",
    "diabetic_retinopathy": "Eye examination report is brief.",
}


class Anchors:
    """Tag -> anchored quotes of one patient, newest note first."""

    def __init__(self, notes: list[Note]) -> None:
        self.notes = {n.note_id: n for n in notes}
        self.by_tag: dict[str, list[Quote]] = {}
        for note in sorted(notes, key=lambda n: (n.when, n.note_id), reverse=True):
            for a in note.anchors:
                quote = (note.note_id, note.text[a.start:a.end], (a.start, a.end))
                self.by_tag.setdefault(a.tag, []).append(quote)

    def first(self, tag: str) -> Quote | None:
        found = self.by_tag.get(tag)
        return found[0] if found else None

    def pick(self, tags: list[str], limit: int = 2) -> list[Quote]:
        out: list[Quote] = []
        for tag in tags:
            q = self.first(tag)
            if q and q not in out:
                out.append(q)
            if len(out) >= limit:
                break
        return out


def truth_tags(field: str, value: Any, p: Profile) -> list[str]:
    """Anchor tags that support the true answer ``value`` of ``field``."""
    if value in ("no_info", None):
        return []
    if field == "current_dm_meds":
        return [f"med:{k}" for k in value] if value else ["current_dm_meds", "medlist"]
    if field == "on_sglt2i":
        return [f"med:{k}" for k in SGLT2] if value == "yes" else [
            *(f"stopped:{k}" for k in SGLT2), "medlist"]
    if field == "ace_arb_use":
        return ["acearb", "ace_arb_use"] if value == "yes" else ["stopped:acearb", "medlist"]
    if field == "insulin_use":
        return [f"med:{k}" for k in INSULINS] if value else ["insulin_use", "medlist"]
    if field == "ckd_dx":
        return ["ckd_dx", "latest_egfr"]
    return [field]


def _meds_text(value: list[str]) -> str:
    return ", ".join(v.replace("_", " ") for v in value) if value else "none"


def rationale(field: str, value: Any) -> str:
    """One sentence explaining a (true) answer."""
    if value in ("no_info", None):
        return {
            "diabetes_type": "No diabetes type can be assigned from the documentation.",
            "dm_dx_date": "No full diagnosis date of diabetes is documented.",
            "latest_hba1c": "No HbA1c result appears in the available notes.",
            "uacr_category": "No quantitative urine albumin-to-creatinine ratio in the chart.",
            "diabetic_retinopathy": "No eye examination result is documented.",
            "current_dm_meds": "No medication list is available.",
        }.get(field, "The available notes do not address this question.")
    yes = value in (True, "yes")
    if field == "current_dm_meds":
        return f"Current glucose-lowering medications: {_meds_text(value)}."
    pair = _YES_NO_TEXT.get(field)
    if pair:
        return pair[0] if yes else pair[1]
    return _VALUE_TEXT[field].format(value=value)


_YES_NO_TEXT = {
    "t2dm_dx": ("Type 2 diabetes mellitus is documented on the problem list.",
                "The chart documents a condition other than type 2 diabetes."),
    "ckd_dx": ("Chronic kidney disease is documented or shown by persistent eGFR below 60.",
               "Kidney function is normal and no CKD is documented."),
    "on_sglt2i": ("An SGLT2 inhibitor is on the current medication list.",
                  "No SGLT2 inhibitor is currently prescribed."),
    "ace_arb_use": ("An ACE inhibitor or ARB is currently prescribed.",
                    "No ACE inhibitor or ARB is on the current regimen."),
    "insulin_use": ("Insulin is on the current outpatient regimen.",
                    "No outpatient insulin is prescribed."),
    "diabetic_retinopathy": ("Diabetic retinopathy is documented on eye examination.",
                             "The dilated eye examination shows no diabetic retinopathy."),
}
_VALUE_TEXT = {
    "diabetes_type": "The clinician documents diabetes of type {value}.",
    "dm_dx_date": "The diagnosis date {value} is documented in the history.",
    "latest_hba1c": "The most recently collected HbA1c is {value} %.",
    "latest_egfr": "The most recently collected eGFR is {value} mL/min/1.73m2.",
    "ckd_stage": "The latest eGFR places the patient in KDIGO category {value}.",
    "uacr_category": "The latest UACR falls in albuminuria category {value}.",
}


def drift(category: str, schema: dict[str, Any], value: Any, flip: int) -> Any:
    """``value`` rewritten in another format of the same canonical value, or None if n/a."""
    kind = schema["type"]
    if category == "no_info_null":
        return None if value == "no_info" else _SKIP
    if value == "no_info":
        return _SKIP
    if kind == "boolean":
        if category == "bool_yes_string":
            return "yes" if value else "no"
        if category == "bool_word":
            return (["Yes", "present", "Y"] if value else ["No", "negative", "absent"])[flip % 3]
    if kind == "enum" and isinstance(value, str):
        yes_no = value in ("yes", "no")
        if category == "enum_case" and not yes_no:
            return value.lower() if value[0] in "GA" else value.capitalize()
        if category == "enum_whitespace" and yes_no:
            return f" {value} " if flip % 2 else f"{value.capitalize()} "
        if category == "yes_no_boolean" and yes_no:
            return value == "yes"
    if kind == "number" and isinstance(value, int | float):
        unit = schema.get("unit") or ""
        if category == "number_unit":
            tight = unit == "%" and flip % 2 == 0
            return f"{value}{unit}" if tight else f"{value} {unit}"
        if category == "number_float" and isinstance(value, int):
            return float(value)
        if category == "number_string":
            return f" {value} " if flip % 2 else str(value)
    if kind == "date" and isinstance(value, str):
        d = date.fromisoformat(value)
        forms = {"date_us": f"{d:%m/%d/%Y}", "date_long": f"{d:%B} {d.day}, {d.year}",
                 "date_day_month": f"{d.day} {d:%B} {d.year}", "date_slash": f"{d:%Y/%m/%d}"}
        if category in forms:
            return forms[category]
    if kind == "list" and category == "list_case" and isinstance(value, list) and value:
        return [value[0].capitalize(), *value[1:]]
    return _SKIP


class _Skip:
    def __repr__(self) -> str:
        return "SKIP"


_SKIP: Any = _Skip()
SKIP = _SKIP
