//! The particle grid of seed 001, written once for the example
//! (`examples/particle_grid.rs`) and the criterion bench (`benches/grid.rs`).
//!
//! Particles move in a square world of `side × side` unit cells. Every
//! frame each particle moves by its velocity (bouncing off the walls), the
//! grid is brought up to date, and a neighbour query counts the particles
//! within `radius` of a sample of points by looking at the 3×3 cells around
//! each point. Two grids implement it:
//!
//! - [`ListGrid`]: the particles live in an [`IndexLists`] pool (the nodes),
//!   one [`Head`] per cell; a particle that changes cells is relinked;
//! - [`VecGrid`]: the strawman the seed warns about, particles in a `Vec`
//!   and one `Vec<u32>` of particle indices per cell, with remove-and-push
//!   on every cell change.
//!
//! Both see exactly the same particles, moves and query points, so their
//! query counts must agree (the example checks it).

use std::mem::size_of;

use handlekit::{Head, Id, IndexLists};

use crate::workloads::Rng;

/// One particle: 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub vx: f32,
    pub vy: f32,
}

/// The size of the world and of the work per frame.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Cells per side; the world is `side × side` units.
    pub side: usize,
    pub particles: usize,
    /// Query points per frame.
    pub queries: usize,
    /// Query radius, at most one cell.
    pub radius: f32,
    /// Largest speed per axis, in cells per frame.
    pub max_speed: f32,
    pub seed: u64,
}

impl Params {
    /// The seed's grid: 1000 × 1000 cells, a million particles.
    pub const SEED_001: Params = Params {
        side: 1000,
        particles: 1_000_000,
        queries: 100_000,
        radius: 1.0,
        max_speed: 0.1,
        seed: 0x5EED_0001,
    };

    pub fn cells(&self) -> usize {
        self.side * self.side
    }
}

