//! The particle grid of seed 001 (`handlekit_bench::grid`) under criterion:
//! one frame (every particle moves, the grid is updated, then 100,000
//! neighbour queries) for (a) `IndexLists`, (b) one `Vec<u32>` per cell,
//! (c) `IndexLists` compacted before each frame (the compaction is not
//! timed), and `IndexLists` relinking by walking every cell.
//!
//! ```text
//! cargo bench -p handlekit-bench --bench grid
//! HANDLEKIT_GRID_SMALL=1 cargo bench -p handlekit-bench --bench grid   # 200 × 200 cells
//! ```

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handlekit_bench::grid::{self, Grid, ListGrid, Params, VecGrid};

fn params() -> Params {
    let mut params = Params::SEED_001;
    if std::env::var_os("HANDLEKIT_GRID_SMALL").is_some() {
        params.side = 200;
        params.particles = 40_000;
        params.queries = 4_000;
    }
    params
}

/// Times `iterations` frames of a grid built once; `before_frame` runs
/// untimed before each frame.
fn frames<G: Grid>(
    grid: &mut G,
    params: &Params,
    points: &[(f32, f32)],
    iterations: u64,
    mut before_frame: impl FnMut(&mut G),
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iterations {
        before_frame(grid);
        let start = Instant::now();
        black_box(grid::frame(grid, points, params.radius));
        total += start.elapsed();
    }
    total
}

fn grid_frame(c: &mut Criterion) {
    let params = params();
    let particles = grid::spawn(&params);
    let points = grid::query_points(&params, 0);
    let mut group = c.benchmark_group("grid/frame");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(params.particles as u64));

    let mut lists = ListGrid::build(particles.clone(), params.side);
    group.bench_function("a_IndexLists", |b| {
        b.iter_custom(|n| frames(&mut lists, &params, &points, n, |_| {}));
    });
    drop(lists);

    let mut vecs = VecGrid::build(particles.clone(), params.side);
    group.bench_function("b_Vec_u32_per_cell", |b| {
        b.iter_custom(|n| frames(&mut vecs, &params, &points, n, |_| {}));
    });
    drop(vecs);

    let mut compacted = ListGrid::build(particles.clone(), params.side);
    group.bench_function("c_IndexLists_compacted", |b| {
        b.iter_custom(|n| frames(&mut compacted, &params, &points, n, ListGrid::compact));
    });
    drop(compacted);

    let mut walking = ListGrid::build(particles, params.side);
    walking.walk_cells = true;
    group.bench_function("a_IndexLists_walk_cells", |b| {
        b.iter_custom(|n| frames(&mut walking, &params, &points, n, |_| {}));
    });
    group.finish();
}

criterion_group!(benches, grid_frame);
criterion_main!(benches);
