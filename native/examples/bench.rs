//! Times `step` alone (no Python): `cargo run --release --example bench CONFIG RECORDS`
//! where RECORDS holds JSON lines `[key, value, state|null]`.
use judgeflow_native::json::{parse, Value};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg = judgeflow_native::config_for_bench(&std::fs::read(&args[1]).unwrap());
    let text = std::fs::read_to_string(&args[2]).unwrap();
    let recs: Vec<(String, String, Option<String>)> = text.lines().map(|l| {
        let Value::List(v) = parse(l.as_bytes()).unwrap() else { panic!() };
        let s = |x: &Value| x.as_str().map(str::to_owned);
        (s(&v[0]).unwrap(), s(&v[1]).unwrap(), s(&v[2]))
    }).collect();
    phases(&recs);
    for _ in 0..3 {
        let t0 = std::time::Instant::now();
        let mut taken = 0;
        for (i, (k, v, s)) in recs.iter().enumerate() {
            if judgeflow_native::step(&cfg, k.as_bytes(), v.as_bytes(), s.as_deref().map(str::as_bytes),
                                      ("answers", 0, i as i64), 1000.0, "1970-01-01T00:16:40Z").is_ok() {
                taken += 1;
            }
        }
        let dt = t0.elapsed().as_secs_f64();
        println!("{:.2} us/event, {} taken", dt / recs.len() as f64 * 1e6, taken);
    }
}

#[allow(dead_code)]
fn phases(recs: &[(String, String, Option<String>)]) {
    let t0 = std::time::Instant::now();
    let mut n = 0usize;
    for (_, v, _) in recs {
        if let Ok(x) = parse(v.as_bytes()) { if let Value::Obj(o) = x { n += o.len(); } }
    }
    println!("parse value {:.2} us", t0.elapsed().as_secs_f64() / recs.len() as f64 * 1e6);
    let t0 = std::time::Instant::now();
    for (_, _, s) in recs {
        if let Some(s) = s { if let Ok(x) = parse(s.as_bytes()) { if let Value::Obj(o) = x { n += o.len(); } } }
    }
    println!("parse state {:.2} us {}", t0.elapsed().as_secs_f64() / recs.len() as f64 * 1e6, n);
}
