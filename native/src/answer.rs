//! `fastpath.fast_answer` + `within_limits` + the criterion check, for what they accept.
//!
//! Where `fast_answer` would return None (the pydantic model decides) the core declines:
//! the model's dump is not mirrored here. The stored JSON form is written as the fast path
//! builds it: the thirteen fields in their order, defaults filled in, evidence items with
//! all three keys, `emitted_at` rewritten to pydantic's UTC spelling.

use std::borrow::Cow;

use crate::config::Config;
use crate::json::{write, write_float, write_int, write_str, Decline, Res, Value};

const FIELDS: [&str; 13] = ["schema_version", "event_id", "run_id", "task_id", "patient_id",
                            "field_id", "agent_id", "answer", "evidence", "rationale",
                            "confidence", "low_confidence_reason", "emitted_at"];
const REQUIRED: [&str; 7] = ["event_id", "run_id", "task_id", "patient_id", "field_id",
                             "agent_id", "emitted_at"];

#[derive(Debug, Clone, PartialEq)]
pub enum Confidence {
    Label(String),
    Score(f64),
}

impl Confidence {
    /// `decide.is_low_confidence`.
    pub fn low(&self, threshold: f64) -> bool {
        match self {
            Confidence::Label(l) => l == "low",
            Confidence::Score(s) => *s < threshold,
        }
    }
}

/// An accepted answer: what deciding reads, and its stored JSON.
#[derive(Debug)]
pub struct Answer<'a> {
    pub event_id: Cow<'a, str>,
    pub task_id: Cow<'a, str>,
    pub patient_id: Cow<'a, str>,
    pub field_id: Cow<'a, str>,
    pub agent_id: Cow<'a, str>,
    pub answer: Value<'a>,
    pub confidence: Confidence,
    pub json: Vec<u8>,
}

/// `_SAFE_ID` (`[A-Za-z0-9][A-Za-z0-9._-]{0,127}`) and no `..`.
pub fn safe_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= 128 && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && !s.contains("..")
}

fn bounded_ascii(s: &str) -> bool {
    (1..=200).contains(&s.len()) && s.is_ascii()
}

fn chars(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
}

fn digits(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    Some(v)
}

// `%` rather than `is_multiple_of` (stable only since Rust 1.87)
#[allow(clippy::manual_is_multiple_of)]
pub fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

pub fn valid_date(y: u32, m: u32, d: u32) -> bool {
    (1..=9999).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m)
}

/// `_STAMP` + `datetime.fromisoformat` + `_stamp_json`, for UTC offsets only (another offset
/// is normalised by `datetime`: declined). ASCII digits only (`\d` is Unicode in Python).
fn stamp_json(s: &str) -> Res<String> {
    let b = s.as_bytes();
    if b.len() < 20 || !s.is_ascii() {
        return Err(Decline);
    }
    let f = |r: std::ops::Range<usize>| digits(&b[r]).ok_or(Decline);
    let (y, mo, d) = (f(0..4)?, f(5..7)?, f(8..10)?);
    let (h, mi, sec) = (f(11..13)?, f(14..16)?, f(17..19)?);
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return Err(Decline);
    }
    if !valid_date(y, mo, d) || h > 23 || mi > 59 || sec > 59 {
        return Err(Decline);
    }
    let mut i = 19;
    let mut frac: &str = "";
    if b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if !(1..=6).contains(&(i - start)) {
            return Err(Decline);
        }
        frac = &s[start..i];
    }
    let offset = &s[i..];
    if !matches!(offset, "Z" | "+00:00" | "-00:00") {
        return Err(Decline);
    }
    if frac.bytes().all(|c| c == b'0') {
        return Ok(format!("{}Z", &s[..19]));
    }
    Ok(format!("{}.{:0<6}Z", &s[..19], frac))
}

