//! `decide.decide` for a complete cell (every expected agent answered, no other agent), and
//! the job and outcome records of `encode.py`, as orjson writes them.

use sha2::{Digest, Sha256};

use crate::json::{write_list, write_str, write_str_list};
use crate::normalize::Form;

/// One answer of the cell, in the expected agents' order.
pub struct Ranked<'a> {
    pub agent_id: &'a str,
    /// The stored JSON of the answer (`model_dump(mode="json")`).
    pub json: &'a [u8],
    pub form: Form,
    pub low: bool,
}

/// `schemas.ids.derive_id(*parts)`: sha256 hex of the parts joined by `\x1f`, 32 digits.
pub fn derive_id(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update(b"\x1f");
        }
        h.update(p.as_bytes());
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = h.finalize();
    let mut out = String::with_capacity(32);
    for b in &digest[..16] {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 15) as usize] as char);
    }
    out
}

/// What the Python path emits for a complete cell: (kind, record JSON, label) in its order.
pub struct Decided {
    pub inputs_id: String,
    pub emits: Vec<(&'static str, Vec<u8>, String)>,
}

fn field(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// The cell's ids (`task|patient|field` parts), the ranked answers, the decision's source
/// and clock stamp.
pub fn decide(ids: [&str; 3], key: &str, ranked: &[Ranked], source: (&str, i64, i64),
              stamp: &str) -> Decided {
    let canon: Vec<&str> = ranked.iter().map(|r| r.form.canonical_json.as_str()).collect();
    let mut kinds: Vec<&'static str> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    if canon.iter().any(|c| *c != canon[0]) {
        kinds.push("disagreement");
        let parts: Vec<String> =
            ranked.iter().map(|r| format!("{}={}", r.agent_id, r.form.canonical_json)).collect();
        reasons.push(format!("canonical answers differ: {}", parts.join(" vs ")));
    } else if ranked.iter().any(|r| r.form.signature != ranked[0].form.signature) {
        kinds.push("type_drift");
        let parts: Vec<String> =
            ranked.iter().map(|r| format!("{} wrote {}", r.agent_id, r.form.signature)).collect();
        reasons.push(format!("same canonical answer spelled differently: {}", parts.join(", ")));
    }
    let low: Vec<&str> = ranked.iter().filter(|r| r.low).map(|r| r.agent_id).collect();
    if !low.is_empty() {
        kinds.push("low_confidence");
        reasons.push(format!("low confidence from {}", low.join(", ")));
    }
    // Normalized.fingerprint: [agent, signature, canonical, low] as orjson writes the list
    let mut fingerprints: Vec<String> = ranked
        .iter()
        .map(|r| {
            let mut out = Vec::with_capacity(
                r.agent_id.len() + 2 * r.form.signature.len() + r.form.canonical_json.len() + 24);
            out.push(b'[');
            write_str(&mut out, r.agent_id);
            out.push(b',');
            write_str(&mut out, &r.form.signature);
            out.push(b',');
            out.extend_from_slice(r.form.canonical_json.as_bytes());
            out.extend_from_slice(if r.low { b",true]" } else { b",false]" });
            String::from_utf8(out).expect("UTF-8")
        })
        .collect();
    fingerprints.sort();
    let mut parts: Vec<&str> = vec![key];
    parts.extend(fingerprints.iter().map(String::as_str));
    parts.push("missing=");
    let inputs_id = derive_id(&parts);
    let job_kind = kinds.first().copied();
    let outcome = job_kind.unwrap_or("agreement");
    let job_id = job_kind.map(|k| derive_id(&["job", &inputs_id, k]));
    let reason_refs: Vec<&str> = reasons.iter().map(String::as_str).collect();
    let [task, patient, field_id] = ids;

    let mut emits = Vec::with_capacity(2);
    if let (Some(kind), Some(job_id)) = (job_kind, job_id.as_deref()) {
        let answers: usize = ranked.iter().map(|r| r.json.len()).sum();
        let mut out = Vec::with_capacity(answers + 1024);
        out.extend_from_slice(b"{\"job_id\":");
        write_str(&mut out, job_id);
        field(&mut out, "kind");
        write_str(&mut out, kind);
        cell_ids(&mut out, task, patient, field_id);
        field(&mut out, "answers");
        write_list(&mut out, ranked.iter(), |o, r| o.extend_from_slice(r.json));
        field(&mut out, "normalized");
        write_list(&mut out, canon.iter(), |o, c| o.extend_from_slice(c.as_bytes()));
        field(&mut out, "reasons");
        write_str_list(&mut out, &reason_refs);
        field(&mut out, "detected_at");
        write_str(&mut out, stamp);
        field(&mut out, "source");
        out.extend_from_slice(b"{\"topic\":");
        write_str(&mut out, source.0);
        out.extend_from_slice(b",\"partition\":");
        crate::json::write_int(&mut out, source.1);
        out.extend_from_slice(b",\"offset\":");
        crate::json::write_int(&mut out, source.2);
        out.push(b'}');
        field(&mut out, "missing_agents");
        out.extend_from_slice(b"[]");
        field(&mut out, "kinds_applicable");
        write_str_list(&mut out, &kinds);
        out.push(b'}');
        emits.push(("job", out, String::new()));
    }
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(b"{\"outcome_id\":");
    write_str(&mut out, &derive_id(&["outcome", &inputs_id]));
    field(&mut out, "outcome");
    write_str(&mut out, outcome);
    cell_ids(&mut out, task, patient, field_id);
    field(&mut out, "agents");
    let agents: Vec<&str> = ranked.iter().map(|r| r.agent_id).collect();
    write_str_list(&mut out, &agents);
    field(&mut out, "missing_agents");
    out.extend_from_slice(b"[]");
    field(&mut out, "job_id");
    match job_id.as_deref() {
        Some(j) => write_str(&mut out, j),
        None => out.extend_from_slice(b"null"),
    }
    field(&mut out, "job_kind");
    match job_kind {
        Some(k) => write_str(&mut out, k),
        None => out.extend_from_slice(b"null"),
    }
    field(&mut out, "reasons");
    write_str_list(&mut out, &reason_refs);
    field(&mut out, "decided_at");
    write_str(&mut out, stamp);
    field(&mut out, "settled_by_timeout");
    out.extend_from_slice(b"false");
    field(&mut out, "agreed_answer");
    // Decision.agreed_answer: the first agent's canonical value when there is no job or
    // only type drift
    if matches!(job_kind, None | Some("type_drift")) {
        out.extend_from_slice(canon[0].as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
    out.push(b'}');
    emits.push(("outcome", out, outcome.to_owned()));
    Decided { inputs_id, emits }
}

fn cell_ids(out: &mut Vec<u8>, task: &str, patient: &str, field_id: &str) {
    field(out, "task_id");
    write_str(out, task);
    field(out, "patient_id");
    write_str(out, patient);
    field(out, "field_id");
    write_str(out, field_id);
}

#[cfg(test)]
mod tests {
    #[test]
    fn derive_id_is_sha256_of_joined_parts() {
        // hashlib.sha256("job\x1fabc\x1fdisagreement".encode()).hexdigest()[:32]
        assert_eq!(super::derive_id(&["job", "abc", "disagreement"]), "66efee021148a6700165bf969076a1fc");
    }
}
