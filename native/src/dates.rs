//! `normalize._canon_date` for the formats the core mirrors: `%Y-%m-%d`, `%Y/%m/%d` and
//! `%m/%d/%Y` with two-digit fields, and the English month-name formats (strptime's `%B`
//! and `%b` in the C locale, which Python keeps unless the program calls `setlocale`).

use crate::answer::valid_date;
use crate::json::{Decline, Res};

/// `_canon_date` of `text` (already `" ".join(raw.strip().split())`, printable ASCII) as
/// JSON: the first of `_DATE_FORMATS` that reads it, for the formats mirrored here.
pub fn date_text(text: &str) -> Res<String> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Res<u32> {
        let part = b.get(r).ok_or(Decline)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(Decline);
        }
        Ok(part.iter().fold(0, |v, c| v * 10 + (c - b'0') as u32))
    };
    if b.len() != 10 {
        return month_name_date(text);
    }
    // "%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y" with two-digit fields: the first format of
    // `_DATE_FORMATS` that matches (the earlier ones cannot match these separators)
    let (y, m, d) = if b[4] == b'-' && b[7] == b'-' || b[4] == b'/' && b[7] == b'/' {
        (num(0..4)?, num(5..7)?, num(8..10)?)
    } else if b[2] == b'/' && b[5] == b'/' {
        (num(6..10)?, num(0..2)?, num(3..5)?)
    } else {
        return month_name_date(text); // "Jun 6 2012" has ten characters too
    };
    if !valid_date(y, m, d) {
        return Err(Decline);
    }
    Ok(format!("\"{y:04}-{m:02}-{d:02}\""))
}

const MONTHS: [&str; 12] = ["january", "february", "march", "april", "may", "june", "july",
                            "august", "september", "october", "november", "december"];

/// `%B` (full English name: the C locale's) or, with `abbreviated`, also `%b`: 1-12.
fn month(token: &str, abbreviated: bool) -> Option<u32> {
    let t = token.to_ascii_lowercase();
    MONTHS.iter().position(|m| *m == t || (abbreviated && t.len() == 3 && m.starts_with(&t)))
        .map(|i| i as u32 + 1)
}

/// strptime's `%d`: `3[01]|[12]\d|0[1-9]|[1-9]`, the whole token.
fn day(token: &str) -> Option<u32> {
    let b = token.as_bytes();
    let ok = match b {
        [d] => (b'1'..=b'9').contains(d),
        [b'0', d] => (b'1'..=b'9').contains(d),
        [b'1' | b'2', d] => d.is_ascii_digit(),
        [b'3', b'0' | b'1'] => true,
        _ => false,
    };
    ok.then(|| token.parse().ok()).flatten()
}

fn year(token: &str) -> Option<u32> {
    (token.len() == 4 && token.bytes().all(|c| c.is_ascii_digit())).then(|| token.parse().ok())
        .flatten()
}

/// `"%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y"` of `_DATE_FORMATS` (the
/// earlier, numeric formats cannot match a month name).
fn month_name_date(text: &str) -> Res<String> {
    let tokens: Vec<&str> = text.split(' ').collect();
    let [first, second, third] = tokens.as_slice() else { return Err(Decline) };
    let y = year(third).ok_or(Decline)?;
    let (m, d) = if let Some(d) = day(first) {
        (month(second, true).ok_or(Decline)?, d)
    } else if let Some(d) = second.strip_suffix(',').and_then(day) {
        (month(first, true).ok_or(Decline)?, d)
    } else {
        (month(first, false).ok_or(Decline)?, day(second).ok_or(Decline)?)
    };
    if !valid_date(y, m, d) {
        return Err(Decline);
    }
    Ok(format!("\"{y:04}-{m:02}-{d:02}\""))
}
