//! The stored cell (`CellState.dumps`) of a pending cell: read, and written back with one
//! more answer (and, once complete, its decision).
//!
//! Only a pending cell's state is read: plain JSON (a zlib one starts with `x`: declined),
//! no decision yet (`decided_at`, `last_inputs_id` null, no history). `CellState.loads`
//! reads the seven keys by name: each must be there, and an answer must carry the keys
//! `PlainAnswer` reads.

use crate::answer::Confidence;
use std::borrow::Cow;

use crate::json::{write_float, write_int, write_str, write_str_list, Decline, Parser, Res, Value};

/// One stored answer, as deciding reads it (borrowed from the stored bytes).
pub struct Stored<'a> {
    pub agent_key: Cow<'a, str>,
    /// Its JSON exactly as stored: read in canonical mode, so orjson would write the same.
    pub json: &'a [u8],
    pub task_id: Cow<'a, str>,
    pub patient_id: Cow<'a, str>,
    pub field_id: Cow<'a, str>,
    pub answer: Value<'a>,
    pub confidence: Confidence,
}

pub struct Pending<'a> {
    pub first_seen: f64,
    pub partition: i64,
    pub answers: Vec<Stored<'a>>,
    pub seen_events: Vec<Cow<'a, str>>,
}

fn stored<'a>(agent_key: Cow<'a, str>, json: &'a [u8], v: Value<'a>) -> Res<Stored<'a>> {
    let Value::Obj(items) = v else { return Err(Decline) };
    let (mut task, mut patient, mut field, mut agent) = (None, None, None, None);
    let (mut answer, mut confidence) = (None, None);
    let mut ids = 0;
    for (k, v) in items {
        match (k.as_ref(), v) {
            ("task_id", Value::Str(s)) => task = Some(s),
            ("patient_id", Value::Str(s)) => patient = Some(s),
            ("field_id", Value::Str(s)) => field = Some(s),
            ("agent_id", Value::Str(s)) => agent = Some(s),
            ("event_id" | "run_id", _) => ids += 1,
            ("answer", v) => answer = Some(v),
            ("confidence", Value::Str(l)) => confidence = Some(Confidence::Label(l.into_owned())),
            ("confidence", Value::Float(f)) => confidence = Some(Confidence::Score(f)),
            ("confidence", _) => return Err(Decline),
            _ => {}
        }
    }
    // PlainAnswer.__init__ reads these keys (a KeyError in Python: declined)
    if ids != 2 || agent.as_deref() != Some(agent_key.as_ref()) {
        return Err(Decline);
    }
    Ok(Stored {
        agent_key,
        json,
        task_id: task.ok_or(Decline)?,
        patient_id: patient.ok_or(Decline)?,
        field_id: field.ok_or(Decline)?,
        answer: answer.ok_or(Decline)?,
        confidence: confidence.ok_or(Decline)?,
    })
}

/// A pending cell's stored bytes, in the layout `dumps` writes (any other: Decline).
pub fn load(raw: &[u8]) -> Res<Pending<'_>> {
    let mut p = Parser::new(raw, false, true)?;
    p.expect(b"{\"first_seen\":")?;
    let Value::Float(first_seen) = p.value(1)? else { return Err(Decline) };
    p.expect(b",\"partition\":")?;
    let Value::Int(partition) = p.value(1)? else { return Err(Decline) };
    p.expect(b",\"answers\":{")?;
    let mut answers: Vec<Stored> = Vec::new();
    if !p.eat(b'}') {
        loop {
            if p.text().get(p.i) != Some(&b'"') {
                return Err(Decline);
            }
            let agent = p.string()?;
            p.expect(b":")?;
            let start = p.i;
            let v = p.value(2)?;
            if answers.iter().any(|a| a.agent_key == agent) {
                return Err(Decline);
            }
            answers.push(stored(agent, &p.text()[start..p.i], v)?);
            if p.eat(b'}') {
                break;
            }
            p.expect(b",")?;
        }
    }
    p.expect(b",\"seen_events\":")?;
    let Value::List(events) = p.value(1)? else { return Err(Decline) };
    let seen_events = events.into_iter().map(|x| match x {
        Value::Str(s) => Ok(s),
        _ => Err(Decline),
    }).collect::<Res<Vec<_>>>()?;
    p.expect(b",\"decided_at\":null,\"last_inputs_id\":null,\"history\":[]}")?;
    if !p.at_end() {
        return Err(Decline);
    }
    Ok(Pending { first_seen, partition, answers, seen_events })
}

/// A decision as stored: decided time, inputs id, trigger (topic, partition, offset) and the
/// (kind, record, label) outputs.
pub type Decision<'a> = (f64, &'a str, (&'a str, i64, i64), &'a [(&'static str, Vec<u8>, String)]);

/// `CellState.dumps()`: `answers` is (agent, stored JSON) in insertion order.
pub fn dump(first_seen: f64, partition: i64, answers: &[(&str, &[u8])], seen: &[&str],
            decision: Option<Decision>) -> Res<Vec<u8>> {
    let records: usize = decision.map_or(0, |d| d.3.iter().map(|(_, r, _)| r.len() + 32).sum());
    let answered: usize = answers.iter().map(|(a, j)| a.len() + j.len() + 4).sum();
    let seen_len: usize = seen.iter().map(|e| e.len() + 3).sum();
    let mut out = Vec::with_capacity(records + answered + seen_len + 256);
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
    out.extend_from_slice(b"},\"seen_events\":");
    write_str_list(&mut out, seen);
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
