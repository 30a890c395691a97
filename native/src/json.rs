//! JSON values, a strict reader and a writer whose bytes are orjson's.
//!
//! The reader accepts only what it can prove orjson reads the same way: no duplicate keys
//! (orjson keeps the last value at the first key's place), integers within i64 (orjson turns
//! bigger ones into floats), floats only in their shortest round-trip spelling without an
//! exponent (then writing one back gives the same text), nesting of at most `MAX_DEPTH`.
//! Anything else is `Err(Decline)`: the caller returns None and Python decides.
//!
//! The *canonical* mode also declines any text orjson would not have written (whitespace,
//! escapes orjson does not use, `-0`): a value read in that mode is written back as the
//! very same bytes, so a stored cell's answers are copied, not re-encoded.

use std::borrow::Cow;

/// "Not mine": the Python path decides this record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decline;

pub type Res<T> = Result<T, Decline>;

/// A JSON value borrowing its strings from the input where they have no escapes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    List(Vec<Value<'a>>),
    Obj(Vec<(Cow<'a, str>, Value<'a>)>),
}

/// Bytes that end a plain run inside a JSON string: quote, backslash, controls.
pub(crate) static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Index of the first SPECIAL byte of `b`, eight bytes at a time (SWAR: a byte is special
/// when it equals `"` or `\\`, or is below 0x20), or None.
#[inline]
pub fn find_special(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while i + 8 <= b.len() {
        let x = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let quote = x ^ (ONES * b'"' as u64);
        let slash = x ^ (ONES * b'\\' as u64);
        // "has a zero byte" for quote and slash, "has a byte < 0x20" for x (exact for
        // bytes < 0x80; a byte >= 0x80 never sets its flag)
        let hit = (quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (x.wrapping_sub(ONES * 0x20) & !x);
        if hit & HIGH != 0 {
            // the lowest flag is a true hit (a borrow only sets flags above one)
            return Some(i + ((hit & HIGH).trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| SPECIAL[c as usize]).map(|p| p + i)
}

impl<'a> Value<'a> {
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Obj(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

pub use crate::read::{parse, parse_with, Parser};

/// A float as orjson writes it, or Decline (exponent forms, NaN, infinities).
pub fn write_float(out: &mut Vec<u8>, v: f64) -> Res<()> {
    if !v.is_finite() {
        return Err(Decline);
    }
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(v);
    if text.as_bytes().contains(&b'e') {
        return Err(Decline);
    }
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

pub fn write_int(out: &mut Vec<u8>, v: i64) {
    // digits written backwards into a buffer (no formatting machinery: ints are written
    // several times per record)
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

/// A string as orjson escapes it.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    if find_special(b).is_none() {
        out.extend_from_slice(b);
        out.push(b'"');
        return;
    }
    let mut last = 0;
    for (i, &c) in b.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            8 => b"\\b",
            12 => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&b[last..i]);
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(c >> 4) as usize]);
            out.push(HEX[(c & 15) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
        last = i + 1;
    }
    out.extend_from_slice(&b[last..]);
    out.push(b'"');
}

/// A JSON array of `items`, each written by `each` (orjson's compact form: no spaces).
pub fn write_list<T>(out: &mut Vec<u8>, items: impl IntoIterator<Item = T>,
                     mut each: impl FnMut(&mut Vec<u8>, T)) {
    out.push(b'[');
    for (n, item) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        each(out, item);
    }
    out.push(b']');
}

/// A JSON array of strings.
pub fn write_str_list<S: AsRef<str>>(out: &mut Vec<u8>, items: &[S]) {
    write_list(out, items, |o, s| write_str(o, s.as_ref()));
}

pub fn write(out: &mut Vec<u8>, v: &Value) -> Res<()> {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(i) => write_int(out, *i),
        Value::Float(f) => write_float(out, *f)?,
        Value::Str(s) => write_str(out, s),
        Value::List(items) => {
            out.push(b'[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write(out, item)?;
            }
            out.push(b']');
        }
        Value::Obj(items) => {
            out.push(b'{');
            for (n, (k, item)) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write(out, item)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(raw: &str) -> Option<String> {
        let v = parse(raw.as_bytes()).ok()?;
        let mut out = Vec::new();
        write(&mut out, &v).ok()?;
        Some(String::from_utf8(out).unwrap())
    }

    #[test]
    fn round_trips_what_orjson_writes() {
        assert_eq!(round(r#"{"a":[1,-2,0.5,-0.0,true,null],"b":"x\"\\\n\u001b/"}"#).unwrap(),
                   r#"{"a":[1,-2,0.5,-0.0,true,null],"b":"x\"\\\n\u001b/"}"#);
        assert_eq!(round(r#"{"a":1000.0}"#).unwrap(), r#"{"a":1000.0}"#);
    }

    #[test]
    fn finds_special_bytes_like_a_bytewise_scan() {
        let mut seed = 7u64;
        for _ in 0..20000 {
            let len = (seed % 40) as usize;
            let mut b = Vec::new();
            for _ in 0..len {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (seed >> 33) as u8;
                b.push(if r % 5 == 0 { r } else { b'a' + r % 26 });
            }
            assert_eq!(find_special(&b), b.iter().position(|&c| SPECIAL[c as usize]), "{b:?}");
        }
    }

    #[test]
    fn declines_what_it_cannot_prove() {
        for bad in [r#"{"a":1,"a":2}"#, "1e5", "1.50", "9223372036854775808", r#""\ud800""#,
                    "01", "[1,]", "{\"a\":1}x", "\"\x01\""] {
            assert!(round(bad).is_none(), "{bad}");
        }
    }
}
