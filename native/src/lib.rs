//! `judgeflow_native.DetectCore`: the detector's common case compiled (see
//! streams/detect/native.py). `answer(...)` returns exactly what
//! tests/unit/streams/native_reference.py's `reference_answer` returns for a record that
//! opens a cell or completes a pending one, or None ("not mine": the Python path decides).
//! No state is kept between calls: every input is an argument, every result a return value.

mod answer;
pub mod config;
mod dates;
mod decide;
pub mod json;
mod read;
mod normalize;
mod state;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString, PyTuple};

use crate::answer::fast_answer;
use crate::config::Config;
use crate::decide::{decide, Ranked};
use crate::json::{Decline, Res};
use crate::normalize::form;

/// One step the core took: the Python path's `NativeStep` (decided_at None while pending).
pub struct Step {
    pub state: Vec<u8>,
    pub first_seen: f64,
    pub decided_at: Option<f64>,
    pub partition: i64,
    pub emits: Vec<(&'static str, Vec<u8>, String)>,
}

/// The record `value` (keyed `key`) against its cell's stored `state`, from `source`.
pub fn step(cfg: &Config, key: &[u8], value: &[u8], state: Option<&[u8]>,
            source: (&str, i64, i64), now: f64, stamp: &str) -> Res<Step> {
    if !cfg.enabled || value.len() > cfg.max_answer_bytes {
        return Err(Decline);
    }
    let new = fast_answer(cfg, json::parse(value)?)?;
    let cell = format!("{}|{}|{}", new.task_id, new.patient_id, new.field_id);
    if key != cell.as_bytes() {
        return Err(Decline); // a key mismatch is a dead letter: Python's message
    }
    let pending = match state {
        None => None,
        Some(raw) => Some(state::load(raw)?),
    };
    let (first_seen, partition) = match &pending {
        None => (now, source.1),
        Some(p) => (p.first_seen, p.partition),
    };
    let stored: &[state::Stored] = pending.as_ref().map_or(&[], |p| &p.answers);
    let mut seen: Vec<&str> = pending.as_ref()
        .map_or(Vec::new(), |p| p.seen_events.iter().map(|e| e.as_ref()).collect());
    // a duplicate event, a second answer of an agent (stale or superseding), or a cell
    // whose seen events would be trimmed: the Python path's
    if seen.contains(&new.event_id.as_ref()) || seen.len() + 1 >= cfg.max_seen_events
        || stored.iter().any(|s| s.agent_key == new.agent_id)
    {
        return Err(Decline);
    }
    // decide reads the first stored answer's ids (criterion, agents): all must be the cell's
    if stored.iter().any(|s| s.task_id != new.task_id || s.patient_id != new.patient_id
                         || s.field_id != new.field_id) {
        return Err(Decline);
    }
    seen.push(&new.event_id);
    let mut answers: Vec<(&str, &[u8])> =
        stored.iter().map(|s| (s.agent_key.as_ref(), s.json)).collect();
    answers.push((&new.agent_id, &new.json));
    let agents = cfg.agents_for(&new.task_id);
    let complete = agents.iter().all(|a| answers.iter().any(|(k, _)| k == a));
    if !complete {
        let raw = state::dump(first_seen, partition, &answers, &seen, None)?;
        if raw.len() > cfg.max_cell_state_bytes {
            return Err(Decline);
        }
        return Ok(Step { state: raw, first_seen, decided_at: None, partition, emits: vec![] });
    }
    if answers.len() != agents.len() {
        return Err(Decline); // another agent answered too: ranked by id in Python
    }
    let criterion = cfg.criteria.get(new.field_id.as_ref()).ok_or(Decline)?;
    let mut ranked = Vec::with_capacity(agents.len());
    for agent in agents {
        let (raw, conf, json) = match stored.iter().find(|s| s.agent_key == agent.as_str()) {
            Some(s) => (&s.answer, &s.confidence, s.json),
            None => (&new.answer, &new.confidence, new.json.as_slice()),
        };
        ranked.push(Ranked { agent_id: agent, json, form: form(raw, criterion)?,
                             low: conf.low(cfg.threshold) });
    }
    let decided = decide([&new.task_id, &new.patient_id, &new.field_id], &cell, &ranked,
                         source, stamp);
    let raw = state::dump(first_seen, partition, &answers, &seen,
                          Some((now, &decided.inputs_id, source, &decided.emits)))?;
    if raw.len() > cfg.max_cell_state_bytes {
        return Err(Decline);
    }
    Ok(Step { state: raw, first_seen, decided_at: Some(now), partition, emits: decided.emits })
}

#[pyclass(frozen)]
struct DetectCore {
    cfg: Config,
}

fn exact_int(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_exact_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        v.extract::<i64>().ok()
    } else {
        None
    }
}