fn evidence(items: &[Value], out: &mut Vec<u8>, quotes: &mut Vec<usize>) -> Res<()> {
    out.push(b'[');
    for (n, item) in items.iter().enumerate() {
        let Value::Obj(keys) = item else { return Err(Decline) };
        // any order of any subset of the three keys (no duplicates: the reader refuses them)
        if keys.len() > 3
            || !keys.iter().all(|(k, _)| matches!(k.as_ref(), "note_id" | "quote" | "offsets"))
        {
            return Err(Decline);
        }
        let note = item.get("note_id").and_then(Value::as_str).ok_or(Decline)?;
        let quote = item.get("quote").and_then(Value::as_str).ok_or(Decline)?;
        if !safe_id(note) {
            return Err(Decline);
        }
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"note_id\":");
        write_str(out, note);
        out.extend_from_slice(b",\"quote\":");
        write_str(out, quote);
        out.extend_from_slice(b",\"offsets\":");
        match item.get("offsets") {
            None | Some(Value::Null) => out.extend_from_slice(b"null"),
            Some(Value::List(pair)) => match pair.as_slice() {
                [Value::Int(a), Value::Int(b)] if 0 <= *a && a <= b => {
                    out.push(b'[');
                    write_int(out, *a);
                    out.push(b',');
                    write_int(out, *b);
                    out.push(b']');
                }
                _ => return Err(Decline),
            },
            _ => return Err(Decline),
        }
        out.push(b'}');
        quotes.push(chars(quote));
    }
    out.push(b']');
    Ok(())
}

/// Does a list or dict in `v` sit deeper than `max` (`v` itself at `depth`)? As
/// `schemas.chart_review.check_json_value` counts: the answer itself is depth 1.
fn nested_deeper(v: &Value, depth: usize, max: usize) -> bool {
    match v {
        Value::List(items) => depth > max || items.iter().any(|c| nested_deeper(c, depth + 1, max)),
        Value::Obj(items) => {
            depth > max || items.iter().any(|(_, c)| nested_deeper(c, depth + 1, max))
        }
        _ => false,
    }
}

