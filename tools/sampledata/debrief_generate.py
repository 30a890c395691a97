"""Generate ``debrief_requests.jsonl``: ``python -m tools.sampledata.debrief_generate``.

Deterministic (fixed timestamps, no randomness) so the checked-in file only changes when
this script does. Every request validates against :class:`schemas.medkit.DebriefRequest`.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from agents.debrief.sampledata import REQUESTS_FILE
from schemas.medkit import DebriefRequest
from tools.sampledata.debrief_cases import ANKLE, CHEST_PAIN, PAEDS_FEVER, SEPSIS, crit

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def at(minute: float) -> str:
    return (T0 + timedelta(minutes=minute)).isoformat()


def qa(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"question": q, "answer": a, "at": at(i)} for i, (q, a) in enumerate(pairs)]


def request(rid: str, case: dict[str, Any], log: dict[str, Any], *, minute: int,
            rubric: Any = "case") -> dict[str, Any]:
    body = copy.deepcopy({k: v for k, v in case.items() if k != "rubric"})
    body["rubric"] = copy.deepcopy(case.get("rubric")) if rubric == "case" else rubric
    body.update(request_id=rid, trainee_id=f"trainee-{rid[-3:]}", requested_at=at(minute),
                encounter_log={"started_at": at(0), "ended_at": at(minute), **log})
    return body


CP_HISTORY = qa(("When did the pain start?", "About forty minutes ago, at rest."),
                ("Does the pain spread anywhere?", "Down my left arm and into my jaw."),
                ("Do you smoke or have diabetes?", "I smoke twenty a day."),
                ("You look worried - what scares you most?",
                 "My dad died of a heart attack at fifty-two."))
CP_GOOD = {
    "history": CP_HISTORY,
    "tests": [{"name": "12-lead ECG", "ordered_at": at(4),
               "result": "ST elevation in II, III and aVF", "resulted_at": at(6)},
              {"name": "high-sensitivity troponin", "ordered_at": at(7)}],
    "treatments": [{"name": "aspirin", "dose": "300 mg chewed", "at": at(8)}],
    "escalations": [{"action": "activated the cath lab for primary PCI", "at": at(9)}],
    "safety_netting": ["I told him to tell the nurse immediately if the pain gets worse."],
    "submitted_diagnosis": "inferior STEMI", "diagnosis_correct": True,
}
CP_POOR = {
    "history": CP_HISTORY[:1],
    "tests": [{"name": "high-sensitivity troponin", "ordered_at": at(25)}],
    "prescriptions": [{"drug": "omeprazole", "dose": "20 mg", "route": "oral",
                       "frequency": "once daily", "at": at(30)}],
    "submitted_diagnosis": "gastro-oesophageal reflux", "diagnosis_correct": False,
}
SEP_HISTORY = qa(("Any burning when passing urine?", "Yes, for three days, and back pain."),
                 ("Are you allergic to any medicines?",
                  "Penicillin - my throat swelled up once."))
SEP_GOOD = {
    "history": SEP_HISTORY,
    "tests": [{"name": "blood cultures x2", "ordered_at": at(5)},
              {"name": "venous lactate", "ordered_at": at(5), "result": "4.6 mmol/L"}],
    "treatments": [{"name": "Hartmann's solution bolus", "dose": "30 ml/kg", "at": at(10)}],
    "prescriptions": [{"drug": "gentamicin", "dose": "5 mg/kg", "route": "IV", "at": at(20)},
                      {"drug": "teicoplanin", "dose": "800 mg", "route": "IV", "at": at(22)}],
    "escalations": [{"action": "referred to critical care outreach", "at": at(25)}],
    "safety_netting": ["I explained to her daughter that this is a serious infection."],
    "submitted_diagnosis": "urosepsis with septic shock", "diagnosis_correct": True,
}
SEP_PIPTAZ = {**SEP_GOOD, "prescriptions": [
    {"drug": "piperacillin-tazobactam", "dose": "4.5 g", "route": "IV", "at": at(18)}]}
SEP_LATE = {
    "history": SEP_HISTORY[:1],
    "tests": [{"name": "blood cultures x2", "ordered_at": at(70)}],
    "treatments": [{"name": "0.9% saline", "dose": "500 ml", "at": at(40)}],
    "prescriptions": [{"drug": "meropenem", "dose": "1 g", "route": "IV", "at": at(95)}],
    "escalations": [{"action": "asked ICU to review", "at": at(100)}],
    "submitted_diagnosis": "urinary tract infection", "diagnosis_correct": False,
}
PF_HISTORY = qa(("Is she feeding as usual, and how many wet nappies today?",
                 "Only half her bottles and two wet nappies."),
                ("Have you noticed any rash?", "No rash."),
                ("What worries you most about her?", "That it could be meningitis."))
PF_GOOD = {
    "history": PF_HISTORY,
    "tests": [{"name": "observations incl. capillary refill", "ordered_at": at(3),
               "result": "HR 165, RR 40, capillary refill 2 s"},
              {"name": "clean-catch urine dipstick and culture", "ordered_at": at(8),
               "result": "nitrite and leucocyte positive"}],
    "prescriptions": [{"drug": "paracetamol", "dose": "15 mg/kg", "route": "oral",
                       "at": at(12)}],
    "safety_netting": ["Come back at once or call 999 if she becomes floppy, drowsy or "
                       "develops a rash; here is the fever leaflet."],
    "submitted_diagnosis": "urinary tract infection", "diagnosis_correct": True,
}
PF_NO_NET = {**PF_GOOD, "safety_netting": []}
PF_ASPIRIN = {**PF_GOOD, "prescriptions": [
    {"drug": "aspirin", "dose": "75 mg", "route": "oral", "at": at(12)}]}
ANKLE_LOG = {
    "history": qa(("When did it happen and how did you land?",
                   "An hour ago, I rolled it inwards."),
                  ("Could you walk on it afterwards?", "Yes, four steps with a limp."),
                  ("Any medical problems or medication, any allergies?", "None."),
                  ("What are you worried about?", "Missing the cup final.")),
    "tests": [{"name": "Ottawa ankle rules examination", "ordered_at": at(6),
               "result": "no bony tenderness"}],
    "treatments": [{"name": "ice, compression and elevation advice", "at": at(10)}],
    "safety_netting": ["Come back if you cannot bear weight or the pain is worse in a week; "
                       "I explained it is a ligament sprain and the plan."],
    "submitted_diagnosis": "lateral ankle sprain", "diagnosis_correct": True,
}
CP_MISSING_REC = copy.deepcopy(CHEST_PAIN)
CP_MISSING_REC["rubric"]["clinical_management"].append(
    crit("cp-cm-statin", "Starts high-intensity statin", "any", "atorvastatin",
         ref="ESC-STEMI-STATIN"))
EMPTY_RUBRIC: dict[str, list[Any]] = {
    "data_gathering": [], "clinical_management": [], "interpersonal": []}


def build() -> list[dict[str, Any]]:
    return [
        request("req-cp-001", CHEST_PAIN, CP_GOOD, minute=15),
        request("req-cp-002", CHEST_PAIN, CP_POOR, minute=35),
        request("req-cp-003", CP_MISSING_REC, {**CP_GOOD, "prescriptions": [
            {"drug": "atorvastatin", "dose": "80 mg", "route": "oral", "at": at(12)}]},
            minute=16),
        request("req-sep-001", SEPSIS, SEP_GOOD, minute=30),
        request("req-sep-002", SEPSIS, SEP_PIPTAZ, minute=30),
        request("req-sep-003", SEPSIS, SEP_LATE, minute=105),
        request("req-pf-001", PAEDS_FEVER, PF_GOOD, minute=20),
        request("req-pf-002", PAEDS_FEVER, PF_NO_NET, minute=18),
        request("req-pf-003", PAEDS_FEVER, PF_ASPIRIN, minute=20),
        request("req-ank-001", ANKLE, ANKLE_LOG, minute=15, rubric=None),
        request("req-ank-002", ANKLE, ANKLE_LOG, minute=15, rubric=EMPTY_RUBRIC),
    ]


def write(path: Path = REQUESTS_FILE) -> int:
    lines = [orjson.dumps(DebriefRequest.model_validate(r).model_dump(
        mode="json", exclude_none=True)) for r in build()]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return len(lines)


if __name__ == "__main__":
    print(f"wrote {write()} requests to {REQUESTS_FILE}")
