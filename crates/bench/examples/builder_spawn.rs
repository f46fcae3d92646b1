//! Spawning through an entity builder, handlekit-ecs's `EntityBuilder`
//! against hecs's, and a struct that derives `Bundle` against the same
//! tuple (issue 33's goals: builder spawn ≤ 1.0× hecs's, a derived bundle
//! as fast as its tuple). The four loops run interleaved, in a rotating
//! order, in one process; each round spawns `N` entities of the runner's
//! `simple_insert` components (a 4×4 matrix and three 3-vectors) into a
//! fresh world (made and dropped outside the timing), one `spawn` call per
//! entity, as users write it. Prints the median ratio of each pair over the
//! rounds, with the lowest and highest.
//!
//! ```sh
//! RUSTFLAGS= CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo run --release \
//!     --target-dir target/user -p handlekit-bench --example builder_spawn [N] [ROUNDS]
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured*' \
//!     target/user/release/examples/builder_spawn count K [N]   # K: 0-5, the loops in order
//! ```
//!
//! The file needs only `handlekit-ecs` and `hecs` (its components copy the
//! shapes of `data.rs`'s), so it also runs as the `main.rs` of a scratch
//! crate with those two dependencies, without building the runner's other
//! peers.

// The components' fields are written, never read back.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// The shapes of `simple_insert`'s components (`data.rs`): a 4×4 `f32`
/// matrix and three 3-vectors.
#[derive(Clone, Copy)]
struct Transform([[f32; 4]; 4]);
#[derive(Clone, Copy)]
struct Position([f32; 3]);
#[derive(Clone, Copy)]
struct Rotation([f32; 3]);
#[derive(Clone, Copy)]
struct Velocity([f32; 3]);

/// One entity's components.
fn simple() -> (Transform, Position, Rotation, Velocity) {
    let mut m = [[0.0; 4]; 4];
    for (i, col) in m.iter_mut().enumerate() {
        col[i] = 1.0;
    }
    (
        Transform(m),
        Position([1.0, 0.0, 0.0]),
        Rotation([1.0, 0.0, 0.0]),
        Velocity([1.0, 0.0, 0.0]),
    )
}

/// The runner's `Simple` tuple as a derived bundle.
#[derive(handlekit_ecs::Bundle)]
struct SimpleBundle {
    transform: Transform,
    position: Position,
    rotation: Rotation,
    velocity: Velocity,
}

/// One entity's components as the derived bundle: made as `simple` makes
/// the tuple, so the two loops differ only in the bundle type.
fn simple_bundle() -> SimpleBundle {
    let (transform, position, rotation, velocity) = simple();
    SimpleBundle {
        transform,
        position,
        rotation,
        velocity,
    }
}

/// The builder loop, one function per crate (the two builders share no
/// trait; the loops are the same source).
macro_rules! builder_loop {
    ($name:ident, $krate:ident) => {
        #[inline(never)]
        fn $name(world: &mut $krate::World, n: usize) {
            let mut builder = $krate::EntityBuilder::new();
            for _ in 0..n {
                let (t, p, r, v) = black_box(simple());
                builder.add(t).add(p).add(r).add(v);
                black_box(world.spawn(builder.build()));
            }
        }
    };
}
builder_loop!(measured_hk_builder, handlekit_ecs);
builder_loop!(measured_hecs_builder, hecs);

#[inline(never)]
fn measured_hk_tuple(world: &mut handlekit_ecs::World, n: usize) {
    for _ in 0..n {
        black_box(world.spawn(black_box(simple())));
    }
}

#[inline(never)]
fn measured_hk_derived(world: &mut handlekit_ecs::World, n: usize) {
    for _ in 0..n {
        black_box(world.spawn(black_box(simple_bundle())));
    }
}

#[inline(never)]
fn measured_hk_tuple_batch(world: &mut handlekit_ecs::World, n: usize) {
    black_box(world.spawn_batch((0..n).map(|_| black_box(simple()))));
}

#[inline(never)]
fn measured_hk_derived_batch(world: &mut handlekit_ecs::World, n: usize) {
    black_box(world.spawn_batch((0..n).map(|_| black_box(simple_bundle()))));
}

/// Times `measured` on a fresh world (made and dropped outside the timing).
fn time<W: Default>(measured: fn(&mut W, usize), n: usize) -> Duration {
    let mut world = W::default();
    let start = Instant::now();
    measured(&mut world, n);
    let elapsed = start.elapsed();
    black_box(&world);
    elapsed
}

/// A timed loop: spawns `N` entities into a fresh world.
type Loop = fn(usize) -> Duration;

/// The median, lowest and highest of `ratios`.
fn summary(mut ratios: Vec<f64>) -> (f64, f64, f64) {
    ratios.sort_by(f64::total_cmp);
    (
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
    )
}

fn main() {
    let loops: [(&str, Loop); 6] = [
        ("handlekit EntityBuilder", |n| time(measured_hk_builder, n)),
        ("hecs EntityBuilder", |n| time(measured_hecs_builder, n)),
        ("handlekit tuple", |n| time(measured_hk_tuple, n)),
        ("handlekit derived", |n| time(measured_hk_derived, n)),
        ("handlekit tuple batch", |n| {
            time(measured_hk_tuple_batch, n)
        }),
        ("handlekit derived batch", |n| {
            time(measured_hk_derived_batch, n)
        }),
    ];
    let mut args = std::env::args().skip(1).peekable();
    // `count <k> [N]`: loop `k` (0-5, in the order above) once, for
    // callgrind (`--toggle-collect='*measured*'`).
    if args.peek().map(String::as_str) == Some("count") {
        args.next();
        let k: usize = args.next().expect("a loop number").parse().expect("k");
        let n: usize = args.next().map_or(10_000, |a| a.parse().expect("N"));
        println!("{}: {:?}", loops[k].0, loops[k].1(n));
        return;
    }
    let n: usize = args.next().map_or(10_000, |a| a.parse().expect("N"));
    let rounds: usize = args.next().map_or(31, |a| a.parse().expect("ROUNDS"));
    // One warm-up round.
    for (_, run) in &loops {
        run(n);
    }
    let mut times = vec![Vec::new(); loops.len()];
    for round in 0..rounds {
        for k in 0..loops.len() {
            let i = (round + k) % loops.len();
            times[i].push(loops[i].1(n).as_secs_f64());
        }
    }
    for (i, (name, _)) in loops.iter().enumerate() {
        let (median, low, high) = summary(times[i].clone());
        println!(
            "{name:<24} {:>7.2} ns/entity (median; {:.2}–{:.2})",
            median * 1e9 / n as f64,
            low * 1e9 / n as f64,
            high * 1e9 / n as f64
        );
    }
    let ratio =
        |a: usize, b: usize| summary(times[a].iter().zip(&times[b]).map(|(x, y)| x / y).collect());
    for (label, a, b) in [
        ("handlekit builder / hecs builder", 0, 1),
        ("derived / tuple", 3, 2),
        ("derived / tuple, spawn_batch", 5, 4),
    ] {
        let (median, low, high) = ratio(a, b);
        println!("{label:<34} {median:.3}× (median of {rounds} rounds; {low:.3}–{high:.3})");
    }
}
