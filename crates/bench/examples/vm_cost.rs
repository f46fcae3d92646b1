// Throwaway: the cost of one VmVec region (reserve, first push, drop).
use handlekit::VmVec;
use std::hint::black_box;
use std::time::Instant;
fn main() {
    for &(cap, pushes) in &[
        (1usize << 24, 1usize),
        (1 << 24, 1000),
        (1 << 14, 1),
        (1 << 14, 1000),
        (1 << 24, 0),
    ] {
        let rounds = 20000;
        let t = Instant::now();
        for _ in 0..rounds {
            let mut v: VmVec<[u8; 12]> = VmVec::with_max_capacity(cap).unwrap();
            for i in 0..pushes {
                v.push([i as u8; 12]);
            }
            black_box(&v);
        }
        println!(
            "cap {cap} pushes {pushes}: {:.2} us per region",
            t.elapsed().as_nanos() as f64 / rounds as f64 / 1000.0
        );
    }
    let rounds = 20000;
    let t = Instant::now();
    for _ in 0..rounds {
        let mut v: Vec<[u8; 12]> = Vec::new();
        for i in 0..1000 {
            v.push([i as u8; 12]);
        }
        black_box(&v);
    }
    println!(
        "Vec 1000 pushes: {:.2} us",
        t.elapsed().as_nanos() as f64 / rounds as f64 / 1000.0
    );
}
