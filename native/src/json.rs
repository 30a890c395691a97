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
static SPECIAL: [bool; 256] = {
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
            break; // the first special byte is in this word: found bytewise below
        }
        i += 8;
    }
    b[i..].iter().position(|&c| SPECIAL[c as usize]).map(|p| p + i)
}

/// Deeper than this is declined (the answer model's own bound is 32 levels).
const MAX_DEPTH: usize = 64;

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

pub fn parse(raw: &[u8]) -> Res<Value<'_>> {
    parse_with(raw, false)
}

/// `relaxed`: floats in any spelling (our own configuration, read once: only its values
/// matter, it is never written back).
pub fn parse_with(raw: &[u8], relaxed: bool) -> Res<Value<'_>> {
    let mut p = Parser::new(raw, relaxed, false)?;
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(Decline);
    }
    Ok(v)
}

pub struct Parser<'a> {
    s: &'a [u8],
    pub i: usize,
    relaxed: bool,
    canonical: bool,
}

impl<'a> Parser<'a> {
    pub fn new(raw: &'a [u8], relaxed: bool, canonical: bool) -> Res<Parser<'a>> {
        // orjson rejects invalid UTF-8 anywhere in the document.
        std::str::from_utf8(raw).map_err(|_| Decline)?;
        Ok(Parser { s: raw, i: 0, relaxed, canonical })
    }

    pub fn text(&self) -> &'a [u8] {
        self.s
    }

    /// The exact bytes `lit` next, or Decline.
    pub fn expect(&mut self, lit: &[u8]) -> Res<()> {
        if self.s[self.i..].starts_with(lit) {
            self.i += lit.len();
            Ok(())
        } else {
            Err(Decline)
        }
    }

    pub fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn at_end(&self) -> bool {
        self.i == self.s.len()
    }

    fn ws(&mut self) {
        if self.canonical {
            return; // orjson writes none: a space is then a syntax error (Decline)
        }
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn lit(&mut self, word: &[u8], v: Value<'a>) -> Res<Value<'a>> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(Decline)
        }
    }

    pub fn value(&mut self, depth: usize) -> Res<Value<'a>> {
        if depth >= MAX_DEPTH {
            return Err(Decline);
        }
        match self.peek().ok_or(Decline)? {
            b'{' => self.object(depth),
            b'[' => self.list(depth),
            b'"' => Ok(Value::Str(self.string()?)),
            b't' => self.lit(b"true", Value::Bool(true)),
            b'f' => self.lit(b"false", Value::Bool(false)),
            b'n' => self.lit(b"null", Value::Null),
            _ => self.number(),
        }
    }

    fn object(&mut self, depth: usize) -> Res<Value<'a>> {
        self.i += 1;
        let mut items: Vec<(Cow<'a, str>, Value<'a>)> = Vec::with_capacity(16);
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Obj(items));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(Decline);
            }
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(Decline);
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            if items.len() > 64 || items.iter().any(|(k, _)| *k == key) {
                return Err(Decline); // duplicate keys (or a huge object): not ours
            }
            items.push((key, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Obj(items));
                }
                _ => return Err(Decline),
            }
        }
    }

    fn list(&mut self, depth: usize) -> Res<Value<'a>> {
        self.i += 1;
        let mut items = Vec::with_capacity(4);
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::List(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::List(items));
                }
                _ => return Err(Decline),
            }
        }
    }

    fn hex4(&mut self) -> Res<u32> {
        let h = self.s.get(self.i..self.i + 4).ok_or(Decline)?;
        let mut v = 0u32;
        for &c in h {
            v = v * 16 + (c as char).to_digit(16).ok_or(Decline)?;
        }
        self.i += 4;
        Ok(v)
    }

    pub fn string(&mut self) -> Res<Cow<'a, str>> {
        self.i += 1; // the opening quote
        let start = self.i;
        // Fast scan: no escapes (the common case) is a borrowed slice.
        let run = find_special(&self.s[self.i..]).ok_or(Decline)?;
        self.i += run;
        if self.s[self.i] == b'"' {
            // the input is valid UTF-8 and the slice ends before an ASCII quote
            let out = unsafe { std::str::from_utf8_unchecked(&self.s[start..self.i]) };
            self.i += 1;
            return Ok(Cow::Borrowed(out));
        }
        let mut out: Vec<u8> = Vec::with_capacity(run + 16);
        out.extend_from_slice(&self.s[start..self.i]);
        loop {
            let c = *self.s.get(self.i).ok_or(Decline)?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).map(Cow::Owned).map_err(|_| Decline),
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or(Decline)?;
                    self.i += 1;
                    if self.canonical && !self.canonical_escape(e) {
                        return Err(Decline);
                    }
                    match e {
                        b'"' => out.push(b'"'),
                        b'\\' => out.push(b'\\'),
                        b'/' => out.push(b'/'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                // a surrogate pair, or a lone surrogate: declined
                                if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return Err(Decline);
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(Decline);
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return Err(Decline);
                            } else {
                                hi
                            };
                            let ch = char::from_u32(code).ok_or(Decline)?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err(Decline),
                    }
                }
                c if c < 0x20 => return Err(Decline),
                _ => {
                    // a run of plain bytes up to the next quote, backslash or control
                    let run = find_special(&self.s[self.i..]).ok_or(Decline)?;
                    out.push(c);
                    out.extend_from_slice(&self.s[self.i..self.i + run]);
                    self.i += run;
                }
            }
        }
    }

    /// Is the escape starting with `e` (after the backslash) one orjson writes?
    fn canonical_escape(&self, e: u8) -> bool {
        match e {
            b'"' | b'\\' | b'n' | b't' | b'r' | b'b' | b'f' => true,
            b'u' => match self.s.get(self.i..self.i + 4) {
                Some([b'0', b'0', hi @ (b'0' | b'1'), lo]) => {
                    let lo = match lo {
                        b'0'..=b'9' => lo - b'0',
                        b'a'..=b'f' => lo - b'a' + 10,
                        _ => return false,
                    };
                    let c = (hi - b'0') * 16 + lo;
                    !matches!(c, 8 | 9 | 10 | 12 | 13)
                }
                _ => false,
            },
            _ => false,
        }
    }

    fn number(&mut self) -> Res<Value<'a>> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        let int_len = self.i - int_start;
        if int_len == 0 || (int_len > 1 && self.s[int_start] == b'0') {
            return Err(Decline);
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.i += 1;
            let f = self.i;
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
            if self.i == f {
                return Err(Decline);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            if !self.relaxed {
                return Err(Decline); // exponents: orjson's spelling differs from ours
            }
            float = true;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        // ASCII digits, '-' and '.' only
        let text = unsafe { std::str::from_utf8_unchecked(&self.s[start..self.i]) };
        if !float {
            if self.canonical && text == "-0" {
                return Err(Decline); // orjson writes 0
            }
            return text.parse::<i64>().map(Value::Int).map_err(|_| Decline);
        }
        let v: f64 = text.parse().map_err(|_| Decline)?;
        if self.relaxed {
            return Ok(Value::Float(v));
        }
        let mut buf = ryu::Buffer::new();
        if buf.format_finite(v) != text {
            return Err(Decline); // not the shortest spelling: writing it back would differ
        }
        Ok(Value::Float(v))
    }
}

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
    let mut b = itoa_buf(v);
    out.append(&mut b);
}

fn itoa_buf(v: i64) -> Vec<u8> {
    v.to_string().into_bytes()
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
