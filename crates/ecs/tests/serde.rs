//! Serde (feature `serde`): `Entity` as its bits, and whole-world saving and
//! loading through `serialize::Registry`: what a round trip keeps (ids,
//! generations, which settle the next spawns, components, storage, row
//! order), and the hostile inputs a load refuses, with bounded allocation.
#![cfg(feature = "serde")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use handlekit_ecs::serialize::{Components, Registry};
use handlekit_ecs::{Entity, Order, Storage, World};
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};

/// Counts the bytes each thread has allocated, for the bounded-allocation
/// checks (tests run on several threads; each measures its own).
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counters are plain
// thread-locals without destructors, so touching them never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|live| {
            live.set(live.get() + layout.size());
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
        });
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(layout.size())));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes this thread had allocated at once while `f` ran, above
/// what it held before.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let result = f();
    (result, PEAK.with(Cell::get) - base)
}

#[test]
fn entity_round_trips_as_bits() {
    let mut world = World::new();
    let e = world.spawn((1u8,));
    let json = serde_json::to_string(&e).unwrap();
    assert_eq!(json, e.to_bits().to_string());
    assert_eq!(serde_json::from_str::<Entity>(&json).unwrap(), e);
    assert_eq!(serde_json::to_string(&Some(e)).unwrap(), json);
}

#[test]
fn invalid_bits_are_refused() {
    // Generation 0, and a generation above the maximum.
    assert!(serde_json::from_str::<Entity>("5").is_err());
    assert!(serde_json::from_str::<Entity>(&u64::MAX.to_string()).is_err());
    assert!(serde_json::from_str::<Entity>("-1").is_err());
}

// The components of ecs_bench_suite's serialization workloads, plus a sparse
// tag and a component that owns memory.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Transform([[f32; 4]; 4]);
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Position([f32; 3]);
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Rotation([f32; 3]);
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Velocity([f32; 3]);
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
struct Tag;
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Name(String);

fn registry() -> Registry<impl Components> {
    Registry::new()
        .component::<Transform>("transform")
        .component::<Position>("position")
        .component::<Rotation>("rotation")
        .component::<Velocity>("velocity")
        .component::<Tag>("tag")
        .component::<Name>("name")
}

/// The loaded worlds' rows (small under Miri, where the columns are heap
/// allocations of the whole reservation).
const MAX_ROWS: usize = if cfg!(miri) { 64 } else { 512 };

fn to_json(world: &World) -> String {
    serde_json::to_string(&registry().save(world)).unwrap()
}

fn from_json(json: &str) -> Result<World, String> {
    registry()
        .load()
        .max_rows(MAX_ROWS)
        .deserialize(&mut serde_json::Deserializer::from_reader(json.as_bytes()))
        .map_err(|e| e.to_string())
}

fn to_postcard(world: &World) -> Vec<u8> {
    postcard::to_allocvec(&registry().save(world)).unwrap()
}

fn from_postcard(bytes: &[u8]) -> Result<World, String> {
    registry()
        .load()
        .max_rows(MAX_ROWS)
        .deserialize(&mut postcard::Deserializer::from_bytes(bytes))
        .map_err(|e| e.to_string())
}

type Row = (
    Entity,
    Option<Transform>,
    Option<Position>,
    Option<Rotation>,
    Option<Velocity>,
    bool,
    Option<Name>,
);

/// Every live entity with its components, in row order.
fn contents(world: &World) -> Vec<Row> {
    world
        .query::<(
            Entity,
            Option<&Transform>,
            Option<&Position>,
            Option<&Rotation>,
            Option<&Velocity>,
            Option<&Tag>,
            Option<&Name>,
        )>()
        .iter()
        .map(|(e, t, p, r, v, tag, n)| {
            (
                e,
                t.copied(),
                p.copied(),
                r.copied(),
                v.copied(),
                tag.is_some(),
                n.cloned(),
            )
        })
        .collect()
}

/// Spawns, despawns and spawns again in both worlds, checking that they
/// hand out the same entities.
fn same_spawns(a: &mut World, b: &mut World, n: usize) {
    let mut spawned = Vec::new();
    for _ in 0..n {
        let (x, y) = (a.spawn(()), b.spawn(()));
        assert_eq!(x, y, "the loaded world spawns another entity");
        spawned.push(x);
    }
    for &e in spawned.iter().step_by(2) {
        a.despawn(e).unwrap();
        b.despawn(e).unwrap();
    }
    for _ in 0..n {
        assert_eq!(a.spawn(()), b.spawn(()), "after despawns");
    }
}

