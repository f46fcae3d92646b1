//! The workloads, written once over [`Container`], and the timing loop.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::containers::{Container, Value};

/// What a cell measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    Insert,
    Reinsert,
    Remove,
    Get,
    GetStale,
    Churn,
    Mixed,
    /// One pass over the live values, in one of the forms users write.
    Pass(Pass),
}

impl Workload {
    /// The workloads that are not passes.
    pub const OPERATIONS: [Workload; 7] = [
        Workload::Insert,
        Workload::Reinsert,
        Workload::Remove,
        Workload::Get,
        Workload::GetStale,
        Workload::Churn,
        Workload::Mixed,
    ];

    /// Every workload: the operations, then every pass.
    pub fn all() -> impl Iterator<Item = Workload> {
        Self::OPERATIONS
            .into_iter()
            .chain(Pass::all().map(Workload::Pass))
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::Reinsert => "reinsert",
            Workload::Remove => "remove",
            Workload::Get => "get",
            Workload::GetStale => "get_stale",
            Workload::Churn => "churn",
            Workload::Mixed => "mixed",
            Workload::Pass(pass) => pass.name(),
        }
    }

    /// What one operation is, for the report.
    pub fn unit(self) -> &'static str {
        match self {
            Workload::Insert | Workload::Reinsert => "ns per insert",
            Workload::Remove => "ns per remove",
            Workload::Get | Workload::GetStale => "ns per lookup",
            Workload::Pass(_) => "ns per live element",
            Workload::Churn => "ns per remove+insert step",
            Workload::Mixed => "ns per operation (80% get, 10% insert, 10% remove)",
        }
    }

    /// Whether a container that cannot remove can run this.
    pub fn needs_remove(self) -> bool {
        match self {
            Workload::Insert | Workload::Get => false,
            Workload::Pass(pass) => pass.fill != Fill::Full,
            _ => true,
        }
    }
}

/// Which of a container's passes a [`Pass`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Walk {
    /// `table.iter()`: `(key, &value)`.
    Iter,
    /// `table.iter_mut()`: `(key, &mut value)`.
    IterMut,
    /// `table.values()`.
    Values,
    /// `table.values_mut()`.
    ValuesMut,
    /// `table.keys()`.
    Keys,
}

/// What a pass does with each item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Body {
    /// `black_box(item)`: the item is made and handed on, nothing more
    /// (stored in a slot that starts a cache line, then `black_box`).
    Opaque,
    /// A running sum of the value's weight and the key's bits (whichever
    /// the item has).
    Sum,
}

/// How the pass is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Form {
    /// `for item in table.iter() { .. }`: `next()` once per item.
    For,
    /// `table.iter().fold(..)`, or `for_each` for the opaque body: the
    /// iterator's own internal loop.
    Fold,
}

/// How many of the table's slots are live when the pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Fill {
    /// Every slot inserted stays live: no holes.
    Full,
    /// Half removed, at random.
    Half,
    /// 95% removed, at random.
    Sparse,
    /// Half removed, at random, from each of [`ROTATING_TABLES`] tables,
    /// which the passes walk one after the other, a table a pass; run at
    /// small sizes only ([`Fill::runs_at`]). A pass over one small table
    /// again and again lets the branch predictor learn its holes (see the
    /// `branch_memory` example); over many tables in turn it cannot, as
    /// with a table walked once a frame among other work.
    Rotating,
}

/// How many tables a [`Fill::Rotating`] pass walks in turn.
pub const ROTATING_TABLES: usize = 64;

/// The largest N a [`Fill::Rotating`] pass runs at: above it, the
/// predictor cannot learn one table's holes either.
pub const ROTATING_MAX_N: usize = 10_000;

impl Fill {
    /// The fills of issue 31's goals.
    pub const ALL: [Fill; 3] = [Fill::Full, Fill::Half, Fill::Sparse];
    /// Every fill the runner plans: [`ALL`](Self::ALL), then
    /// [`Fill::Rotating`] (the order of the pass names).
    pub fn planned() -> impl Iterator<Item = Fill> {
        FILLS.into_iter().map(|(fill, _)| fill)
    }

    /// The fraction of the inserted values removed before the passes.
    pub fn removed(self) -> f64 {
        match self {
            Fill::Full => 0.0,
            Fill::Half | Fill::Rotating => 0.5,
            Fill::Sparse => 0.95,
        }
    }

    /// How many tables a pass of this fill walks, one a pass.
    pub fn tables(self) -> usize {
        match self {
            Fill::Rotating => ROTATING_TABLES,
            _ => 1,
        }
    }