fn exact_str<'a>(v: &'a Bound<'_, PyAny>) -> Option<std::borrow::Cow<'a, str>> {
    if v.is_exact_instance_of::<PyString>() {
        v.cast::<PyString>().ok()?.to_cow().ok()
    } else {
        None
    }
}

/// The few names a step returns (kinds and outcome labels), as interned strings.
fn name<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyString> {
    let interned = match text {
        "" => intern!(py, ""),
        "job" => intern!(py, "job"),
        "outcome" => intern!(py, "outcome"),
        "agreement" => intern!(py, "agreement"),
        "disagreement" => intern!(py, "disagreement"),
        "type_drift" => intern!(py, "type_drift"),
        "low_confidence" => intern!(py, "low_confidence"),
        _ => return PyString::new(py, text),
    };
    interned.clone()
}

#[pymethods]
impl DetectCore {
    #[new]
    fn new(config_json: &[u8]) -> PyResult<Self> {
        let cfg = Config::parse(config_json).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err("DetectCore: unreadable configuration")
        })?;
        Ok(DetectCore { cfg })
    }

    /// The step for one answer record, or None (see the module docs).
    #[allow(clippy::too_many_arguments)]
    fn answer<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>, value: &Bound<'py, PyAny>,
                   state: &Bound<'py, PyAny>, topic: &Bound<'py, PyAny>,
                   partition: &Bound<'py, PyAny>, offset: &Bound<'py, PyAny>,
                   now: &Bound<'py, PyAny>, stamp: &Bound<'py, PyAny>)
                   -> PyResult<Option<Bound<'py, PyTuple>>> {
        let none = Ok(None);
        let (Ok(key), Ok(value)) = (key.cast::<PyBytes>(), value.cast::<PyBytes>()) else {
            return none;
        };
        let state = if state.is_none() {
            None
        } else {
            match state.cast::<PyBytes>() {
                Ok(b) => Some(b.as_bytes()),
                Err(_) => return none,
            }
        };
        let (Some(topic), Some(part), Some(offset), Some(stamp)) =
            (exact_str(topic), exact_int(partition), exact_int(offset), exact_str(stamp))
        else {
            return none;
        };
        if !now.is_exact_instance_of::<PyFloat>() {
            return none;
        }
        let now: f64 = now.extract()?;
        let Ok(step) = step(&self.cfg, key.as_bytes(), value.as_bytes(), state,
                            (&topic, part, offset), now, &stamp) else {
            return none;
        };
        let emits: Vec<Bound<'py, PyTuple>> = step.emits.iter()
            .map(|(kind, rec, label)| {
                PyTuple::new(py, [name(py, kind).into_any(),
                                  PyBytes::new(py, rec).into_any(),
                                  name(py, label).into_any()])
            })
            .collect::<PyResult<_>>()?;
        let decided = match step.decided_at {
            Some(at) => PyFloat::new(py, at).into_any(),
            None => py.None().into_bound(py),
        };
        let out = PyTuple::new(py, [intern!(py, "new").clone().into_any(),
                                    PyBytes::new(py, &step.state).into_any(),
                                    PyFloat::new(py, step.first_seen).into_any(),
                                    decided,
                                    step.partition.into_pyobject(py)?.into_any(),
                                    PyTuple::new(py, emits)?.into_any()])?;
        Ok(Some(out))
    }
}

/// JSON read and written back by the core's reader and writer, or None (declined): for
/// the tests, which compare it with orjson.
#[pyfunction]
fn _roundtrip<'py>(py: Python<'py>, raw: &[u8]) -> Option<Bound<'py, PyBytes>> {
    let v = json::parse(raw).ok()?;
    let mut out = Vec::new();
    json::write(&mut out, &v).ok()?;
    Some(PyBytes::new(py, &out))
}

/// A float as the core writes it (None where it declines), for the tests.
#[pyfunction]
fn _float_json(x: f64) -> Option<String> {
    let mut out = Vec::new();
    json::write_float(&mut out, x).ok()?;
    String::from_utf8(out).ok()
}

#[pymodule]
fn judgeflow_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DetectCore>()?;
    m.add_function(wrap_pyfunction!(_roundtrip, m)?)?;
    m.add_function(wrap_pyfunction!(_float_json, m)?)?;
    Ok(())
}

/// The configuration reader, for examples/bench.rs.
pub fn config_for_bench(raw: &[u8]) -> Config {
    Config::parse(raw).expect("configuration")
}