/// A world with every kind of history: despawns, a collection that moved
/// rows (so the front is not row 0 and the order is not creation order),
/// dead rows left, a sparse type, some rows without some components.
fn busy_world(n: u32) -> World {
    let mut world = World::with_max_rows(MAX_ROWS);
    world.register::<Tag>(Storage::Sparse);
    let mut entities = Vec::new();
    for i in 0..n {
        let f = i as f32;
        let e = world.spawn((Position([f, 0.0, 1.0]), Velocity([1.0, f, 0.0])));
        if i % 3 == 0 {
            world.insert_one(e, Rotation([0.0, 0.0, f])).unwrap();
        }
        if i % 5 == 0 {
            world.insert_one(e, Tag).unwrap();
        }
        if i % 7 == 0 {
            world.insert_one(e, Name(format!("entity {i}"))).unwrap();
        }
        if i % 2 == 0 {
            world.insert_one(e, Transform([[f; 4]; 4])).unwrap();
        }
        entities.push(e);
    }
    for (i, &e) in entities.iter().enumerate() {
        if i % 4 == 1 || i % 9 == 2 {
            world.despawn(e).unwrap();
        }
    }
    world.collect(n as usize / 3, Order::Any);
    // Dead rows after the collection, too.
    for &e in entities.iter().skip(n as usize / 2).step_by(5) {
        let _ = world.despawn(e);
    }
    world
}

#[test]
fn a_round_trip_keeps_entities_components_storage_and_order() {
    let n = if cfg!(miri) { 12 } else { 300 };
    for postcard in [false, true] {
        let mut world = busy_world(n);
        assert!(world.row_count() > world.len(), "dead rows to leave out");
        let mut loaded = if postcard {
            from_postcard(&to_postcard(&world)).unwrap()
        } else {
            from_json(&to_json(&world)).unwrap()
        };
        assert_eq!(contents(&loaded), contents(&world));
        assert_eq!(loaded.len(), world.len());
        assert_eq!(
            loaded.row_count(),
            world.len(),
            "the loaded world is compact"
        );
        assert_eq!(loaded.storage_of::<Tag>(), Some(Storage::Sparse));
        assert_eq!(loaded.storage_of::<Position>(), Some(Storage::Dense));
        assert_eq!(loaded.max_rows(), MAX_ROWS);
        // A second round trip writes the same data.
        if postcard {
            assert_eq!(to_postcard(&loaded), to_postcard(&world));
        } else {
            assert_eq!(to_json(&loaded), to_json(&world));
        }
        same_spawns(&mut world, &mut loaded, 10);
        assert_eq!(contents(&loaded), contents(&world));
    }
}