    /// Whether the runner times this fill's passes at size `n`.
    pub fn runs_at(self, n: usize) -> bool {
        self != Fill::Rotating || n <= ROTATING_MAX_N
    }
}

/// One pass workload: a walk, a body, a form, over a table of one fill.
/// Its name is `walk.body.form.fill`, such as `iter.bb.for.half` or
/// `values.sum.fold.full`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Pass {
    pub walk: Walk,
    pub body: Body,
    pub form: Form,
    pub fill: Fill,
}

const WALKS: [(Walk, &str); 5] = [
    (Walk::Iter, "iter"),
    (Walk::IterMut, "iter_mut"),
    (Walk::Values, "values"),
    (Walk::ValuesMut, "values_mut"),
    (Walk::Keys, "keys"),
];
const BODIES: [(Body, &str); 2] = [(Body::Opaque, "bb"), (Body::Sum, "sum")];
const FORMS: [(Form, &str); 2] = [(Form::For, "for"), (Form::Fold, "fold")];
const FILLS: [(Fill, &str); 4] = [
    (Fill::Full, "full"),
    (Fill::Half, "half"),
    (Fill::Sparse, "sparse"),
    (Fill::Rotating, "rotating"),
];

/// Every pass's name, in [`Pass::all`]'s order.
static PASS_NAMES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    Pass::all()
        .map(|pass| {
            fn word(found: Option<&'static str>) -> &'static str {
                found.expect("every part has a name")
            }
            format!(
                "{}.{}.{}.{}",
                word(WALKS.iter().find(|w| w.0 == pass.walk).map(|w| w.1)),
                word(BODIES.iter().find(|b| b.0 == pass.body).map(|b| b.1)),
                word(FORMS.iter().find(|f| f.0 == pass.form).map(|f| f.1)),
                word(FILLS.iter().find(|f| f.0 == pass.fill).map(|f| f.1)),
            )
        })
        .collect()
});

impl Pass {
    /// Every pass: fill, then walk, then body, then form (`for` first).
    pub fn all() -> impl Iterator<Item = Pass> {
        FILLS.into_iter().flat_map(|(fill, _)| {
            WALKS.into_iter().flat_map(move |(walk, _)| {
                BODIES.into_iter().flat_map(move |(body, _)| {
                    FORMS.into_iter().map(move |(form, _)| Pass {
                        walk,
                        body,
                        form,
                        fill,
                    })
                })
            })
        })
    }

    /// The pass's position in [`Pass::all`].
    fn index(self) -> usize {
        let position = |found: Option<usize>| found.expect("every part is listed");
        let fill = position(FILLS.iter().position(|f| f.0 == self.fill));
        let walk = position(WALKS.iter().position(|w| w.0 == self.walk));
        let body = position(BODIES.iter().position(|b| b.0 == self.body));
        let form = position(FORMS.iter().position(|f| f.0 == self.form));
        ((fill * WALKS.len() + walk) * BODIES.len() + body) * FORMS.len() + form
    }

    /// `walk.body.form.fill`.
    pub fn name(self) -> &'static str {
        &PASS_NAMES[self.index()]
    }

    /// The same pass in the other form.
    pub fn with_form(self, form: Form) -> Pass {
        Pass { form, ..self }
    }

    /// Whether the pass runs over 64-byte values too: the full matrix runs
    /// over `u64`; over 64-byte values only `iter` and `values` (both
    /// bodies, both forms, every fill), which keeps a full run within its
    /// time.
    pub fn runs_over_blobs(self) -> bool {
        matches!(self.walk, Walk::Iter | Walk::Values)
    }
}

/// A small, fast, seeded generator (SplitMix64), so runs repeat.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`).
    #[inline]
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// One timed section: how long it took and how many operations it did.
#[derive(Clone, Copy, Default)]
pub(crate) struct Timed {
    pub(crate) elapsed: Duration,
    pub(crate) ops: u64,
}

impl Timed {
    /// Nanoseconds per operation (per pass if no operation was counted).
    fn ns_per_op(self) -> f64 {
        self.elapsed.as_nanos() as f64 / self.ops.max(1) as f64
    }
}

/// Inserts `n` values and returns the container and the keys in order.
pub fn fill<V: Value, C: Container<V>>(n: usize) -> (C, Vec<C::Key>) {
    let mut container = C::new();
    let keys = (0..n as u64)
        .map(|i| container.insert(V::make(i)))
        .collect();
    (container, keys)
}

/// Removes a random `fraction` of `keys` from `container`, and returns the
/// keys that stay live.
pub fn thin_out<V: Value, C: Container<V>>(
    container: &mut C,
    mut keys: Vec<C::Key>,
    fraction: f64,
    rng: &mut Rng,
) -> Vec<C::Key> {
    rng.shuffle(&mut keys);
    let remove = (keys.len() as f64 * fraction) as usize;
    for key in keys.drain(..remove) {
        container.remove(key);
    }
    keys
}

