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

fn ms(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.2} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
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
    let (vm, vec, vec_cap) = (median(vm), median(vec), median(vec_cap));
    println!("\npush {mib} MiB:");
    println!("  VmVec::push                  {}", ms(vm));
    println!("  Vec::push (no reserve)       {}", ms(vec));
    println!("  Vec::with_capacity + push    {}", ms(vec_cap));
    println!(
        "  VmVec / Vec = {:.2}, VmVec / Vec::with_capacity = {:.2}",
        vm.as_secs_f64() / vec.as_secs_f64(),
        vm.as_secs_f64() / vec_cap.as_secs_f64()
    );

    println!(
        "\nremove the front 10% ({} MiB) of a touched {mib} MiB array:",
        cut * 8 / MIB
    );
    let (mut t_vm, mut t_dq, mut t_vec) = (Vec::new(), Vec::new(), Vec::new());
    let mut rss_lines = Vec::new();
    for round in 0..rounds {
        let (_, mut v) = push_vmvec(n);
        let before = rss_mib();
        let start = Instant::now();
        v.drain_front(cut);
        t_vm.push(start.elapsed());
        let after = rss_mib();
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
        let before = rss_mib();
        let start = Instant::now();
        d.drain(..cut);
        t_dq.push(start.elapsed());
        if round == 0 {
            rss_lines.push(format!("  VecDeque: RSS {before} -> {} MiB", rss_mib()));
        }
        black_box(&d);
        drop(d);

        let (_, mut w) = push_vec_reserved(n);
        let before = rss_mib();
        let start = Instant::now();
        w.drain(..cut);
        t_vec.push(start.elapsed());
        if round == 0 {
            rss_lines.push(format!("  Vec:      RSS {before} -> {} MiB", rss_mib()));
        }
        black_box(&w);
        drop(w);
    }
    let (t_vm, t_dq, t_vec) = (median(t_vm), median(t_dq), median(t_vec));
    println!("  VmVec::drain_front + release {}", ms(t_vm));
    println!("  VecDeque::drain(..n)         {}", ms(t_dq));
    println!("  Vec::drain(..n)              {}", ms(t_vec));
    println!(
        "  VmVec / VecDeque = {:.0}, VmVec / Vec = {:.3}",
        t_vm.as_secs_f64() / t_dq.as_secs_f64(),
        t_vm.as_secs_f64() / t_vec.as_secs_f64()
    );
    println!("\nresident memory (first round):");
    for line in rss_lines {
        println!("{line}");
    }
}