/// A world with no dead rows (front 0, or past rows a collection released)
/// whose components leave gaps of every shape in the presence words: full
/// words, runs across word boundaries, a run ending on bit 63, single rows.
/// Saving reads them a word at a time, loading writes them a run at a time.
#[test]
fn runs_of_every_shape_round_trip() {
    // Under Miri, the rows up to the last run the JSON checks below name
    // (a row takes 0.1 s of Miri's clock there).
    let n = if cfg!(miri) { 136 } else { 400 };
    // Room for the rows released at the front, too.
    let rows = n + 70;
    let load_json = |json: &str| {
        registry()
            .load()
            .max_rows(rows)
            .deserialize(&mut serde_json::Deserializer::from_str(json))
            .unwrap()
    };
    let load_postcard = |bytes: &[u8]| {
        registry()
            .load()
            .max_rows(rows)
            .deserialize(&mut postcard::Deserializer::from_bytes(bytes))
            .unwrap()
    };
    let has = |i: usize| match i {
        0..=129 => true,
        130..=191 => i % 3 == 0,
        192..=255 => true,
        256..=319 => i % 2 == 1,
        _ => i % 7 < 3,
    };
    // Under Miri only the world whose front rows a collection released (41 s
    // of Miri's clock for both); the other round trips here start at row 0.
    let fronts: &[usize] = if cfg!(miri) { &[70] } else { &[0, 70] };
    for &front in fronts {
        let mut world = World::with_max_rows(rows);
        let dropped: Vec<Entity> = (0..front).map(|_| world.spawn(())).collect();
        let mut names = 0;
        for i in 0..n {
            let e = world.spawn((Position([i as f32; 3]),));
            if has(i) {
                world.insert_one(e, Velocity([1.0, i as f32, 0.0])).unwrap();
            }
            if i % 64 == 63 || i == 64 {
                world.insert_one(e, Name(format!("row {i}"))).unwrap();
                names += 1;
            }
        }
        for e in dropped {
            world.despawn(e).unwrap();
        }
        while world.row_count() > world.len() {
            world.collect(64, Order::Preserve);
        }
        assert_eq!(world.row_count(), world.len(), "no dead row left");
        for postcard in [false, true] {
            // Under Miri, the JSON round trip is the one below (a JSON save
            // of these rows and its load take 8 s of Miri's clock).
            if cfg!(miri) && !postcard {
                continue;
            }
            let loaded: World = if postcard {
                load_postcard(&to_postcard(&world))
            } else {
                load_json(&to_json(&world))
            };
            assert_eq!(contents(&loaded), contents(&world));
            assert_eq!(loaded.query::<&Name>().iter().count(), names);
        }
        // The runs are written as the rows say.
        let json = to_json(&world);
        assert!(
            json.contains(r#""name":{"Dense":{"runs":[[63,2],[127,1]"#),
            "{json}"
        );
        assert!(
            json.contains(r#""velocity":{"Dense":{"runs":[[0,130],[132,1],"#),
            "{json}"
        );
        let mut loaded = load_json(&json);
        if cfg!(miri) {
            assert_eq!(contents(&loaded), contents(&world));
            assert_eq!(loaded.query::<&Name>().iter().count(), names);
        }
        same_spawns(&mut world, &mut loaded, 10);
    }
}

#[test]
fn a_loaded_world_hands_out_the_same_ids() {
    // hecs#332: after despawns, the next spawns reuse the lowest free index
    // first, at the next generation, which the saved generations determine.
    let mut world = World::new();
    let es: Vec<Entity> = (0..10u32).map(|i| world.spawn((i,))).collect();
    for i in [3, 7, 5] {
        world.despawn(es[i]).unwrap();
    }
    let registry = Registry::new().component::<u32>("n");
    let json = serde_json::to_string(&registry.save(&world)).unwrap();
    let mut loaded = registry
        .load()
        .deserialize(&mut serde_json::Deserializer::from_str(&json))
        .unwrap();
    let next: Vec<Entity> = (0..4).map(|_| loaded.spawn(())).collect();
    let indices: Vec<usize> = next.iter().map(|e| e.index()).collect();
    assert_eq!(indices, [3, 5, 7, 10]);
    assert!(next[..3].iter().all(|e| e.generation() == 2));
    let original: Vec<Entity> = (0..4).map(|_| world.spawn(())).collect();
    assert_eq!(next, original);
}

#[test]
fn emptied_and_cleared_worlds_hand_out_the_same_ids() {
    for clear in [false, true] {
        let mut world = World::with_max_rows(MAX_ROWS);
        let es: Vec<Entity> = (0..20).map(|_| world.spawn((Tag,))).collect();
        if clear {
            world.clear();
        } else {
            // Emptied by despawns (in an order the refill does not follow).
            for &e in es.iter().rev().step_by(2).chain(es.iter().step_by(2)) {
                world.despawn(e).unwrap();
            }
        }
        world.spawn(());
        let mut loaded = from_json(&to_json(&world)).unwrap();
        same_spawns(&mut world, &mut loaded, 12);
        let mut loaded = from_postcard(&to_postcard(&world)).unwrap();
        same_spawns(&mut world, &mut loaded, 5);
    }
}

#[test]
fn many_runs_of_rows_and_generations_round_trip() {
    // Every other entity despawned and its index reused: the rows' indices
    // and the slots' generations alternate, many runs of each (more than
    // the first pass of the save keeps).
    let mut world = World::new();
    let first: Vec<Entity> = (0..40u32)
        .map(|i| world.spawn((Position([i as f32; 3]),)))
        .collect();
    for &e in first.iter().step_by(2) {
        world.despawn(e).unwrap();
    }
    for i in 0..10u32 {
        world.spawn((Position([-(i as f32); 3]),));
    }
    let json = to_json(&world);
    let runs = |field: &str| {
        let at = json.find(field).unwrap() + field.len();
        json[at..].split("]]").next().unwrap().matches('[').count()
    };
    assert!(runs(r#""slots":["#) > 8, "{json}");
    assert!(runs(r#""rows":["#) > 8, "{json}");
    let mut from_text = from_json(&json).unwrap();
    let mut from_binary = from_postcard(&to_postcard(&world)).unwrap();
    assert_eq!(contents(&from_text), contents(&world));
    assert_eq!(contents(&from_binary), contents(&world));
    same_spawns(&mut from_text, &mut from_binary, 12);
    let mut again = from_json(&json).unwrap();
    same_spawns(&mut world, &mut again, 12);
}

#[test]
fn an_empty_world_round_trips() {
    let world = World::new();
    let mut loaded = from_json(&to_json(&world)).unwrap();
    assert!(loaded.is_empty());
    assert_eq!(loaded.spawn(()), World::new().spawn(()));
    assert!(from_postcard(&to_postcard(&world)).unwrap().is_empty());
}

#[test]
fn the_bench_world_round_trips_in_both_formats() {
    // ecs_bench_suite's serialize_binary / serialize_text world.
    let n = if cfg!(miri) { 10 } else { 1000 };
    let mut world = World::new();
    world.spawn_batch((0..n).map(|i| {
        let f = i as f32;
        (
            Transform([[f; 4]; 4]),
            Position([f; 3]),
            Rotation([f; 3]),
            Velocity([f; 3]),
        )
    }));
    let registry = Registry::new()
        .component::<Transform>("transform")
        .component::<Position>("position")
        .component::<Rotation>("rotation")
        .component::<Velocity>("velocity");
    let bytes = postcard::to_allocvec(&registry.save(&world)).unwrap();
    let binary: World = registry
        .load()
        .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
        .unwrap();
    let json = serde_json::to_string(&registry.save(&world)).unwrap();
    let text: World = registry
        .load()
        .deserialize(&mut serde_json::Deserializer::from_str(&json))
        .unwrap();
    for loaded in [binary, text] {
        assert_eq!(contents(&loaded), contents(&world));
    }
    // One run per column: 4 components of 1000 rows cost their floats plus a
    // few bytes of framing.
    let floats = n * (16 + 3 * 3);
    assert!(
        bytes.len() < floats * 4 + 64 + 4 * n,
        "{} bytes",
        bytes.len()
    );
}

#[test]
fn unregistered_components_fail_to_save_unless_skipped() {
    struct Cache;
    let mut world = World::new();
    let e = world.spawn((Position([0.0; 3]), Cache));
    let error = serde_json::to_string(&registry().save(&world)).unwrap_err();
    assert!(error.to_string().contains("Cache"), "{error}");
    let skipping = registry().skip::<Cache>();
    let json = serde_json::to_string(&skipping.save(&world)).unwrap();
    let loaded = from_json(&json).unwrap();
    assert!(loaded.has::<Position>(e) && !loaded.has::<Cache>(e));
    // A type whose column is empty holds no data: saved without it.
    world.remove_one::<Cache>(e).unwrap();
    assert!(serde_json::to_string(&registry().save(&world)).is_ok());
}

/// Registers `A` as `a`, then `B` as `b`.
fn register_both<A, B>(a: &str, b: &str)
where
    A: Serialize + for<'de> Deserialize<'de> + Send + Sync + 'static,
    B: Serialize + for<'de> Deserialize<'de> + Send + Sync + 'static,
{
    let _ = Registry::new().component::<A>(a).component::<B>(b);
}

#[test]
#[should_panic(expected = "registered already")]
fn a_name_cannot_be_registered_twice() {
    register_both::<Position, Velocity>("p", "p");
}

#[test]
#[should_panic(expected = "registered already")]
fn a_type_cannot_be_registered_twice() {
    register_both::<Position, Position>("p", "q");
}

/// Hostile inputs: each is refused with an error, never a panic or a
/// broken world.
mod hostile {
    use super::*;

    /// A world of three entities (indices 0, 1, 2 in rows 1, 0, 2, index 3
    /// free), with `components` as its components.
    fn saved(components: &str) -> String {
        format!(
            r#"{{"entities":{{"slots":[[1,2],[2,2]],"rows":[[1,1],[0,1],[2,1]]}},"components":{components}}}"#
        )
    }

    /// The cases of a file of hostile inputs (`tests/hostile/`): one a
    /// line, `N` fields apart by ` | `, the last why the input is bad;
    /// `#` starts a comment line.
    fn cases<const N: usize>(file: &str) -> Vec<[&str; N]> {
        let cases: Vec<[&str; N]> = file
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| {
                let fields: Vec<&str> = line.split(" | ").collect();
                fields
                    .try_into()
                    .unwrap_or_else(|_| panic!("not {N} fields: {line}"))
            })
            .collect();
        assert!(!cases.is_empty(), "no cases in {file:?}");
        cases
    }

    const POSITIONS: &str = r#"{"position":{"Dense":{"runs":[[0,2]],"values":[[1,1,1],[2,2,2]]}}}"#;

    #[test]
    fn the_base_case_loads() {
        let world = from_json(&saved(POSITIONS)).unwrap();
        let got: Vec<(usize, Position)> = world
            .query::<(Entity, &Position)>()
            .iter()
            .map(|(e, p)| (e.index(), *p))
            .collect();
        assert_eq!(
            got,
            [(1, Position([1.0; 3])), (0, Position([2.0; 3]))],
            "rows 0 and 1 are entities 1 and 0"
        );
        let e2 = world.query::<Entity>().iter().nth(2).unwrap();
        assert_eq!((e2.index(), e2.generation()), (2, 2));
        let tagged = from_json(&saved(
            r#"{"tag":{"Sparse":{"runs":[[2,1]],"values":[null]}}}"#,
        ))
        .unwrap();
        assert_eq!(tagged.storage_of::<Tag>(), Some(Storage::Sparse));
        assert_eq!(tagged.count::<Tag>(), 1);
    }

    #[test]
    fn bad_entity_tables_are_refused() {
        let bad = |generations: &str, rows: &str, why: &str| {
            let json = format!(
                r#"{{"entities":{{"slots":{generations},"rows":{rows}}},"components":{{}}}}"#
            );
            assert!(from_json(&json).is_err(), "accepted {why}: {json}");
        };
        for [generations, rows, why] in cases(include_str!("hostile/entity_tables.txt")) {
            bad(generations, rows, why);
        }
        // More entities than the loader's rows.
        let rows = MAX_ROWS + 1;
        bad(
            &format!("[[1,{rows}]]"),
            &format!("[[0,{rows}]]"),
            "more entities than max_rows",
        );
        // More slots than the rows allow, in a few bytes.
        bad(
            &format!("[[2,{}]]", 2 * MAX_ROWS + 4096),
            "[]",
            "more slots than max_rows allow",
        );
        bad("[[2,4294967295]]", "[]", "2^32 - 1 slots");
        // Missing, misplaced and repeated fields.
        for (entities, why) in [
            (r#"{"rows":[]}"#, "no slots"),
            (r#"{"slots":[]}"#, "no rows"),
            (r#"{"rows":[],"slots":[]}"#, "rows before slots"),
            (r#"{"slots":[],"rows":[],"rows":[]}"#, "rows twice"),
            (
                r#"{"slots":{"generations":[]},"rows":[]}"#,
                "slots not runs",
            ),
        ] {
            let json = format!(r#"{{"entities":{entities},"components":{{}}}}"#);
            assert!(from_json(&json).is_err(), "accepted {why}: {json}");
        }
        // A free index at the last generation is retired: it loads, and is
        // never reused.
        let json = r#"{"entities":{"slots":[[2147483647,1]],"rows":[]},"components":{}}"#;
        let mut world = from_json(json).unwrap();
        assert_eq!(world.spawn(()).index(), 1);
    }

    #[test]
    fn rows_in_any_index_order_load() {
        // Rows whose entities are in descending index order (the buffered
        // path), in ascending order with gaps (the direct one), and jumping
        // back to an earlier run of generations.
        for (generations, rows, want) in [
            ("[[1,3]]", "[[2,1],[1,1],[0,1]]", [(2, 1), (1, 1), (0, 1)]),
            (
                "[[3,1],[1,4]]",
                "[[0,1],[2,1],[4,1]]",
                [(0, 3), (2, 1), (4, 1)],
            ),
            // A jump back across runs of generations.
            (
                "[[3,1],[1,2],[2,1]]",
                "[[3,1],[0,2]]",
                [(3, 2), (0, 3), (1, 1)],
            ),
        ] {
            let json = format!(
                r#"{{"entities":{{"slots":{generations},"rows":{rows}}},"components":{{}}}}"#
            );
            let mut world = from_json(&json).unwrap();
            let got: Vec<(usize, u32)> = world
                .query::<Entity>()
                .iter()
                .map(|e| (e.index(), e.generation()))
                .collect();
            assert_eq!(got, want, "{json}");
            // And it saves back to the same runs.
            let mut again = from_json(&to_json(&world)).unwrap();
            assert_eq!(contents(&again), contents(&world));
            same_spawns(&mut world, &mut again, 4);
        }
    }

    #[test]
    fn bad_components_are_refused() {
        for [components, why] in cases(include_str!("hostile/components.txt")) {
            let json = saved(components);
            assert!(from_json(&json).is_err(), "accepted {why}: {json}");
        }
        let empty = r#"{"slots":[],"rows":[]}"#;
        assert!(from_json(&format!(r#"{{"entities":{empty},"components":{{}}}}"#)).is_ok());
        let reordered = format!(r#"{{"components":{{}},"entities":{empty}}}"#);
        assert!(from_json(&reordered).is_err(), "components before entities");
        assert!(from_json(&format!(r#"{{"entities":{empty}}}"#)).is_err());
        assert!(from_json(&format!(
            r#"{{"entities":{empty},"components":{{}},"components":{{}}}}"#
        ))
        .is_err());
    }

    #[test]
    fn truncated_input_is_refused() {
        let world = busy_world(if cfg!(miri) { 5 } else { 40 });
        // Every cut (under Miri, four spread over the input: a load of a
        // cut reads all of it, up to 1 s of Miri's clock).
        let cuts = |len: usize| -> Vec<usize> {
            if cfg!(miri) {
                (0..4).map(|k| k * len / 4).collect()
            } else {
                (0..len).collect()
            }
        };
        let bytes = to_postcard(&world);
        for len in cuts(bytes.len()) {
            assert!(
                from_postcard(&bytes[..len]).is_err(),
                "accepted {len} bytes"
            );
        }
        let json = to_json(&world);
        for len in cuts(json.len()) {
            assert!(from_json(&json[..len]).is_err(), "accepted {len} chars");
        }
    }

    /// Postcard varint of `n`.
    fn varint(mut n: u64, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    #[test]
    fn huge_lengths_allocate_a_bounded_amount() {
        // Postcard data whose sequences claim 2^64 - 1 elements (runs of
        // generations, runs of rows, the component map, a column's runs and
        // values), each cut short; and runs that claim more slots or
        // entities than the loader's rows.
        let huge = u64::MAX;
        let mut cases: Vec<Vec<u8>> = Vec::new();
        // The count of generation runs, then one run: generation 1, one slot.
        let mut generations = Vec::new();
        varint(huge, &mut generations);
        generations.extend([1, 1]);
        cases.push(generations);
        // No generation runs, then the count of row runs.
        let mut rows = vec![0];
        varint(huge, &mut rows);
        rows.extend([0, 1]);
        cases.push(rows);
        // One run of 2^32 - 1 slots of generation 1, no rows.
        let mut slots = vec![1, 1];
        varint(u64::from(u32::MAX), &mut slots);
        slots.extend([0, 0]);
        cases.push(slots);
        // MAX_ROWS + 1 slots in one run (within the slots a world of
        // MAX_ROWS rows has), all of them live: more entities than rows.
        let mut live = vec![1, 1];
        varint(MAX_ROWS as u64 + 1, &mut live);
        live.extend([1, 0]);
        varint(MAX_ROWS as u64 + 1, &mut live);
        live.push(0);
        cases.push(live);
        // An empty entity table (no generation runs, no rows), then the
        // component map's length.
        let empty = [0u8, 0];
        let mut map = empty.to_vec();
        varint(huge, &mut map);
        cases.push(map);
        // One column, "position" (Dense), with a huge run count.
        let column = |runs: u64, values: Option<u64>| {
            let mut out = empty.to_vec();
            out.push(1);
            out.push(8);
            out.extend(b"position");
            out.push(0);
            varint(runs, &mut out);
            if let Some(values) = values {
                varint(values, &mut out);
            }
            out
        };
        cases.push(column(huge, None));
        // No live rows, no runs, a huge value count.
        cases.push(column(0, Some(huge)));
        for bytes in cases {
            let (result, peak) = peak_during(|| from_postcard(&bytes));
            assert!(result.is_err(), "accepted {bytes:?}");
            // Serde preallocates at most 1 MiB from a length hint, and the
            // world's reservations (`MAX_ROWS` rows; on the heap fallback
            // they are allocated) come on top.
            assert!(peak < 4 << 20, "{peak} bytes allocated for {bytes:?}");
        }
    }
}