/// `reinsert`'s setup: `n` values inserted, then all removed in random
/// order, so that every insertion reuses a freed slot.
pub fn emptied<V: Value, C: Container<V>>(n: usize, rng: &mut Rng) -> C {
    let (mut container, mut keys) = fill::<V, C>(n);
    rng.shuffle(&mut keys);
    for key in keys {
        container.remove(key);
    }
    container
}

/// `get`'s lookups: as many as `keys`, each of one picked at random.
pub fn random_lookups<K: Copy>(keys: &[K], rng: &mut Rng) -> Vec<K> {
    let n = keys.len();
    (0..n).map(|_| keys[rng.below(n)]).collect()
}

/// `get_stale`'s setup: `n` values inserted, all removed in random order,
/// and `n` new ones inserted into the freed slots; the container and the
/// old keys, every one stale, shuffled again.
pub fn refilled<V: Value, C: Container<V>>(n: usize, rng: &mut Rng) -> (C, Vec<C::Key>) {
    let (mut container, mut stale) = fill::<V, C>(n);
    rng.shuffle(&mut stale);
    for &key in &stale {
        container.remove(key);
    }
    for i in 0..n as u64 {
        container.insert(V::make(i));
    }
    rng.shuffle(&mut stale);
    (container, stale)
}

pub(crate) fn time(ops: usize, section: impl FnOnce()) -> Timed {
    let start = Instant::now();
    section();
    Timed {
        elapsed: start.elapsed(),
        ops: ops as u64,
    }
}

/// The shortest stretch [`time_passes`] times with one pair of clock
/// reads. Reading the clock costs tens of nanoseconds, which is a third of
/// a sparse pass over 1000 slots (50 live values): timed one by one, such
/// passes measured the clock as much as the container, and every
/// container's cell moved towards the same constant.
const MIN_TIMED: Duration = Duration::from_micros(5);

/// Times a section that leaves the container unchanged (a lookup or
/// iteration pass), repeating it on the same setup until the budget's time
/// is reached. Rebuilding the container for every pass would make setup,
/// not measurement, the cost of a cell: a sparse iteration pass over 1M
/// slots takes well under a millisecond, its setup hundreds.
///
/// Passes shorter than [`MIN_TIMED`] are timed in groups, doubling the
/// group until one takes that long. When three or more groups took at
/// least that long, the time reported is the median group's time per pass
/// (times the passes): on a shared machine a sample now and then loses the
/// core for milliseconds, and one such group would otherwise move the
/// whole sample (and with it the spread of a goal cell) many times over.
pub(crate) fn time_passes(ops: usize, budget: Budget, mut section: impl FnMut()) -> Timed {
    let mut total = Timed::default();
    let mut passes = 0;
    let mut group = 1u32;
    // ns per pass of each group that took at least MIN_TIMED.
    let mut rates: Vec<f64> = Vec::new();
    while passes < budget.max_rounds && (passes == 0 || total.elapsed < budget.min_time) {
        let this_group = group.min(budget.max_rounds - passes);
        let start = Instant::now();
        for _ in 0..this_group {
            section();
        }
        let elapsed = start.elapsed();
        total.elapsed += elapsed;
        total.ops += ops as u64 * u64::from(this_group);
        passes += this_group;
        if elapsed < MIN_TIMED {
            group = group.saturating_mul(2);
        } else {
            rates.push(elapsed.as_nanos() as f64 / f64::from(this_group));
        }
    }
    if rates.len() >= 3 {
        rates.sort_by(f64::total_cmp);
        let per_pass = crate::median(&rates);
        total.elapsed = Duration::from_nanos((per_pass * f64::from(passes)).round() as u64);
    }
    total
}

