//! What the core decides with: `streams.detect.native.core_config` (read once).
//!
//! A configuration part the core cannot mirror exactly does not fail the worker: it turns
//! the core off for what depends on it (every record then takes the Python path).

use std::collections::HashMap;

use crate::json::{parse_with, Decline, Res, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    Enum,
    Number,
    Date,
    List,
    Text,
}

#[derive(Debug)]
pub struct Criterion {
    pub kind: Kind,
    /// The schema's enum strings (its other values are never compared by the paths the
    /// core takes: see `supported`).
    pub enum_strs: Vec<String>,
    /// `value.lower()` of each (ASCII when `supported`), computed once.
    pub enum_lower: Vec<String>,
    /// `schema.enum` is non-empty.
    pub has_enum: bool,
    pub unit: Option<String>,
    pub allows_no_info: bool,
    /// False when normalising against this schema needs Python semantics the core does not
    /// mirror (non-ASCII enum strings or unit: Unicode `lower()`; non-string values in an
    /// enum or list schema: `True == 1` membership).
    pub supported: bool,
}

#[derive(Debug)]
pub struct Config {
    pub expected: Vec<String>,
    pub by_task: HashMap<String, Vec<String>>,
    pub threshold: f64,
    pub criteria: HashMap<String, Criterion>,
    pub max_answer_bytes: usize,
    pub max_rationale_chars: usize,
    pub max_reason_chars: usize,
    pub max_evidence_items: usize,
    pub max_quote_chars: usize,
    pub max_cell_state_bytes: usize,
    pub max_seen_events: usize,
    /// `MAX_JSON_DEPTH`: how deep a list or dict answer may nest (`check_json_value`).
    pub max_json_depth: usize,
    /// False: the core declines every record (an agent list it cannot rank as Python does).
    pub enabled: bool,
}

fn strs(v: Option<&Value>) -> Res<Vec<String>> {
    match v {
        Some(Value::List(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).ok_or(Decline))
            .collect(),
        _ => Err(Decline),
    }
}

fn size(v: &Value, key: &str) -> Res<usize> {
    match v.get(key) {
        Some(Value::Int(n)) if *n >= 0 => Ok(*n as usize),
        _ => Err(Decline),
    }
}

fn distinct(agents: &[String]) -> bool {
    agents.iter().enumerate().all(|(i, a)| !agents[..i].contains(a))
}

impl Criterion {
    fn unsupported() -> Criterion {
        Criterion { kind: Kind::Text, enum_strs: vec![], enum_lower: vec![], has_enum: false,
                    unit: None, allows_no_info: false, supported: false }
    }
}

#[allow(clippy::unnecessary_map_or)] // is_none_or: stable only since Rust 1.82
fn criterion(v: &Value) -> Res<Criterion> {
    let kind = match v.get("type").and_then(Value::as_str) {
        Some("boolean") => Kind::Boolean,
        Some("enum") => Kind::Enum,
        Some("number") => Kind::Number,
        Some("date") => Kind::Date,
        Some("list") => Kind::List,
        Some("string") => Kind::Text,
        _ => return Err(Decline),
    };
    let values: &[Value] = match v.get("enum") {
        Some(Value::List(items)) => items,
        Some(Value::Null) | None => &[],
        _ => return Err(Decline),
    };
    let unit = match v.get("unit") {
        Some(Value::Str(s)) => Some(s.to_string()),
        Some(Value::Null) | None => None,
        _ => return Err(Decline),
    };
    let allows_no_info = match v.get("allows_no_info") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(Decline),
    };
    let enum_strs: Vec<String> =
        values.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect();
    let mut supported = enum_strs.iter().all(|s| s.is_ascii())
        && unit.as_deref().map_or(true, str::is_ascii);
    if matches!(kind, Kind::Enum | Kind::List) && enum_strs.len() != values.len() {
        supported = false;
    }
    let enum_lower = enum_strs.iter().map(|s| s.to_ascii_lowercase()).collect();
    Ok(Criterion { kind, enum_strs, enum_lower, has_enum: !values.is_empty(), unit, allows_no_info,
                   supported })
}

impl Config {
    pub fn parse(raw: &[u8]) -> Res<Config> {
        let v = parse_with(raw, true)?;
        let expected = strs(v.get("expected_agents"))?;
        let mut by_task = HashMap::new();
        match v.get("agents_by_task") {
            Some(Value::Obj(items)) => {
                for (task, agents) in items {
                    by_task.insert(task.to_string(), strs(Some(agents))?);
                }
            }
            _ => return Err(Decline),
        }
        let threshold = match v.get("low_confidence_threshold") {
            Some(Value::Float(f)) => *f,
            Some(Value::Int(i)) => *i as f64,
            _ => return Err(Decline),
        };
        let mut criteria = HashMap::new();
        match v.get("criteria") {
            Some(Value::Obj(items)) => {
                for (field, c) in items {
                    // a schema the core cannot read: its records all take the Python path
                    let c = criterion(c).unwrap_or_else(|_| Criterion::unsupported());
                    criteria.insert(field.to_string(), c);
                }
            }
            _ => return Err(Decline),
        }
        let enabled = distinct(&expected) && by_task.values().all(|a| distinct(a))
            && threshold.is_finite();
        Ok(Config {
            expected,
            by_task,
            threshold,
            criteria,
            max_answer_bytes: size(&v, "max_answer_bytes")?,
            max_rationale_chars: size(&v, "max_rationale_chars")?,
            max_reason_chars: size(&v, "max_reason_chars")?,
            max_evidence_items: size(&v, "max_evidence_items")?,
            max_quote_chars: size(&v, "max_quote_chars")?,
            max_cell_state_bytes: size(&v, "max_cell_state_bytes")?,
            max_seen_events: size(&v, "max_seen_events")?,
            max_json_depth: size(&v, "max_json_depth")?,
            enabled,
        })
    }

    /// `DetectConfig.agents_for`.
    pub fn agents_for(&self, task: &str) -> &[String] {
        self.by_task.get(task).unwrap_or(&self.expected)
    }
}
