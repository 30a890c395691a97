//! The strict JSON reader (see json.rs for what it accepts and declines).

use std::borrow::Cow;

use crate::json::{find_special, Decline, Res, Value};

/// Deeper than this is declined (the answer model's own bound is 32 levels).
const MAX_DEPTH: usize = 64;

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
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Obj(Vec::new()));
        }
        // A record has 13 fields; nested objects (evidence items) a few. Sized by depth, so
        // that a record of many small objects cannot reserve 16 entries for each.
        let mut items: Vec<(Cow<'a, str>, Value<'a>)> =
            Vec::with_capacity(if depth == 0 { 16 } else { 4 });
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
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::List(Vec::new()));
        }
        let mut items = Vec::with_capacity(4);
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