/// `count` particles spread uniformly, with random velocities.
pub fn spawn(params: &Params) -> Vec<Particle> {
    let mut rng = Rng::new(params.seed);
    let side = params.side as f32;
    let mut unit = move || (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
    (0..params.particles)
        .map(|_| Particle {
            x: unit() * side,
            y: unit() * side,
            vx: (unit() * 2.0 - 1.0) * params.max_speed,
            vy: (unit() * 2.0 - 1.0) * params.max_speed,
        })
        .collect()
}

/// The cell that holds a position.
#[inline]
pub fn cell_of(x: f32, y: f32, side: usize) -> usize {
    let cx = (x as usize).min(side - 1);
    let cy = (y as usize).min(side - 1);
    cy * side + cx
}

/// Moves a particle one frame, bouncing off the walls of `[0, side)`.
#[inline]
pub fn advance(p: &mut Particle, side: f32) {
    p.x += p.vx;
    p.y += p.vy;
    if p.x < 0.0 || p.x >= side {
        p.vx = -p.vx;
        p.x = p.x.clamp(0.0, side - 0.001);
    }
    if p.y < 0.0 || p.y >= side {
        p.vy = -p.vy;
        p.y = p.y.clamp(0.0, side - 0.001);
    }
}

/// The query points of one frame (the same for every grid).
pub fn query_points(params: &Params, frame: u64) -> Vec<(f32, f32)> {
    let mut rng = Rng::new(params.seed ^ frame.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let side = params.side as f32;
    (0..params.queries)
        .map(|_| {
            let x = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * side;
            let y = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * side;
            (x, y)
        })
        .collect()
}

/// The cells of the 3×3 block around a point (fewer at the border).
#[inline]
fn neighbourhood(x: f32, y: f32, side: usize) -> impl Iterator<Item = usize> {
    let cx = (x as usize).min(side - 1);
    let cy = (y as usize).min(side - 1);
    let xs = cx.saturating_sub(1)..=(cx + 1).min(side - 1);
    let ys = cy.saturating_sub(1)..=(cy + 1).min(side - 1);
    ys.flat_map(move |y| xs.clone().map(move |x| y * side + x))
}

#[inline]
fn near(p: &Particle, x: f32, y: f32, r2: f32) -> bool {
    let (dx, dy) = (p.x - x, p.y - y);
    dx * dx + dy * dy <= r2
}

/// A uniform grid over moving particles.
pub trait Grid {
    const NAME: &'static str;
    fn build(particles: Vec<Particle>, side: usize) -> Self;
    /// Moves every particle one frame and brings the grid up to date.
    fn advance(&mut self);
    /// Counts the particles within `radius` of each point (summed).
    fn query(&self, points: &[(f32, f32)], radius: f32) -> u64;
    /// Bytes of the grid itself: the cells.
    fn grid_bytes(&self) -> usize;
    /// Bytes of the particle storage (nodes).
    fn node_bytes(&self) -> usize;
}

/// The grid as lists of one [`IndexLists`] pool: one 4-byte head per cell.
pub struct ListGrid {
    pub pool: IndexLists<Particle>,
    pub cells: Vec<Head>,
    side: usize,
    /// The particles that changed cells this frame: (key, from, to).
    moves: Vec<(Id, u32, u32)>,
    /// Relink by walking every cell with `redistribute` instead of
    /// relinking just the particles that moved.
    pub walk_cells: bool,
}

impl ListGrid {
    /// Makes every cell's particles contiguous, cells in order.
    pub fn compact(&mut self) {
        self.pool.compact(&mut self.cells);
    }
}

impl Grid for ListGrid {
    const NAME: &'static str = "IndexLists";

    fn build(particles: Vec<Particle>, side: usize) -> Self {
        let mut pool = IndexLists::with_capacity(particles.len());
        let mut cells = vec![Head::EMPTY; side * side];
        for p in particles {
            pool.push_front(&mut cells[cell_of(p.x, p.y, side)], p);
        }
        ListGrid {
            pool,
            cells,
            side,
            moves: Vec::new(),
            walk_cells: false,
        }
    }

    fn advance(&mut self) {
        let side = self.side;
        if self.walk_cells {
            // Move in storage order (a sweep of the node array), then walk
            // each cell and relink the particles that left it.
            for (_, p) in self.pool.nodes_mut() {
                advance(p, side as f32);
            }
            for cell in 0..self.cells.len() {
                self.pool
                    .redistribute(&mut self.cells, cell, |p| cell_of(p.x, p.y, side));
            }
            return;
        }
        // Move in storage order, noting the particles that change cells...
        self.moves.clear();
        for (key, p) in self.pool.nodes_mut() {
            let from = cell_of(p.x, p.y, side);
            advance(p, side as f32);
            let to = cell_of(p.x, p.y, side);
            if from != to {
                self.moves.push((key, from as u32, to as u32));
            }
        }
        // ...then relink just those: a few integers each.
        for &(key, from, to) in &self.moves {
            let [from, to] = self
                .cells
                .get_disjoint_mut([from as usize, to as usize])
                .expect("two cells");
            self.pool
                .move_node(from, key, to)
                .expect("a particle is in the cell of its old position");
        }
    }

    fn query(&self, points: &[(f32, f32)], radius: f32) -> u64 {
        let r2 = radius * radius;
        let mut count = 0u64;
        for &(x, y) in points {
            for cell in neighbourhood(x, y, self.side) {
                for p in self.pool.iter(self.cells[cell]) {
                    count += u64::from(near(p, x, y, r2));
                }
            }
        }
        count
    }

    fn grid_bytes(&self) -> usize {
        self.cells.capacity() * size_of::<Head>()
    }

    fn node_bytes(&self) -> usize {
        // One slot per node: state word + particle + link (see the
        // `IndexLists` docs), plus one occupancy bit.
        self.pool.capacity() * (4 + size_of::<Particle>() + 4) + self.pool.capacity().div_ceil(8)
    }
}

/// The strawman: particles in a `Vec`, a `Vec<u32>` of indices per cell.
pub struct VecGrid {
    pub particles: Vec<Particle>,
    pub cells: Vec<Vec<u32>>,
    side: usize,
}

impl Grid for VecGrid {
    const NAME: &'static str = "Vec<u32> per cell";

    fn build(particles: Vec<Particle>, side: usize) -> Self {
        let mut cells = vec![Vec::new(); side * side];
        for (i, p) in particles.iter().enumerate() {
            cells[cell_of(p.x, p.y, side)].push(i as u32);
        }
        VecGrid {
            particles,
            cells,
            side,
        }
    }

    fn advance(&mut self) {
        let side = self.side;
        for (i, p) in self.particles.iter_mut().enumerate() {
            let from = cell_of(p.x, p.y, side);
            advance(p, side as f32);
            let to = cell_of(p.x, p.y, side);
            if from != to {
                let cell = &mut self.cells[from];
                let at = cell
                    .iter()
                    .position(|&j| j == i as u32)
                    .expect("a particle is in the cell of its position");
                cell.swap_remove(at);
                self.cells[to].push(i as u32);
            }
        }
    }

    fn query(&self, points: &[(f32, f32)], radius: f32) -> u64 {
        let r2 = radius * radius;
        let mut count = 0u64;
        for &(x, y) in points {
            for cell in neighbourhood(x, y, self.side) {
                for &i in &self.cells[cell] {
                    count += u64::from(near(&self.particles[i as usize], x, y, r2));
                }
            }
        }
        count
    }

    fn grid_bytes(&self) -> usize {
        // Every cell's `Vec` header, plus the index buffers it owns (not
        // counting the allocator's own overhead per buffer).
        self.cells.capacity() * size_of::<Vec<u32>>()
            + self
                .cells
                .iter()
                .map(|cell| cell.capacity() * size_of::<u32>())
                .sum::<usize>()
    }

    fn node_bytes(&self) -> usize {
        self.particles.capacity() * size_of::<Particle>()
    }
}

/// One frame: advance, then query `points`. Returns the query count.
pub fn frame<G: Grid>(grid: &mut G, points: &[(f32, f32)], radius: f32) -> u64 {
    grid.advance();
    grid.query(points, radius)
}
