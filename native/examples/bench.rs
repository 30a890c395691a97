//! Times `step` alone, no Python: `cargo run --release --example bench CONFIG RECORDS [ROUNDS]`
//! (RECORDS: JSON lines `[key, value, state|null]`). With ROUNDS 0 it only reads the input,
//! so `perf stat -e instructions:u` of ROUNDS n minus ROUNDS 0 is the steps' instructions.
use judgeflow_native::json::{parse, Value};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg = judgeflow_native::config_for_bench(&std::fs::read(&args[1]).unwrap());
    let rounds: usize = args.get(3).map_or(3, |r| r.parse().unwrap());
    let text = std::fs::read_to_string(&args[2]).unwrap();
    let recs: Vec<(String, String, Option<String>)> = text
        .lines()
        .map(|l| {
            let Value::List(v) = parse(l.as_bytes()).unwrap() else { panic!("a list") };
            let s = |x: &Value| x.as_str().map(str::to_owned);
            (s(&v[0]).unwrap(), s(&v[1]).unwrap(), s(&v[2]))
        })
        .collect();
    for _ in 0..rounds {
        let t0 = std::time::Instant::now();
        let mut taken = 0;
        for (i, (k, v, s)) in recs.iter().enumerate() {
            let state = s.as_deref().map(str::as_bytes);
            let source = ("answers", 0, i as i64);
            if judgeflow_native::step(&cfg, k.as_bytes(), v.as_bytes(), state, source, 1000.0,
                                      "1970-01-01T00:16:40Z").is_ok() {
                taken += 1;
            }
        }
        let per = t0.elapsed().as_secs_f64() / recs.len() as f64 * 1e6;
        println!("{per:.2} us/event, {taken} of {} taken", recs.len());
    }
}