/// Runs the measured section of `workload` once, with its own setup.
/// Sections that leave the container unchanged repeat within the setup
/// until `budget` is reached (see [`time_passes`]).
fn run_once<V: Value, C: Container<V>, const P: usize>(
    workload: Workload,
    n: usize,
    rng: &mut Rng,
    budget: Budget,
) -> Timed {
    match workload {
        Workload::Insert => {
            let mut container = C::new();
            let timed = time(n, || {
                place_code::<P>();
                for i in 0..n as u64 {
                    black_box(container.insert(V::make(i)));
                }
            });
            drop(black_box(container));
            timed
        }
        Workload::Reinsert => {
            let mut container = emptied::<V, C>(n, rng);
            time(n, || {
                place_code::<P>();
                for i in 0..n as u64 {
                    black_box(container.insert(V::make(i)));
                }
            })
        }
        Workload::Remove => {
            let (mut container, mut keys) = fill::<V, C>(n);
            rng.shuffle(&mut keys);
            time(n, || {
                place_code::<P>();
                for &key in &keys {
                    black_box(container.remove(key));
                }
            })
        }
        Workload::Get | Workload::GetStale => {
            BuiltLookups::<V, C, P>::new(workload == Workload::GetStale, n, rng).time(budget)
        }
        Workload::Pass(pass) => {
            let mut built = Built::<V, C, P>::new(pass.fill, n, rng);
            built.time(pass, budget)
        }
        Workload::Churn => {
            let (mut container, mut keys) = fill::<V, C>(n);
            let picks: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
            time(n, || {
                place_code::<P>();
                for (step, &pick) in picks.iter().enumerate() {
                    let key = keys[pick];
                    black_box(container.remove(key));
                    keys[pick] = container.insert(V::make(step as u64));
                }
            })
        }
        Workload::Mixed => {
            let (mut container, mut keys) = fill::<V, C>(n);
            let script: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            time(n, || {
                place_code::<P>();
                let mut sum = 0u64;
                for &roll in &script {
                    let pick = ((u128::from(roll >> 8) * keys.len() as u128) >> 56) as usize;
                    match roll % 10 {
                        0 => keys.push(container.insert(V::make(roll))),
                        1 if !keys.is_empty() => {
                            let key = keys.swap_remove(pick);
                            black_box(container.remove(key));
                        }
                        _ if !keys.is_empty() => {
                            let key = keys[pick];
                            sum = sum.wrapping_add(container.get(key).map_or(0, Value::weight));
                        }
                        _ => {}
                    }
                }
                black_box(sum);
            })
        }
    }
}

/// Which of the [`PLACEMENTS`] places of its 64-byte line of code a
/// measured loop is put at: the runner measures repeat `r` at placement
/// `r % PLACEMENTS` (see [`place_code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement(usize);

/// How many placements the runner samples: LLVM starts a loop on a
/// 16-byte boundary, so a loop can start at four places in a 64-byte line
/// of code.
pub const PLACEMENTS: usize = 4;

impl Placement {
    /// The placement of repeat `repeat`.
    pub fn of_repeat(repeat: usize) -> Self {
        Placement(repeat % PLACEMENTS)
    }
}

/// Puts the code that follows at byte `16 × P` of a 64-byte line of code:
/// each measured loop of the core containers' rows (operations, lookups,
/// passes) calls it just before its loop, and the runner compiles every
/// such loop four times (`P` = 0 to 3). The ECS rows do not: their
/// sections are closures each contender builds, which would each need
/// the placement as a type parameter.
///
/// Why: on this machine's core a short loop that straddles a 64-byte
/// line of code takes about twice as long an item as the same loop inside
/// one line (a `for` loop over a `Vec` took 0.34 ns an item inside a line
/// and 0.65 across one; the loop of `IdTable`'s `(key, &value)` items
/// 0.49 and 0.65). Where a loop starts is up to the linker, so in a
/// build without this each container's loop sat at one place, the same in
/// every repeat, and that one draw decided cells by up to 3x (`IdTable`
/// `insert`: 5.1 ns against 1.7 with every loop aligned). A user's build
/// draws a place for each of their loops just the same, so neither draw
/// is the figure they see. Here repeat `r` measures every container's
/// loop at place `r % 4`: the median over the repeats is a typical place,
/// and the spread of a cell shows how much the place moves it. And as
/// each measured loop now starts at the same place in every build that
/// leaves its code unchanged, a change elsewhere no longer moves it
/// (what it calls out of line still moves).
///
/// The padding is jumped over: it costs one jump a timed section (or a
/// pass), nothing in the loop.
#[inline(always)]
pub fn place_code<const P: usize>() {
    // A jump over padding (to the next 64-byte boundary of the code, then
    // 16 × P bytes of it), with no operand.
    #[cfg(target_arch = "x86_64")]
    // SAFETY: so it touches no register, memory, stack or flag.
    unsafe {
        core::arch::asm!(
            "jmp 2f",
            ".p2align 6, 0xcc",
            ".skip {pad}, 0xcc",
            "2:",
            pad = const 16 * P,
            options(nomem, nostack, preserves_flags)
        );
    }
}

/// Where an opaque body puts each item: a slot that starts a cache line,
/// so that storing an item never splits across two lines.
/// `black_box(item)` would store it in a stack slot aligned only to the
/// item's own alignment, and whether that slot straddles a line depends
/// on where the process's stack begins (the size of its environment,
/// address randomization). Measured with randomization off: PackedTable's
/// `iter.bb.for.full` at 100k took 0.55 ns an item at one stack offset in
/// four (every 64 bytes) and 0.28 at the others; with it on, one process
/// in eight took the slow speed, peers' loops alike.
#[repr(align(64))]
pub struct Sink<T>(Option<T>);

