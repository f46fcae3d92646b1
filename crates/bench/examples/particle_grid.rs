//! Seed 001's particle grid: a million particles stored contiguously, and a
//! 1000 × 1000 uniform grid whose cells are `IndexLists` heads. Every frame
//! every particle moves, the ones that changed cells are relinked, and a
//! neighbour query counts the particles within one unit of 100,000 points
//! through the 3 × 3 cells around each.
//!
//! It times the frames of three grids over the same particles and points:
//!
//! - (a) `IndexLists`: 4-byte heads, particles in the node pool in the order
//!   they were spawned (cells scattered through memory);
//! - (b) the strawman, one `Vec<u32>` of particle indices per cell with
//!   remove-and-push on each move;
//! - (c) `IndexLists` after `compact`: each cell's particles contiguous,
//!   cells in order.
//!
//! ```text
//! cargo run --release --example particle_grid             # the seed's sizes
//! cargo run --release --example particle_grid -- --small  # 200 × 200, 40,000 particles
//! cargo run --release --example particle_grid -- --frames 20
//! ```

use std::time::{Duration, Instant};

use handlekit_bench::alloc::{live_bytes, Counting};
use handlekit_bench::grid::{self, Grid, ListGrid, Params, Particle, VecGrid};

#[global_allocator]
static ALLOC: Counting = Counting;

const MIB: f64 = 1024.0 * 1024.0;

/// What one grid did over the frames.
struct Run {
    name: String,
    build: Duration,
    heap: usize,
    grid_bytes: usize,
    node_bytes: usize,
    advance: Vec<Duration>,
    query: Vec<Duration>,
    counts: Vec<u64>,
}

impl Run {
    /// The median frame (move + query), in milliseconds.
    fn frame_ms(&self) -> f64 {
        let frame: Vec<Duration> = self
            .advance
            .iter()
            .zip(&self.query)
            .map(|(a, q)| *a + *q)
            .collect();
        ms(median(&frame))
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

/// Builds a grid (with `prepare` run after, e.g. a compaction), then runs
/// the frames.
fn run<G: Grid>(
    name: &str,
    particles: &[Particle],
    params: &Params,
    points: &[Vec<(f32, f32)>],
    prepare: impl FnOnce(&mut G),
) -> Run {
    let heap_before = live_bytes();
    let start = Instant::now();
    let mut grid = G::build(particles.to_vec(), params.side);
    prepare(&mut grid);
    let build = start.elapsed();
    let heap = live_bytes() - heap_before;
    let mut advance = Vec::new();
    let mut query = Vec::new();
    let mut counts = Vec::new();
    for frame_points in points {
        let start = Instant::now();
        grid.advance();
        let moved = Instant::now();
        let count = grid.query(frame_points, params.radius);
        let done = Instant::now();
        advance.push(moved - start);
        query.push(done - moved);
        counts.push(count);
    }
    Run {
        name: name.to_string(),
        build,
        heap,
        grid_bytes: grid.grid_bytes(),
        node_bytes: grid.node_bytes(),
        advance,
        query,
        counts,
    }
}

fn main() {
    let mut params = Params::SEED_001;
    let mut frames = 10usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--small" => {
                params.side = 200;
                params.particles = 40_000;
                params.queries = 4_000;
            }
            "--frames" => {
                frames = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--frames N");
            }
            other => panic!("unknown argument {other:?} (use --small, --frames N)"),
        }
    }
    assert!(frames >= 1);
    println!(
        "particle grid: {} × {} cells, {} particles, {} queries of radius {} per frame, {frames} frames",
        params.side, params.side, params.particles, params.queries, params.radius
    );

    let particles = grid::spawn(&params);
    let points: Vec<Vec<(f32, f32)>> = (0..frames as u64)
        .map(|frame| grid::query_points(&params, frame))
        .collect();

    let mut compact_time = Duration::ZERO;
    let runs = [
        run::<ListGrid>("(a) IndexLists", &particles, &params, &points, |_| {}),
        run::<VecGrid>(
            "(b) Vec<u32> per cell",
            &particles,
            &params,
            &points,
            |_| {},
        ),
        run::<ListGrid>(
            "(a') IndexLists, walk cells",
            &particles,
            &params,
            &points,
            |grid| grid.walk_cells = true,
        ),
        run::<ListGrid>(
            "(c) IndexLists, compacted",
            &particles,
            &params,
            &points,
            |grid| {
                let start = Instant::now();
                grid.compact();
                compact_time = start.elapsed();
            },
        ),
    ];

    // The three grids saw the same particles, moves and points.
    for other in &runs[1..] {
        assert_eq!(
            other.counts, runs[0].counts,
            "{} disagrees with {} on the query counts",
            other.name, runs[0].name
        );
    }
    // The seed's claim: the grid of heads fits in under 4 MB (MiB).
    let heads = &runs[0];
    assert!(
        heads.grid_bytes < 4 * 1024 * 1024 || params.side != 1000,
        "the grid of heads takes {} bytes",
        heads.grid_bytes
    );

    println!();
    println!(
        "{:<27} {:>11} {:>11} {:>11} {:>10} {:>10} {:>10} {:>9}",
        "grid", "grid MiB", "nodes MiB", "heap MiB", "build ms", "move ms", "query ms", "frame ms"
    );
    for run in &runs {
        println!(
            "{:<27} {:>11.2} {:>11.2} {:>11.2} {:>10.1} {:>10.2} {:>10.2} {:>9.2}",
            run.name,
            run.grid_bytes as f64 / MIB,
            run.node_bytes as f64 / MIB,
            run.heap as f64 / MIB,
            ms(run.build),
            ms(median(&run.advance)),
            ms(median(&run.query)),
            run.frame_ms(),
        );
    }
    let (a, b, c) = (runs[0].frame_ms(), runs[1].frame_ms(), runs[3].frame_ms());
    println!();
    println!(
        "grid of heads: {} bytes ({:.2} MiB, {} bytes per cell); IndexLists node: {} bytes",
        heads.grid_bytes,
        heads.grid_bytes as f64 / MIB,
        heads.grid_bytes / params.cells(),
        heads.node_bytes / params.particles.max(1),
    );
    println!(
        "median time per frame (move + query): (a) {a:.2} ms, (b) {b:.2} ms, (c) {c:.2} ms; \
         ratio a : b : c = 1 : {:.2} : {:.2}",
        b / a,
        c / a
    );
    println!(
        "compact: {:.1} ms for {} particles (included in (c)'s build time)",
        ms(compact_time),
        params.particles
    );
    println!(
        "query counts agree across the grids: {} neighbours found in frame 0",
        runs[0].counts[0]
    );
}
