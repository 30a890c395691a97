//! The stored cell (`CellState.dumps`) of a pending cell: read, and written back with one
//! more answer (and, once complete, its decision).
//!
//! Only a pending cell's state is read: plain JSON (a zlib one starts with `x`: declined),
//! no decision yet (`decided_at`, `last_inputs_id` null, no history). `CellState.loads`
//! reads the seven keys by name: each must be there, and an answer must carry the keys
//! `PlainAnswer` reads.

use crate::answer::Confidence;
use crate::json::{parse, write, write_float, write_int, write_str, Decline, Res, Value};

/// One stored answer, as deciding reads it.
pub struct Stored {
    pub agent_key: String,
    pub json: Vec<u8>,
    pub task_id: String,
    pub patient_id: String,
    pub field_id: String,
    pub answer: Value,
    pub confidence: Confidence,
}

pub struct Pending {
    pub first_seen: f64,
    pub partition: i64,
    pub answers: Vec<Stored>,
    pub seen_events: Vec<String>,
}

fn stored(agent_key: String, v: Value) -> Res<Stored> {
    let mut json = Vec::with_capacity(512);
    write(&mut json, &v)?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned).ok_or(Decline);
    // PlainAnswer.__init__ reads these keys (a KeyError in Python: declined)
    for k in ["event_id", "run_id", "answer", "confidence"] {
        v.get(k).ok_or(Decline)?;
    }
    if s("agent_id")? != agent_key {
        return Err(Decline);
    }
    let confidence = match v.get("confidence") {
        Some(Value::Str(l)) => Confidence::Label(l.clone()),
        Some(Value::Float(f)) => Confidence::Score(*f),
        _ => return Err(Decline),
    };
    Ok(Stored {
        task_id: s("task_id")?,
        patient_id: s("patient_id")?,
        field_id: s("field_id")?,
        answer: v.get("answer").cloned().unwrap_or(Value::Null),
        confidence,
        json,
        agent_key,
    })
}

pub fn load(raw: &[u8]) -> Res<Pending> {
    if raw.first() != Some(&b'{') {
        return Err(Decline);
    }
    let Value::Obj(items) = parse(raw)? else { return Err(Decline) };
    let (mut first_seen, mut partition, mut answers, mut seen) = (None, None, None, None);
    let mut keys = 0;
    for (k, v) in items {
        keys += 1;
        match (k.as_str(), v) {
            ("first_seen", Value::Float(f)) => first_seen = Some(f),
            ("partition", Value::Int(p)) => partition = Some(p),
            ("answers", Value::Obj(a)) => {
                answers = Some(a.into_iter().map(|(k, v)| stored(k, v))
                               .collect::<Res<Vec<_>>>()?)
            }
            ("seen_events", Value::List(e)) => {
                seen = Some(e.into_iter().map(|x| match x {
                    Value::Str(s) => Ok(s),
                    _ => Err(Decline),
                }).collect::<Res<Vec<_>>>()?)
            }
            ("decided_at", Value::Null) | ("last_inputs_id", Value::Null) => {}
            ("history", Value::List(h)) if h.is_empty() => {}
            _ => return Err(Decline),
        }
    }
    if keys != 7 {
        return Err(Decline);
    }
    Ok(Pending {
        first_seen: first_seen.ok_or(Decline)?,
        partition: partition.ok_or(Decline)?,
        answers: answers.ok_or(Decline)?,
        seen_events: seen.ok_or(Decline)?,
    })
}

/// `CellState.dumps()`: `answers` is (agent, stored JSON) in insertion order; `decision` is
/// the decided time, inputs id, trigger and the (kind, record) outputs.
pub fn dump(first_seen: f64, partition: i64, answers: &[(&str, &[u8])], seen: &[&str],
            decision: Option<(f64, &str, (&str, i64, i64), &[(&'static str, Vec<u8>, String)])>)
            -> Res<Vec<u8>> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(b"{\"first_seen\":");
    write_float(&mut out, first_seen)?;
    out.extend_from_slice(b",\"partition\":");
    write_int(&mut out, partition);
    out.extend_from_slice(b",\"answers\":{");
    for (n, (agent, json)) in answers.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_str(&mut out, agent);
        out.push(b':');
        out.extend_from_slice(json);
    }
    out.extend_from_slice(b"},\"seen_events\":[");
    for (n, e) in seen.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_str(&mut out, e);
    }
    out.push(b']');
    match decision {
        None => out.extend_from_slice(
            b",\"decided_at\":null,\"last_inputs_id\":null,\"history\":[]}"),
        Some((at, inputs_id, (topic, part, offset), outputs)) => {
            out.extend_from_slice(b",\"decided_at\":");
            write_float(&mut out, at)?;
            out.extend_from_slice(b",\"last_inputs_id\":");
            write_str(&mut out, inputs_id);
            out.extend_from_slice(b",\"history\":[[[");
            write_str(&mut out, topic);
            out.push(b',');
            write_int(&mut out, part);
            out.push(b',');
            write_int(&mut out, offset);
            out.extend_from_slice(b"],[");
            for (n, (kind, record, _)) in outputs.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"kind\":");
                write_str(&mut out, kind);
                out.extend_from_slice(b",\"record\":");
                out.extend_from_slice(record);
                out.push(b'}');
            }
            out.extend_from_slice(b"]]]}");
        }
    }
    Ok(out)
}