impl<T> Default for Sink<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Sink<T> {
    /// An empty sink.
    #[inline(always)]
    pub fn new() -> Self {
        Sink(None)
    }

    /// Stores `item` where the optimizer must assume it is read: the
    /// sink's address goes to an empty `asm!` block in a register, which
    /// may read memory. (`black_box(&mut sink)` would also store that
    /// address on the stack for every item: a third store.)
    #[inline(always)]
    pub fn take(&mut self, item: T) {
        self.0 = Some(item);
        // The block is empty; only the optimizer must assume it reads the
        // sink.
        let at: *mut Self = self;
        // SAFETY: an empty block touches no memory, stack or flags.
        unsafe { core::arch::asm!("/* {0} */", in(reg) at, options(nostack, preserves_flags)) };
    }
}

/// A `for` loop whose body hands each item to `black_box` (through a
/// [`Sink`]). Each loop function makes its iterator itself (`items` is the
/// call that makes it, inlined), as a user's function does with `for v in
/// table.values()`: an iterator handed in by value is read from memory,
/// and what the optimizer knows of it then differs (a `NonNull` field
/// read from memory is known not to be null, one made in the function may
/// not be). With the iterator handed in, the runner missed a null test of
/// every item that a user's loop over a `Hive` paid (2x `IdTable`'s time).
#[inline(never)]
fn for_opaque<I: Iterator, const P: usize>(items: impl FnOnce() -> I) -> u64 {
    place_code::<P>();
    let mut sink = Sink(None);
    for item in items() {
        sink.take(item);
    }
    0
}

/// `for_each` with the same body.
#[inline(never)]
pub fn each_opaque<I: Iterator, const P: usize>(items: impl FnOnce() -> I) -> u64 {
    place_code::<P>();
    let mut sink = Sink(None);
    items().for_each(|item| sink.take(item));
    0
}

/// A `for` loop adding up `weight` of each item.
#[inline(never)]
pub fn for_sum<I: Iterator, const P: usize>(
    items: impl FnOnce() -> I,
    weight: impl Fn(&I::Item) -> u64,
) -> u64 {
    place_code::<P>();
    let mut sum = 0u64;
    for item in items() {
        sum = sum.wrapping_add(weight(&item));
    }
    sum
}

/// `fold` with the same body.
#[inline(never)]
fn fold_sum<I: Iterator, const P: usize>(
    items: impl FnOnce() -> I,
    weight: impl Fn(&I::Item) -> u64,
) -> u64 {
    place_code::<P>();
    items().fold(0u64, |sum, item| sum.wrapping_add(weight(&item)))
}

/// One pass of `body` in `form` over the iterator `items` makes. Each of
/// the four loops is a function of its own (per iterator type), so each
/// pass is compiled as it would be in a user's function, whatever else the
/// runner holds.
#[inline(always)]
fn pass_over<I: Iterator, const P: usize>(
    items: impl FnOnce() -> I,
    body: Body,
    form: Form,
    weight: impl Fn(&I::Item) -> u64,
) -> u64 {
    match (body, form) {
        (Body::Opaque, Form::For) => for_opaque::<I, P>(items),
        (Body::Opaque, Form::Fold) => each_opaque::<I, P>(items),
        (Body::Sum, Form::For) => for_sum::<I, P>(items, weight),
        (Body::Sum, Form::Fold) => fold_sum::<I, P>(items, weight),
    }
}

/// One pass over `container`: `pass`'s walk, body and form.
pub fn run_pass<V: Value, C: Container<V>, const P: usize>(container: &mut C, pass: Pass) -> u64 {
    let (body, form) = (pass.body, pass.form);
    match pass.walk {
        Walk::Iter => pass_over::<_, P>(
            || container.iter(),
            body,
            form,
            |(k, v)| v.weight().wrapping_add(C::key_bits(*k)),
        ),
        Walk::IterMut => pass_over::<_, P>(
            || container.iter_mut(),
            body,
            form,
            |(k, v)| v.weight().wrapping_add(C::key_bits(*k)),
        ),
        Walk::Values => pass_over::<_, P>(|| container.values(), body, form, |v| v.weight()),
        Walk::ValuesMut => pass_over::<_, P>(|| container.values_mut(), body, form, |v| v.weight()),
        Walk::Keys => pass_over::<_, P>(|| container.keys(), body, form, |k| C::key_bits(*k)),
    }
}

