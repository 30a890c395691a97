"""Synthetic simulator cases: summary, authored rubric and registry slice (invented for
training demos; the recIds name real guideline families but the texts are paraphrases)."""

from __future__ import annotations

from typing import Any


def crit(cid: str, text: str, section: str, *phrases: str, ref: str | None = None,
         weight: float = 1.0) -> dict[str, Any]:
    return {"id": cid, "text": text, "weight": weight, "guideline_ref": ref,
            "checklist": {"section": section, "any_of": list(phrases)}}


def rec(rec_id: str, guideline: str, text: str) -> dict[str, Any]:
    return {"recId": rec_id, "guidelineId": guideline, "text": text, "strength": "strong"}


CHEST_PAIN: dict[str, Any] = {
    "case_id": "chest-pain-stemi",
    "case_summary": {
        "chief_complaint": "central chest pain for 40 minutes",
        "correct_diagnosis": "acute inferior STEMI", "severity": "critical",
        "red_flags": [{"flag_id": "st-elevation", "finding": "ST elevation in II, III, aVF",
                       "escalation_any_of": ["cath lab", "primary PCI", "cardiology"]}]},
    "rubric": {
        "data_gathering": [
            crit("cp-dg-onset", "Establishes onset and duration of the pain", "history",
                 "when did", "how long"),
            crit("cp-dg-character", "Explores character and radiation of the pain", "history",
                 "spread", "radiat", "describe"),
            crit("cp-dg-risk", "Asks about cardiovascular risk factors", "history", "smoke",
                 "diabetes", "family"),
        ],
        "clinical_management": [
            crit("cp-cm-ecg", "Obtains a 12-lead ECG within 10 minutes", "tests", "ecg",
                 ref="ESC-STEMI-ECG10", weight=2.0),
            crit("cp-cm-aspirin", "Gives an aspirin loading dose", "any", "aspirin",
                 ref="ESC-STEMI-ASA"),
            crit("cp-cm-pci", "Activates the cath lab for primary PCI", "escalations",
                 "cath lab", "primary pci", ref="ESC-STEMI-PCI", weight=2.0),
        ],
        "interpersonal": [
            crit("cp-ip-ice", "Acknowledges the patient's fear", "history", "worried",
                 "scared", "frightened"),
        ],
        "safety_netting": [
            crit("cp-sn-warn", "Tells the patient what to report at once", "safety_netting",
                 "tell", "straight away", "immediately"),
        ],
    },
    "registry_slice": {
        "guidelines": [{"guidelineId": "ESC-ACS-2023", "title": "Acute coronary syndromes",
                        "publisher": "ESC", "year": 2023}],
        "recommendations": [
            rec("ESC-STEMI-ECG10", "ESC-ACS-2023",
                "Record and read a 12-lead ECG within 10 minutes of first contact."),
            rec("ESC-STEMI-ASA", "ESC-ACS-2023",
                "Give an oral aspirin loading dose unless contraindicated."),
            rec("ESC-STEMI-PCI", "ESC-ACS-2023",
                "Primary PCI is the preferred reperfusion strategy within 120 minutes."),
        ]},
}

