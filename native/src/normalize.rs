//! `normalize.canonicalize` and `format_signature` for the answers the core can prove.
//!
//! Every text that is normalised (stripped, lower-cased, split) must be printable ASCII:
//! Python's `strip()`, `split()` and `lower()` are Unicode-aware, and for printable ASCII
//! they are plain byte operations (whitespace is then only the space). Declined: `Invalid`
//! canonical values, dict answers, nested lists, floats whose `repr` has an exponent.

use crate::config::{Criterion, Kind};
use crate::json::{write_float, write_str, write_str_list, Decline, Res, Value};

/// An answer's normal form: its canonical value as JSON (what the records carry, and what
/// "same meaning" compares) and its format signature (what "same spelling" compares).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub canonical_json: String,
    pub signature: String,
}

const TRUE: [&str; 6] = ["true", "yes", "y", "1", "present", "positive"];
const FALSE: [&str; 6] = ["false", "no", "n", "0", "absent", "negative"];
const NO_INFO: [&str; 8] = ["", "no_info", "no info", "unknown", "not documented", "n/a", "na",
                            "none documented"];

fn printable(s: &str) -> Res<&str> {
    if s.bytes().all(|c| (0x20..0x7f).contains(&c)) { Ok(s) } else { Err(Decline) }
}

/// `raw.strip().lower()` of printable ASCII.
fn folded(s: &str) -> Res<String> {
    Ok(printable(s)?.trim_matches(' ').to_ascii_lowercase())
}

/// `" ".join(raw.split())` of printable ASCII.
fn collapsed(s: &str) -> Res<String> {
    Ok(printable(s)?.split(' ').filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" "))
}

fn json_str(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(&mut out, s);
    String::from_utf8(out).expect("escaping keeps UTF-8")
}

/// `repr(x)` of a float when it is ryu's shortest spelling with no exponent (repr switches to
/// one below 1e-4, ryu below 1e-5: those are declined).
fn float_repr(x: f64) -> Res<String> {
    let mut out = Vec::with_capacity(24);
    write_float(&mut out, x)?;
    let text = String::from_utf8(out).expect("ASCII");
    if text.trim_start_matches('-').starts_with("0.0000") {
        return Err(Decline);
    }
    Ok(text)
}

/// `format_signature(raw)`.
pub fn signature(raw: &Value) -> Res<String> {
    Ok(match raw {
        Value::Null => "null".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float_repr(*f)?,
        Value::Str(s) => json_str(s),
        Value::List(items) => {
            let mut parts = items.iter().map(signature).collect::<Res<Vec<_>>>()?;
            parts.sort();
            format!("[{}]", parts.join(","))
        }
        Value::Obj(_) => return Err(Decline),
    })
}

/// A canonical number: `int(v)` when integral, else `round(v, 6)` (declined unless that is
/// `v` itself: at most six decimals in its shortest spelling).
fn number_json(v: f64) -> Res<String> {
    if !v.is_finite() {
        return Err(Decline);
    }
    if v.fract() == 0.0 {
        if v.abs() >= 9007199254740992.0 {
            return Err(Decline);
        }
        return Ok((v as i64).to_string());
    }
    let text = float_repr(v)?;
    match text.split_once('.') {
        Some((_, decimals)) if decimals.len() <= 6 => Ok(text),
        _ => Err(Decline),
    }
}

/// `_NUMBER` over `raw.replace(",", "")` (printable ASCII), then the unit check: the number
/// and its suffix. Only `[-+]?\d+(\.\d+)?` numbers are taken (no exponent, no bare point).
fn number_text(raw: &str, unit: Option<&str>) -> Res<f64> {
    let text: String = printable(raw)?.chars().filter(|&c| c != ',').collect();
    let s = text.trim_start_matches(' ');
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let d = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == d {
        return Err(Decline);
    }
    if i < b.len() && b[i] == b'.' {
        let f = i + 1;
        i = f;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == f {
            return Err(Decline);
        }
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        return Err(Decline);
    }
    let suffix = s[i..].trim_matches(' ');
    if !suffix.is_empty() {
        let squash = |t: &str| t.replace(' ', "").to_ascii_lowercase();
        match unit {
            Some(u) if squash(suffix) == squash(u) => {}
            _ => return Err(Decline),
        }
    }
    s[..i].parse::<f64>().map_err(|_| Decline)
}