/// A table built for the passes of one fill, which times any of them.
/// The runner builds every container of a cell once per repeat and times
/// all the passes of that fill on it, the containers interleaved: building
/// a table of a million values costs more than all its passes.
pub trait Passes {
    /// One `pass` (of this table's fill) to warm the caches, not counted
    /// in any sample; returns how long it took.
    fn warm(&mut self, pass: Pass) -> Duration;
    /// The time of `pass`, in ns per live element: passes until `budget`,
    /// with no warming pass first (see [`warm`](Self::warm)).
    fn slice(&mut self, pass: Pass, budget: Budget) -> f64;
}

/// Containers filled with `n` values each, then thinned to their fill:
/// one, or [`Fill::tables`] for a fill whose passes walk several in turn.
struct Built<V: Value, C: Container<V>, const P: usize> {
    /// Not empty.
    containers: Vec<C>,
    fill: Fill,
    /// Live values a pass visits: over several tables, their mean, rounded.
    live: usize,
    /// The table the next pass walks: below `containers.len()`.
    next: usize,
    _values: std::marker::PhantomData<V>,
}

impl<V: Value, C: Container<V>, const P: usize> Built<V, C, P> {
    fn new(shape: Fill, n: usize, rng: &mut Rng) -> Self {
        let mut live = 0;
        let containers: Vec<C> = (0..shape.tables())
            .map(|_| {
                let (mut container, keys) = fill::<V, C>(n);
                live += if shape == Fill::Full {
                    n
                } else {
                    thin_out(&mut container, keys, shape.removed(), rng).len()
                };
                container
            })
            .collect();
        Built {
            live: live.div_ceil(containers.len()),
            containers,
            fill: shape,
            next: 0,
            _values: std::marker::PhantomData,
        }
    }

    /// One pass over the next table.
    fn pass(&mut self, pass: Pass) -> u64 {
        let at = self.next;
        self.next = if at + 1 == self.containers.len() {
            0
        } else {
            at + 1
        };
        run_pass::<V, C, P>(&mut self.containers[at], pass)
    }

    fn time(&mut self, pass: Pass, budget: Budget) -> Timed {
        assert_eq!(pass.fill, self.fill, "a pass over a table of another fill");
        let live = self.live.max(1);
        // One table: the loop of passes holds it, as it did before there
        // were several, so that picking the next table costs the fills of
        // one table nothing.
        if let [container] = self.containers.as_mut_slice() {
            return time_passes(live, budget, || {
                black_box(run_pass::<V, C, P>(container, pass));
            });
        }
        time_passes(live, budget, || {
            black_box(self.pass(pass));
        })
    }
}

impl<V: Value, C: Container<V>, const P: usize> Passes for Built<V, C, P> {
    /// A pass over every table (so all are in the same state of the
    /// caches as the timed passes find them); returns the time of one.
    fn warm(&mut self, pass: Pass) -> Duration {
        let count = self.containers.len();
        let all = time(1, || {
            for _ in 0..count {
                black_box(self.pass(pass));
            }
        })
        .elapsed;
        all / count as u32
    }

    fn slice(&mut self, pass: Pass, budget: Budget) -> f64 {
        self.time(pass, budget).ns_per_op()
    }
}

/// A lookup workload (`get`, `get_stale`) set up once and timed in
/// slices, the containers of a row taking turns (see the runner's
/// `lookup_samples`).
pub trait Lookups {
    /// One round of the lookups to warm the caches, not counted in any
    /// sample; returns how long it took.
    fn warm(&mut self) -> Duration;
    /// The time of rounds of the lookups until `budget`, in ns a lookup.
    fn slice(&mut self, budget: Budget) -> f64;
}

/// A container and the keys a lookup workload looks up: `n` random live
/// keys (`get`), or the `n` stale keys of a refilled container
/// (`get_stale`, see [`refilled`]).
struct BuiltLookups<V: Value, C: Container<V>, const P: usize> {
    container: C,
    keys: Vec<C::Key>,
    stale: bool,
    _values: std::marker::PhantomData<V>,
}

impl<V: Value, C: Container<V>, const P: usize> BuiltLookups<V, C, P> {
    fn new(stale: bool, n: usize, rng: &mut Rng) -> Self {
        let (container, keys) = if stale {
            refilled::<V, C>(n, rng)
        } else {
            let (container, keys) = fill::<V, C>(n);
            let lookups = random_lookups(&keys, rng);
            (container, lookups)
        };
        BuiltLookups {
            container,
            keys,
            stale,
            _values: std::marker::PhantomData,
        }
    }

