//! The measurements behind `VmVec`'s closing note: pushing a large array of
//! `u64` into `VmVec` against `Vec` (no reserve) and `Vec::with_capacity`,
//! and removing the front 10% of a touched array (`VmVec::drain_front`,
//! which releases the dead chunks) against `VecDeque::drain(..n)` and
//! `Vec::drain(..n)`, with the resident memory before and after.
//!
//! ```text
//! cargo run --release -p handlekit-bench --example vm_vec            # 1 GiB, 5 rounds
//! cargo run --release -p handlekit-bench --example vm_vec -- 256 3   # 256 MiB, 3 rounds
//! ```
//!
//! Each figure is the median of the rounds; containers alternate within a
//! round. Resident memory comes from `/proc/self/statm` (Linux only; other
//! systems print no RSS). The array is freed between measurements.

#![allow(missing_docs)]

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::{Duration, Instant};

use handlekit::VmVec;

const MIB: usize = 1 << 20;

/// The resident set size in bytes, if `/proc/self/statm` exists.
fn rss() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn rss_mib() -> String {
    rss().map_or_else(|| "-".into(), |b| format!("{:.0}", b as f64 / MIB as f64))
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

/// The three contenders of a comparison: each one's label in the table of
/// medians, and its name in the line of ratios.
type Contenders = [(&'static str, &'static str); 3];

const PUSH: Contenders = [
    ("VmVec::push", "VmVec"),
    ("Vec::push (no reserve)", "Vec"),
    ("Vec::with_capacity + push", "Vec::with_capacity"),
];

const DRAIN: Contenders = [
    ("VmVec::drain_front + release", "VmVec"),
    ("VecDeque::drain(..n)", "VecDeque"),
    ("Vec::drain(..n)", "Vec"),
];

/// Prints each contender's median time, then the first's median over each
/// other's (to `digits` places).
fn print_comparison(contenders: &Contenders, times: [Vec<Duration>; 3], digits: [usize; 2]) {
    let medians = times.map(median);
    for ((label, _), time) in contenders.iter().zip(medians) {
        println!("  {label:<28} {}", ms(time));
    }
    let ours = contenders[0].1;
    let ratios: Vec<String> = contenders[1..]
        .iter()
        .zip(&medians[1..])
        .zip(digits)
        .map(|(((_, name), time), digits)| {
            let ratio = medians[0].as_secs_f64() / time.as_secs_f64();
            format!("{ours} / {name} = {ratio:.digits$}")
        })
        .collect();
    println!("  {}", ratios.join(", "));
}

fn ms(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.2} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}

/// Drains the front of `c` once with `drain`, timed (the time goes to
/// `times`); the resident memory (MiB) before and right after.
fn time_drain<C>(
    c: &mut C,
    times: &mut Vec<Duration>,
    drain: impl FnOnce(&mut C),
) -> (String, String) {
    let before = rss_mib();
    let start = Instant::now();
    drain(c);
    times.push(start.elapsed());
    (before, rss_mib())
}

fn push_vmvec(n: usize) -> (Duration, VmVec<u64>) {
    let start = Instant::now();
    let mut v = VmVec::with_max_capacity(n).expect("reserve");
    for i in 0..n as u64 {
        v.push(i);
    }
    (start.elapsed(), black_box(v))
}

fn push_vec(n: usize) -> (Duration, Vec<u64>) {
    let start = Instant::now();
    let mut v = Vec::new();
    for i in 0..n as u64 {
        v.push(i);
    }
    (start.elapsed(), black_box(v))
}

fn push_vec_reserved(n: usize) -> (Duration, Vec<u64>) {
    let start = Instant::now();
    let mut v = Vec::with_capacity(n);
    for i in 0..n as u64 {
        v.push(i);
    }
    (start.elapsed(), black_box(v))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().map_or(1024, |a| a.parse().expect("MiB"));
    let rounds: usize = args.next().map_or(5, |a| a.parse().expect("rounds"));
    let n = mib * MIB / 8;
    let cut = n / 10;
    println!(
        "VmVec measurements: {mib} MiB of u64 ({n} elements), {rounds} rounds, median; virtual memory: {}",
        handlekit::vm_vec::VIRTUAL_MEMORY
    );

    let (mut vm, mut vec, mut vec_cap) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (t, v) = push_vmvec(n);
        vm.push(t);
        drop(v);
        let (t, v) = push_vec(n);
        vec.push(t);
        drop(v);
        let (t, v) = push_vec_reserved(n);
        vec_cap.push(t);
        drop(v);
    }
    println!("\npush {mib} MiB:");
    print_comparison(&PUSH, [vm, vec, vec_cap], [2, 2]);

    println!(
        "\nremove the front 10% ({} MiB) of a touched {mib} MiB array:",
        cut * 8 / MIB
    );
    let (mut t_vm, mut t_dq, mut t_vec) = (Vec::new(), Vec::new(), Vec::new());
    let mut rss_lines = Vec::new();
    for round in 0..rounds {
        let (_, mut v) = push_vmvec(n);
        let (before, after) = time_drain(&mut v, &mut t_vm, |v| {
            v.drain_front(cut);
        });
        let rebase = {
            let start = Instant::now();
            let r = v.rebase();
            (start.elapsed(), r)
        };
        if round == 0 {
            rss_lines.push(format!(
                "  VmVec:    RSS {before} -> {after} MiB (committed {} MiB)",
                v.committed_bytes() / MIB
            ));
            rss_lines.push(format!(
                "  VmVec::rebase afterwards: {} (shift {} MiB, remapped {} MiB, copied {} bytes), RSS {} MiB",
                ms(rebase.0),
                rebase.1.shift / MIB,
                rebase.1.remapped / MIB,
                rebase.1.copied,
                rss_mib()
            ));
        }
        drop(v);

        let mut d: VecDeque<u64> = (0..n as u64).collect();
        let deque_rss = time_drain(&mut d, &mut t_dq, |d| {
            d.drain(..cut);
        });
        black_box(&d);
        drop(d);

        let (_, mut w) = push_vec_reserved(n);
        let vec_rss = time_drain(&mut w, &mut t_vec, |w| {
            w.drain(..cut);
        });
        black_box(&w);
        drop(w);
        if round == 0 {
            for (name, (before, after)) in [("VecDeque:", deque_rss), ("Vec:     ", vec_rss)] {
                rss_lines.push(format!("  {name} RSS {before} -> {after} MiB"));
            }
        }
    }
    print_comparison(&DRAIN, [t_vm, t_dq, t_vec], [0, 3]);
    println!("\nresident memory (first round):");
    for line in rss_lines {
        println!("{line}");
    }
}