/// The accepted answer of one record value, or Decline.
pub fn fast_answer<'a>(cfg: &Config, data: Value<'a>) -> Res<Answer<'a>> {
    let Value::Obj(items) = data else { return Err(Decline) };
    if items.len() > FIELDS.len() || !items.iter().all(|(k, _)| FIELDS.contains(&k.as_ref())) {
        return Err(Decline);
    }
    let mut slots: [Option<Value<'a>>; 13] = Default::default();
    for (k, v) in items {
        let i = FIELDS.iter().position(|f| *f == k).ok_or(Decline)?;
        slots[i] = Some(v);
    }
    let answer = slots[7].take().unwrap_or(Value::Null);
    if nested_deeper(&answer, 1, cfg.max_json_depth) {
        return Err(Decline); // check_json_value refuses it: a schema error in Python
    }
    if REQUIRED.iter().any(|r| slots[FIELDS.iter().position(|f| f == r).unwrap()].is_none()) {
        // (answer, slot 7, is not required)
        return Err(Decline);
    }
    let mut take_str = |i: usize| -> Res<Cow<'a, str>> {
        match slots[i].take() {
            Some(Value::Str(s)) => Ok(s),
            _ => Err(Decline),
        }
    };
    let event_id = take_str(1)?;
    let run_id = take_str(2)?;
    let task_id = take_str(3)?;
    let patient_id = take_str(4)?;
    let field_id = take_str(5)?;
    let agent_id = take_str(6)?;
    if ![&task_id, &patient_id, &field_id, &agent_id].iter().all(|s| safe_id(s.as_ref()))
        || !bounded_ascii(&event_id) || !bounded_ascii(&run_id)
    {
        return Err(Decline);
    }
    let version = match &slots[0] {
        None => 1,
        Some(Value::Int(v)) => *v,
        _ => return Err(Decline),
    };
    let no_evidence: Vec<Value<'a>> = Vec::new();
    let evidence_items = match &slots[8] {
        None => &no_evidence,
        Some(Value::List(items)) => items,
        _ => return Err(Decline),
    };
    let rationale = match &slots[9] {
        None => "",
        Some(Value::Str(s)) => s.as_ref(),
        _ => return Err(Decline),
    };
    let reason = match &slots[11] {
        None | Some(Value::Null) => None,
        Some(Value::Str(s)) => Some(s.as_ref()),
        _ => return Err(Decline),
    };
    let stamp = match &slots[12] {
        Some(Value::Str(s)) => s.as_ref(),
        _ => return Err(Decline),
    };
    let confidence = match &slots[10] {
        None => Confidence::Label("medium".into()),
        Some(Value::Str(s)) if matches!(s.as_ref(), "low" | "medium" | "high") => {
            Confidence::Label(s.to_string())
        }
        Some(Value::Float(f)) if (0.0..=1.0).contains(f) => Confidence::Score(*f),
        _ => return Err(Decline),
    };
    let emitted = stamp_json(stamp)?;

    let mut json = Vec::with_capacity(cfg.max_answer_bytes.min(4096));
    json.extend_from_slice(b"{\"schema_version\":");
    write_int(&mut json, version);
    for (name, v) in [("event_id", &*event_id), ("run_id", &*run_id), ("task_id", &*task_id),
                      ("patient_id", &*patient_id), ("field_id", &*field_id),
                      ("agent_id", &*agent_id)] {
        json.extend_from_slice(b",\"");
        json.extend_from_slice(name.as_bytes());
        json.extend_from_slice(b"\":");
        write_str(&mut json, v);
    }
    json.extend_from_slice(b",\"answer\":");
    write(&mut json, &answer)?;
    json.extend_from_slice(b",\"evidence\":");
    let mut quotes = Vec::new();
    evidence(evidence_items, &mut json, &mut quotes)?;
    json.extend_from_slice(b",\"rationale\":");
    write_str(&mut json, rationale);
    json.extend_from_slice(b",\"confidence\":");
    match &confidence {
        Confidence::Label(l) => write_str(&mut json, l),
        Confidence::Score(f) => write_float(&mut json, *f)?,
    }
    json.extend_from_slice(b",\"low_confidence_reason\":");
    match reason {
        None => json.extend_from_slice(b"null"),
        Some(r) => write_str(&mut json, r),
    }
    json.extend_from_slice(b",\"emitted_at\":");
    write_str(&mut json, &emitted);
    json.push(b'}');

    // within_limits (over: BadRecord "oversized" in Python), then the criterion must be known
    if chars(rationale) > cfg.max_rationale_chars
        || quotes.len() > cfg.max_evidence_items
        || reason.map_or(0, chars) > cfg.max_reason_chars
        || quotes.iter().any(|&q| q > cfg.max_quote_chars)
        || !cfg.criteria.contains_key(field_id.as_ref())
    {
        return Err(Decline);
    }
    Ok(Answer { event_id, task_id, patient_id, field_id, agent_id, answer, confidence, json })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        assert_eq!(stamp_json("2024-05-06T09:00:01.920Z").unwrap(), "2024-05-06T09:00:01.920000Z");
        assert_eq!(stamp_json("2024-05-06T09:00:01.000+00:00").unwrap(), "2024-05-06T09:00:01Z");
        assert_eq!(stamp_json("2024-05-06T09:00:01-00:00").unwrap(), "2024-05-06T09:00:01Z");
        for bad in ["2024-02-30T09:00:01Z", "0000-01-01T00:00:00Z", "2024-05-06T24:00:00Z",
                    "2024-05-06T09:00:60Z", "2024-05-06T09:00:01.1234567Z",
                    "2024-05-06T09:00:01+05:00", "2024-05-06 09:00:01Z"] {
            assert!(stamp_json(bad).is_err(), "{bad}");
        }
    }
}