    /// One round of the lookups: the sum of the values found (`get`), or
    /// how many stale keys were found (`get_stale`; none may be).
    #[inline(always)]
    fn round(&self) -> u64 {
        place_code::<P>();
        if self.stale {
            let mut found = 0usize;
            for &key in &self.keys {
                found += usize::from(self.container.get(key).is_some());
            }
            assert!(
                found == 0 || C::FAMILY == crate::containers::Family::Plain,
                "{} resolved {found} stale keys",
                C::NAME
            );
            found as u64
        } else {
            let mut sum = 0u64;
            for &key in &self.keys {
                sum = sum.wrapping_add(self.container.get(key).map_or(0, Value::weight));
            }
            sum
        }
    }

    fn time(&self, budget: Budget) -> Timed {
        time_passes(self.keys.len(), budget, || {
            black_box(self.round());
        })
    }
}

impl<V: Value, C: Container<V>, const P: usize> Lookups for BuiltLookups<V, C, P> {
    fn warm(&mut self) -> Duration {
        time(1, || {
            black_box(self.round());
        })
        .elapsed
    }

    fn slice(&mut self, budget: Budget) -> f64 {
        self.time(budget).ns_per_op()
    }
}

/// Container `C` set up for `workload` if it is a lookup workload (`get`
/// or `get_stale`, the keys drawn from `seed`), ready for
/// [`Lookups::slice`]; `None` for any other workload.
pub fn build_lookups<V: Value, C: Container<V> + 'static>(
    workload: Workload,
    n: usize,
    seed: u64,
    placement: Placement,
) -> Option<Box<dyn Lookups>> {
    let stale = match workload {
        Workload::Get => false,
        Workload::GetStale => true,
        _ => return None,
    };
    let rng = &mut Rng::new(seed);
    Some(match placement.0 {
        0 => Box::new(BuiltLookups::<V, C, 0>::new(stale, n, rng)),
        1 => Box::new(BuiltLookups::<V, C, 1>::new(stale, n, rng)),
        2 => Box::new(BuiltLookups::<V, C, 2>::new(stale, n, rng)),
        _ => Box::new(BuiltLookups::<V, C, 3>::new(stale, n, rng)),
    })
}

/// Container `C` with `n` values, thinned to `fill` (the removals drawn
/// from `seed`), ready for [`Passes::slice`].
pub fn build_passes<V: Value, C: Container<V> + 'static>(
    fill: Fill,
    n: usize,
    seed: u64,
    placement: Placement,
) -> Box<dyn Passes> {
    let rng = &mut Rng::new(seed);
    match placement.0 {
        0 => Box::new(Built::<V, C, 0>::new(fill, n, rng)),
        1 => Box::new(Built::<V, C, 1>::new(fill, n, rng)),
        2 => Box::new(Built::<V, C, 2>::new(fill, n, rng)),
        _ => Box::new(Built::<V, C, 3>::new(fill, n, rng)),
    }
}

/// One timed run of `workload` on container `C`, with its own setup:
/// the time of the measured section and the operations it did.
pub fn timed_run<V: Value, C: Container<V>>(
    workload: Workload,
    n: usize,
    rng: &mut Rng,
) -> (Duration, u64) {
    let one_pass = Budget {
        min_time: Duration::ZERO,
        max_rounds: 1,
    };
    let timed = run_once::<V, C, 0>(workload, n, rng, one_pass);
    (timed.elapsed, timed.ops)
}

/// How long to keep repeating a small workload within one sample.
#[derive(Clone, Copy)]
pub struct Budget {
    /// Repeat the workload until its timed sections add up to this.
    pub min_time: Duration,
    /// But never more than this many times.
    pub max_rounds: u32,
}

/// One sample of `workload` on container `C`: nanoseconds per operation.
/// Small sizes repeat the workload (each time with fresh setup) until the
/// timed sections reach the budget.
pub fn sample<V: Value, C: Container<V>>(
    workload: Workload,
    n: usize,
    seed: u64,
    budget: Budget,
    placement: Placement,
) -> f64 {
    budget.sample(seed, |rng| match placement.0 {
        0 => run_once::<V, C, 0>(workload, n, rng, budget),
        1 => run_once::<V, C, 1>(workload, n, rng, budget),
        2 => run_once::<V, C, 2>(workload, n, rng, budget),
        _ => run_once::<V, C, 3>(workload, n, rng, budget),
    })
}

impl Budget {
    /// One sample: nanoseconds per operation over rounds of `run` (each
    /// with its own setup, all from one generator seeded with `seed`),
    /// repeated until their timed sections reach the budget.
    pub(crate) fn sample(self, seed: u64, mut run: impl FnMut(&mut Rng) -> Timed) -> f64 {
        let mut rng = Rng::new(seed);
        let mut total = Timed::default();
        let mut rounds = 0;
        while rounds < self.max_rounds && (rounds == 0 || total.elapsed < self.min_time) {
            let timed = run(&mut rng);
            total.elapsed += timed.elapsed;
            total.ops += timed.ops;
            rounds += 1;
        }
        total.ns_per_op()
    }
}