SEPSIS: dict[str, Any] = {
    "case_id": "adult-sepsis-uti",
    "case_summary": {
        "chief_complaint": "fever, confusion and low blood pressure",
        "correct_diagnosis": "septic shock from pyelonephritis", "severity": "critical",
        "contraindications": [
            {"drug": "piperacillin", "reason": "documented penicillin anaphylaxis",
             "guideline_ref": "SSC-ALLERGY"},
            {"drug": "amoxicillin", "reason": "documented penicillin anaphylaxis",
             "guideline_ref": "SSC-ALLERGY"}],
        "red_flags": [{"flag_id": "lactate-high", "finding": "lactate above 4 mmol/L with "
                       "hypotension", "escalation_any_of": ["critical care", "icu",
                                                            "outreach"]}]},
    "rubric": {
        "data_gathering": [
            crit("sep-dg-source", "Looks for the source of infection", "history", "urine",
                 "cough", "wound"),
            crit("sep-dg-allergy", "Checks drug allergies before prescribing", "history",
                 "allerg"),
        ],
        "clinical_management": [
            crit("sep-cm-cultures", "Takes blood cultures before antibiotics", "tests",
                 "blood culture", ref="SSC-CULTURES"),
            crit("sep-cm-lactate", "Measures lactate", "tests", "lactate",
                 ref="SSC-LACTATE"),
            crit("sep-cm-abx", "Gives broad-spectrum antibiotics within one hour",
                 "prescriptions", "gentamicin", "meropenem", "teicoplanin",
                 ref="SSC-ABX-1H", weight=2.0),
            crit("sep-cm-fluids", "Gives 30 ml/kg crystalloid for hypotension", "treatments",
                 "crystalloid", "hartmann", "saline", ref="SSC-FLUIDS-30"),
        ],
        "interpersonal": [
            crit("sep-ip-explain", "Explains the seriousness to the patient's family",
                 "safety_netting", "explain", "serious"),
        ],
    },
    "registry_slice": {
        "guidelines": [{"guidelineId": "SSC-2021", "title": "Surviving Sepsis Campaign",
                        "year": 2021}],
        "recommendations": [
            rec("SSC-CULTURES", "SSC-2021", "Take blood cultures before antimicrobials."),
            rec("SSC-LACTATE", "SSC-2021", "Measure blood lactate in suspected sepsis."),
            rec("SSC-ABX-1H", "SSC-2021",
                "Start antimicrobials within one hour when shock is likely."),
            rec("SSC-FLUIDS-30", "SSC-2021",
                "Give at least 30 ml/kg of crystalloid within three hours for hypotension."),
            rec("SSC-ALLERGY", "SSC-2021",
                "Choose agents that avoid the patient's documented severe allergies."),
        ]},
}

PAEDS_FEVER: dict[str, Any] = {
    "case_id": "paeds-fever-infant",
    "case_summary": {
        "chief_complaint": "8-month-old with fever for two days",
        "correct_diagnosis": "urinary tract infection", "severity": "high",
        "contraindications": [{"drug": "aspirin", "reason": "Reye syndrome risk under 16",
                               "guideline_ref": "NG143-ASPIRIN"}]},
    "rubric": {
        "data_gathering": [
            crit("pf-dg-feeding", "Asks about feeding and wet nappies", "history", "feed",
                 "nappies"),
            crit("pf-dg-rash", "Asks about a rash", "history", "rash"),
        ],
        "clinical_management": [
            crit("pf-cm-vitals", "Records heart rate, respiratory rate and capillary refill",
                 "tests", "capillary refill", "observations", ref="NG143-1.2.1"),
            crit("pf-cm-urine", "Tests a urine sample", "tests", "urine",
                 ref="NG143-1.3.7", weight=2.0),
            crit("pf-cm-antipyretic", "Uses paracetamol or ibuprofen for distress only",
                 "prescriptions", "paracetamol", "ibuprofen", ref="NG143-1.6.1"),
        ],
        "interpersonal": [
            crit("pf-ip-parent", "Explores the parent's concerns", "history", "worr",
                 "concern"),
        ],
        "safety_netting": [
            crit("pf-sn-advice", "Gives verbal and written safety-netting advice",
                 "safety_netting", "come back", "leaflet", "call", ref="NG143-1.5.3"),
        ],
    },
    "registry_slice": {
        "guidelines": [{"guidelineId": "NICE-NG143", "title": "Fever in under 5s",
                        "publisher": "NICE", "year": 2021}],
        "recommendations": [
            rec("NG143-1.2.1", "NICE-NG143", "Measure and record temperature, heart rate, "
                "respiratory rate and capillary refill time."),
            rec("NG143-1.3.7", "NICE-NG143",
                "Test urine in infants with fever without an apparent source."),
            rec("NG143-1.6.1", "NICE-NG143", "Consider antipyretics only for a distressed "
                "child; they do not prevent febrile seizures."),
            rec("NG143-1.5.3", "NICE-NG143", "Give parents written and verbal advice on "
                "warning signs and how to get help."),
            rec("NG143-ASPIRIN", "NICE-NG143", "Do not give aspirin to children."),
        ]},
}

ANKLE: dict[str, Any] = {
    "case_id": "ankle-inversion",
    "case_summary": {"chief_complaint": "twisted ankle playing football",
                     "correct_diagnosis": "lateral ankle sprain", "severity": "low"},
    "registry_slice": {"guidelines": [], "recommendations": []},
}
