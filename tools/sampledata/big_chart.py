"""Charts of real size, where the deciding evidence lies outside the assembled context.

``build(out)`` writes, for the bundled sample skill's task:

* ``charts/<patient>/<note>.txt``: one patient with ``big`` notes of about 10 KB (400 notes:
  about 4 MB) and ``others`` patients with ``small`` notes each; synthetic filler (vitals,
  exam, plans) with dates of service and note types in the header;
* in every chart, for three criteria (``on_sglt2i``, ``insulin_use``, ``ace_arb_use``), an
  old medication stopped years ago and mentioned in many notes by its keyword ("Stopped
  lisinopril in 2017 ..."), and one recent note that settles the cell by a brand name the
  criterion's keywords miss ("Started Entresto 24/26 mg ...");
* ``answers.jsonl``: two agents disagree on every such cell: ``default`` answers from the
  old mentions (wrong), ``skeptical`` says the patient is on it now without citing a note;
* ``adjudications.jsonl``: the reviewers' verdict (the recent note decides).

The judge's assembled context fills with the keyword mentions; the deciding sentence is
found only by searching beyond the keywords (the chart tools). Deterministic for a seed.
    python -m tools.sampledata.big_chart OUT [--big 400] [--small 60] [--others 4]
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

TASK = "t2dm-ckd-v1"
NOTE_CHARS = 10_000
TYPES = ("PRIMARY CARE PROGRESS NOTE", "CARDIOLOGY CLINIC NOTE", "NEPHROLOGY CLINIC NOTE",
         "TELEPHONE ENCOUNTER", "NURSING NOTE", "PHYSICAL THERAPY NOTE", "RADIOLOGY REPORT")
FILLER = (
    "Vital signs: blood pressure {a}/{b} mmHg, heart rate {c} beats per minute, afebrile.",
    "Patient reports walking {c} minutes most days and sleeping well.",
    "Lungs clear to auscultation bilaterally; no wheezes or crackles.",
    "Heart with regular rate and rhythm, no murmurs, rubs or gallops.",
    "Abdomen soft, nontender, bowel sounds present in all quadrants.",
    "Extremities without edema; pedal pulses palpable and symmetric.",
    "Discussed sodium restriction and home blood pressure monitoring.",
    "Weight {c} kg, stable compared with the previous visit.",
    "Reviewed recent laboratory results with the patient in detail.",
    "Follow-up visit scheduled in {a} days with repeat basic metabolic panel.",
    "Patient declines influenza vaccination today after discussion of benefits.",
    "Foot examination performed: skin intact, monofilament sensation preserved.",
    "Creatinine {d} mg/dL, potassium 4.{c} mmol/L, sodium 13{b} mmol/L.",
    "Chest radiograph shows no acute cardiopulmonary process.",
    "Counseled on smoking cessation; patient has not smoked for {c} years.",
    "Mood stable, denies low mood or anxiety, engaged in the visit.",
)
#: criterion -> (answer when on it, answer when not, old mention, deciding sentence)
CELLS: dict[str, tuple[Any, Any, str, str]] = {
    "on_sglt2i": ("yes", "no",
                  "Stopped empagliflozin in 2019 because of recurrent genital mycotic "
                  "infections.",
                  "Started Synjardy 12.5/1000 mg twice daily for glycemic and cardiorenal "
                  "benefit."),
    "insulin_use": (True, False,
                    "Stopped insulin glargine in 2018 after weight loss and better control.",
                    "Started Tresiba 10 U nightly at bedtime for rising fasting glucose."),
    "ace_arb_use": ("yes", "no",
                    "Stopped lisinopril in 2017 because of a persistent dry cough.",
                    "Started Entresto 24/26 mg twice daily for heart failure with reduced "
                    "ejection fraction."),
}


def note_text(rng: random.Random, patient: str, i: int, extra: list[str]) -> str:
    day = date(2016, 1, 4) + timedelta(days=7 * i)
    lines = ["SYNTHETIC TEST RECORD - generated for software testing; not a real patient.",
             rng.choice(TYPES), f"Patient: {patient}    MRN: SYN-{patient}",
             f"Date of service: {day.isoformat()}", "", "ASSESSMENT AND PLAN"]
    body = list(extra)
    size = sum(len(x) for x in lines)
    while size < NOTE_CHARS:
        s = rng.choice(FILLER).format(a=rng.randint(100, 160), b=rng.randint(60, 95),
                                      c=rng.randint(2, 9), d=f"1.{rng.randint(0, 9)}")
        body.insert(rng.randint(0, len(body)), s)
        size += len(s) + 1
    return "\n".join(lines + body) + "\n"


def chart(rng: random.Random, patient: str, n: int) -> dict[str, str]:
    notes: dict[str, str] = {}
    deciding = max(0, n - 8)
    for i in range(n):
        extra = [old for _, _, old, _ in CELLS.values() if i % 13 == 5]
        if i == deciding:
            extra += [new for _, _, _, new in CELLS.values()]
        notes[f"{patient}-N{i + 1:04d}"] = note_text(rng, patient, i, extra)
    return notes


def records(patient: str, notes: dict[str, str], n: int) -> tuple[list[dict[str, Any]],
                                                                 list[dict[str, Any]]]:
    answers, adjudications = [], []
    at = datetime(2024, 6, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=n)
    for k, (field, (yes, no, old, _)) in enumerate(CELLS.items()):
        cited = next(nid for nid, t in notes.items() if old in t)
        start = notes[cited].index(old)
        base = {"schema_version": 1, "task_id": TASK, "patient_id": patient,
                "field_id": field, "low_confidence_reason": None}
        stamp = (at + timedelta(seconds=k)).isoformat().replace("+00:00", "Z")
        answers += [
            {**base, "event_id": f"evt-big-{patient}-{field}-a", "run_id": "run-default-big",
             "agent_id": "default", "answer": no, "confidence": 0.8, "emitted_at": stamp,
             "evidence": [{"note_id": cited, "quote": old, "offsets": [start, start + len(old)]}],
             "rationale": "The chart documents that the medication was stopped."},
            {**base, "event_id": f"evt-big-{patient}-{field}-b", "run_id": "run-skeptical-big",
             "agent_id": "skeptical", "answer": yes, "confidence": 0.6, "emitted_at": stamp,
             "evidence": [], "rationale": "Recent specialist notes suggest a newer agent was "
             "started; I could not find the exact note."}]
        adjudications.append({"cell": f"{TASK}|{patient}|{field}", "task_id": TASK,
                              "patient_id": patient, "field_id": field, "final_answer": yes,
                              "classification": "agent_a_error",
                              "agent_correctness": "agent_b",
                              "adjudicator": "synthetic-reviewer-1",
                              "adjudicated_at": stamp})
    return answers, adjudications


def build(out: Path, big: int = 400, small: int = 60, others: int = 4, seed: int = 28) -> dict[
        str, int]:
    rng = random.Random(seed)
    answers: list[dict[str, Any]] = []
    adjudications: list[dict[str, Any]] = []
    sizes = {}
    for p, n in [("PB01", big), *((f"PB{i + 2:02d}", small) for i in range(others))]:
        notes = chart(rng, p, n)
        folder = out / "charts" / p
        folder.mkdir(parents=True, exist_ok=True)
        for note_id, text in notes.items():
            (folder / f"{note_id}.txt").write_text(text)
        sizes[p] = sum(len(t) for t in notes.values())
        a, j = records(p, notes, n)
        answers += a
        adjudications += j
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (out / "adjudications.jsonl").write_text("".join(json.dumps(j) + "\n"
                                                     for j in adjudications))
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write charts of real size whose deciding "
                                     "evidence lies outside the judge's assembled context.")
    parser.add_argument("out", type=Path)
    parser.add_argument("--big", type=int, default=400, help="notes of the large chart")
    parser.add_argument("--small", type=int, default=60, help="notes of each other chart")
    parser.add_argument("--others", type=int, default=4, help="other patients")
    args = parser.parse_args(argv)
    sizes = build(args.out, args.big, args.small, args.others)
    for p, n in sizes.items():
        print(f"{p}: {n / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