/// Bytes the container holds per live value after `n` insertions.
pub fn bytes_per_value<V: Value, C: Container<V>>(n: usize) -> f64 {
    let before = crate::alloc::live_bytes();
    let mut container = C::new();
    for i in 0..n as u64 {
        container.insert(V::make(i));
    }
    let after = crate::alloc::live_bytes();
    assert_eq!(container.len(), n);
    drop(black_box(container));
    after.saturating_sub(before) as f64 / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rotating_fill_walks_each_half_full_table_in_turn() {
        let n = 100;
        let mut built =
            Built::<u64, handlekit::IdTable<u64>, 0>::new(Fill::Rotating, n, &mut Rng::new(3));
        assert_eq!(built.containers.len(), ROTATING_TABLES);
        for table in &built.containers {
            assert_eq!(table.len(), n / 2);
        }
        assert_eq!(built.live, n / 2);
        // Each table holds other holes, so the sums of its live values
        // tell the tables apart; two rounds visit them in the same order.
        let pass = Pass {
            walk: Walk::Values,
            body: Body::Sum,
            form: Form::Fold,
            fill: Fill::Rotating,
        };
        let round: Vec<u64> = (0..ROTATING_TABLES).map(|_| built.pass(pass)).collect();
        let expected: Vec<u64> = built
            .containers
            .iter()
            .map(|table| table.values().copied().sum())
            .collect();
        assert_eq!(round, expected);
        let again: Vec<u64> = (0..ROTATING_TABLES).map(|_| built.pass(pass)).collect();
        assert_eq!(again, round);
        let distinct: std::collections::HashSet<u64> = round.iter().copied().collect();
        assert!(
            distinct.len() > ROTATING_TABLES / 2,
            "the tables have other holes"
        );
    }

    #[test]
    fn only_small_sizes_plan_the_rotating_fill() {
        assert!(Fill::Rotating.runs_at(1000));
        assert!(Fill::Rotating.runs_at(ROTATING_MAX_N));
        assert!(!Fill::Rotating.runs_at(ROTATING_MAX_N + 1));
        assert!(Fill::Half.runs_at(1_000_000));
        assert_eq!(Fill::Rotating.tables(), ROTATING_TABLES);
        assert_eq!(Fill::Half.tables(), 1);
    }

    #[test]
    fn time_passes_groups_short_passes_and_counts_every_one() {
        let budget = Budget {
            min_time: Duration::from_secs(3600),
            max_rounds: 1000,
        };
        let mut runs = 0u32;
        let timed = time_passes(7, budget, || runs += 1);
        // A pass that takes nanoseconds is grouped, but the rounds cap is
        // still exact and every pass is counted.
        assert_eq!(runs, 1000);
        assert_eq!(timed.ops, 7 * 1000);
    }

    #[test]
    fn time_passes_reports_the_median_group_so_one_stall_does_not_count() {
        let budget = Budget {
            min_time: Duration::from_secs(3600),
            max_rounds: 9,
        };
        let mut pass = 0;
        let timed = time_passes(1, budget, || {
            pass += 1;
            // Every pass takes 50 us but one, which stalls for 5 ms.
            let wait = if pass == 4 {
                Duration::from_millis(5)
            } else {
                Duration::from_micros(50)
            };
            let start = Instant::now();
            while start.elapsed() < wait {}
        });
        assert_eq!(timed.ops, 9);
        // The mean would be over 600 us a pass; the median pass is 50 us
        // and a little.
        let per_pass = timed.elapsed / 9;
        assert!(per_pass >= Duration::from_micros(50), "{per_pass:?}");
        assert!(per_pass < Duration::from_micros(500), "{per_pass:?}");
    }

    #[test]
    fn time_passes_stops_at_the_time_budget() {
        let budget = Budget {
            min_time: Duration::from_micros(200),
            max_rounds: u32::MAX,
        };
        let mut runs = 0u64;
        let timed = time_passes(1, budget, || {
            let start = Instant::now();
            while start.elapsed() < Duration::from_micros(50) {}
            runs += 1;
        });
        // Passes of at least 50 us are never grouped (they exceed
        // MIN_TIMED), so the loop stops at the first pass that reaches the
        // budget: after at most four.
        assert!(timed.elapsed >= budget.min_time);
        assert_eq!(timed.ops, runs);
        assert!((1..=4).contains(&runs), "{runs} passes");
    }
}