fn canon_bool(raw: &Value) -> Res<Option<bool>> {
    Ok(match raw {
        Value::Bool(b) => Some(*b),
        Value::Int(0) => Some(false),
        Value::Int(1) => Some(true),
        Value::Float(f) if *f == 0.0 => Some(false),
        Value::Float(f) if *f == 1.0 => Some(true),
        Value::Str(s) => {
            let t = folded(s)?;
            if TRUE.contains(&t.as_str()) {
                Some(true)
            } else if FALSE.contains(&t.as_str()) {
                Some(false)
            } else {
                None
            }
        }
        _ => None,
    })
}

/// The enum string whose `lower()` is `text`, the first in the schema's order.
fn lookup<'c>(c: &'c Criterion, text: &str) -> Option<&'c str> {
    c.enum_lower.iter().position(|l| l == text).map(|i| c.enum_strs[i].as_str())
}

/// `_canon_enum` against the schema's strings (the schema is `supported`): the value, or
/// None (Invalid).
fn canon_enum<'c>(raw: &Value, c: &'c Criterion) -> Res<Option<&'c str>> {
    let by_bool = |b: bool| {
        c.enum_lower.iter().position(|l| {
            (b && (l == "yes" || l == "true")) || (!b && (l == "no" || l == "false"))
        }).map(|i| &c.enum_strs[i])
    };
    Ok(match raw {
        Value::Bool(b) => by_bool(*b).map(String::as_str),
        Value::Str(s) => {
            let t = folded(s)?;
            match lookup(c, &t) {
                Some(v) => Some(v),
                None => match canon_bool(raw)? {
                    Some(b) => by_bool(b).map(String::as_str),
                    None => None,
                },
            }
        }
        _ => None,
    })
}

fn canon_list(items: &[Value], c: &Criterion) -> Res<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let canon = if c.has_enum {
            canon_enum(item, c)?.ok_or(Decline)?.to_owned()
        } else {
            match item {
                Value::Bool(b) => if *b { "true" } else { "false" }.to_owned(),
                Value::Str(s) => collapsed(s)?.to_ascii_lowercase(),
                _ => return Err(Decline),
            }
        };
        if !canon.is_empty() {
            out.push(canon);
        }
    }
    out.sort();
    out.dedup();
    let mut json = Vec::with_capacity(out.iter().map(|i| i.len() + 3).sum::<usize>() + 2);
    write_str_list(&mut json, &out);
    Ok(String::from_utf8(json).expect("UTF-8"))
}

/// `canonicalize(raw, schema)` as JSON, or Decline (Invalid, or not provable).
fn canonical(raw: &Value, c: &Criterion) -> Res<String> {
    let no_info = match raw {
        Value::Null => true,
        Value::Str(s) => NO_INFO.contains(&folded(s)?.as_str()),
        Value::List(items) => items.is_empty() && c.kind != Kind::List,
        _ => false,
    };
    if no_info {
        return if c.allows_no_info { Ok("\"no_info\"".into()) } else { Err(Decline) };
    }
    let enum_json = |v: Option<&str>| v.map(json_str).ok_or(Decline);
    let bool_json = |b: bool| if b { "true".to_string() } else { "false".to_string() };
    match c.kind {
        Kind::Boolean => match canon_bool(raw)? {
            Some(b) => Ok(bool_json(b)),
            // `_canon_enum` on a value `_canon_bool` refused: only a string can match
            None if c.has_enum => match raw {
                Value::Str(s) => {
                    let t = folded(s)?;
                    enum_json(lookup(c, &t))
                }
                _ => Err(Decline),
            },
            None => Err(Decline),
        },
        Kind::Enum => enum_json(canon_enum(raw, c)?),
        Kind::Number => match raw {
            Value::Int(i) if i.unsigned_abs() < (1u64 << 53) => Ok(i.to_string()),
            Value::Float(f) => number_json(*f),
            Value::Str(s) => number_json(number_text(s, c.unit.as_deref())?),
            _ => Err(Decline),
        },
        Kind::Date => match raw {
            Value::Str(s) => crate::dates::date_text(&collapsed(s)?),
            _ => Err(Decline),
        },
        Kind::List => match raw {
            Value::List(items) => canon_list(items, c),
            _ => Err(Decline),
        },
        Kind::Text => match raw {
            Value::Str(s) => Ok(json_str(&collapsed(s)?.to_ascii_lowercase())),
            _ => Err(Decline),
        },
    }
}

pub fn form(raw: &Value, c: &Criterion) -> Res<Form> {
    if !c.supported {
        return Err(Decline);
    }
    let canonical_json = canonical(raw, c)?;
    Ok(Form { canonical_json, signature: signature(raw)? })
}
