//! Loads of untrusted saves take memory bounded by the input (issue 33,
//! goal 7): at default settings, one load allocates at most 64 times the
//! input's size plus 1 MiB. A counting global allocator (this binary's own)
//! measures the heap a load allocates at its peak; on Linux the peak
//! resident memory (`VmHWM`, reset through `/proc/self/clear_refs`) also
//! covers the virtual-memory arrays of the world, which bypass the
//! allocator.
//!
//! The saves: the two the issue describes (an entity index near 18.9
//! million with every component type sparse; a few bytes naming 16 million
//! entities), and saves of a valid world with random bytes overwritten.
//! Each load either fails or gives a world that passes
//! `check_invariants`.
//!
//! Every test takes one lock: the counters are global.

#![cfg(feature = "serde")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use handlekit_ecs::serialize::{Components, Registry};
use handlekit_ecs::{Storage, World};
use proptest::prelude::*;
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};

mod common;

/// The system allocator, counting the bytes allocated now and at the peak.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, which upholds the contract;
// the counters do not touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded, same contract.
        counted(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded, same contract.
        counted(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded, same contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // The new block is counted before the old one is released: at its
        // peak, a moving reallocation holds both.
        // SAFETY: forwarded, same contract.
        let p = counted(unsafe { System.realloc(ptr, layout, new_size) }, new_size);
        if !p.is_null() {
            NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// `p`, a new block of `bytes` bytes (or null), counted if it is one.
fn counted(p: *mut u8, bytes: usize) -> *mut u8 {
    if !p.is_null() {
        grow(bytes);
    }
    p
}

fn grow(bytes: usize) {
    let now = NOW.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Serializes the tests: the counters and the resident peak are global.
static LOCK: Mutex<()> = Mutex::new(());

/// The bound of goal 7 for an input of `len` bytes.
fn bound(len: usize) -> usize {
    64 * len + (1 << 20)
}

/// The component types, and the registry that names each with its key.
macro_rules! components {
    ($($name:ident $key:literal)*) => {
        $(
            #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
            struct $name(u32);
        )*

        fn registry() -> Registry<impl Components> {
            Registry::new()$(.component::<$name>($key))*
        }
    };
}
components!(C0 "c0" C1 "c1" C2 "c2" C3 "c3" C4 "c4" C5 "c5" C6 "c6" C7 "c7");

/// What one load took: the heap allocated at its peak (above what was
/// allocated before), and the growth of the peak resident memory if the
/// system reports it.
#[derive(Debug)]
struct Taken {
    heap: usize,
    resident: Option<usize>,
    loaded: bool,
}

/// A status line of `/proc/self/status` in bytes.
fn status_bytes(key: &str) -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: usize = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Loads `bytes` (postcard if set, else JSON) at default settings and
/// measures it; a loaded world must be consistent.
fn measure(bytes: &[u8], postcard: bool, resident: bool) -> Taken {
    let registry = registry();
    let before_rss = if resident && !cfg!(miri) {
        // Writing 5 resets the peak resident size to the current one.
        std::fs::write("/proc/self/clear_refs", "5")
            .ok()
            .and_then(|()| status_bytes("VmRSS:"))
    } else {
        None
    };
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let world = if postcard {
        registry
            .load()
            .deserialize(&mut postcard::Deserializer::from_bytes(bytes))
            .ok()
    } else {
        registry
            .load()
            .deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .ok()
    };
    let heap = PEAK.load(Ordering::Relaxed) - base;
    let resident =
        before_rss.and_then(|before| Some(status_bytes("VmHWM:")?.saturating_sub(before)));
    let loaded = world.is_some();
    if let Some(world) = world {
        world.check_invariants();
        // It saves and loads back to the same entities.
        let again = postcard::to_allocvec(&registry.save(&world)).unwrap();
        let back: World = registry
            .load()
            .max_memory(usize::MAX)
            .deserialize(&mut postcard::Deserializer::from_bytes(&again))
            .unwrap();
        assert_eq!(back.len(), world.len());
    }
    Taken {
        heap,
        resident,
        loaded,
    }
}

/// The saved format, written field by field, to craft saves no world
/// would write.
#[derive(Serialize)]
struct SaveData {
    entities: EntitiesData,
    components: BTreeMap<String, ColumnData>,
}

#[derive(Serialize)]
struct EntitiesData {
    slots: Vec<(u32, u32)>,
    rows: Vec<(u32, u32)>,
}

#[derive(Serialize)]
enum ColumnData {
    #[allow(dead_code)]
    Dense(Runs),
    Sparse(Runs),
}

#[derive(Serialize)]
struct Runs {
    runs: Vec<(u32, u32)>,
    values: Vec<u32>,
}

/// One live entity at index `index` (the others free, generation 1) with
/// all 8 components in sparse sets.
fn far_sparse_entity(index: u32) -> SaveData {
    SaveData {
        entities: EntitiesData {
            slots: vec![(1, index + 1)],
            rows: vec![(index, 1)],
        },
        components: (0..8)
            .map(|i| {
                let column = ColumnData::Sparse(Runs {
                    runs: vec![(0, 1)],
                    values: vec![i],
                });
                (format!("c{i}"), column)
            })
            .collect(),
    }
}

/// `n` live entities and no component.
fn many_entities(n: u32) -> SaveData {
    SaveData {
        entities: EntitiesData {
            slots: vec![(1, n)],
            rows: vec![(0, n)],
        },
        components: BTreeMap::new(),
    }
}

fn encode(save: &SaveData, postcard: bool) -> Vec<u8> {
    if postcard {
        postcard::to_allocvec(save).unwrap()
    } else {
        serde_json::to_vec(save).unwrap()
    }
}

/// Loads `save` in both formats (postcard, then JSON), measuring the heap
/// and the resident size, and checks both against the bound of its length.
/// Returns what each load took.
fn within_the_bound(save: &SaveData, what: &str) -> Vec<Taken> {
    let mut out = Vec::new();
    for postcard in [true, false] {
        let bytes = encode(save, postcard);
        let taken = measure(&bytes, postcard, true);
        let format = if postcard { "postcard" } else { "json" };
        println!("{what} ({} bytes, {format}): {taken:?}", bytes.len());
        assert!(taken.heap <= bound(bytes.len()), "{taken:?}");
        if let Some(resident) = taken.resident {
            assert!(resident <= bound(bytes.len()), "{taken:?}");
        }
        out.push(taken);
    }
    out
}

#[test]
fn crafted_saves_load_as_worlds_do() {
    // The crafted format is the real one: a small crafted save loads, with
    // the values where they were put, when the limit allows its size.
    // Index 40 is in the sparse sets' flat index, 5000 in their map of far
    // indices: queries and lookups find both. Under Miri the far index is
    // 1500, past the flat index all the same (1024 indices for one value):
    // the loaded entity table has a slot per index, and one of 5000 took
    // 12 s of Miri's clock to load and check.
    let _lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let far = if cfg!(miri) { 1500 } else { 5000 };
    for (postcard, index) in [(false, 40), (true, 40), (true, far), (false, far)] {
        let bytes = encode(&far_sparse_entity(index), postcard);
        let registry = registry();
        let load = registry.load().max_memory(1 << 20);
        let world: World = if postcard {
            load.deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
                .unwrap()
        } else {
            load.deserialize(&mut serde_json::Deserializer::from_slice(&bytes))
                .unwrap()
        };
        world.check_invariants();
        let (e, c3) = world
            .query::<(handlekit_ecs::Entity, &C3)>()
            .iter()
            .map(|(e, c)| (e, *c))
            .next()
            .unwrap();
        assert_eq!((e.index(), c3), (index as usize, C3(3)));
        assert_eq!(world.get::<C7>(e).map(|c| *c), Ok(C7(7)));
        assert_eq!(world.storage_of::<C7>(), Some(Storage::Sparse));
    }
}

/// The first save: one entity at index 18.8 million, 8 sparse
/// types. It loads (the default row count reserves that many indices);
/// each sparse set takes a few bytes rather than 72 MiB; the entity table
/// of 18.8 million indices is refused by the memory limit.
#[test]
#[cfg_attr(miri, ignore = "the default world reserves 2^24 rows")]
fn far_entity_in_sparse_sets_is_bounded() {
    let _lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    within_the_bound(&far_sparse_entity(18_800_000), "far sparse entity");
    // With the limit raised, the world loads, and the sparse sets hold no
    // index array sized to the entity's index: the heap the load takes is
    // that of the same save without components (the entity table's free
    // set of 18.8 million indices) and a little more (8 × 72 MiB before).
    let registry = registry();
    let heap_of = |save: &SaveData| {
        let bytes = encode(save, true);
        let base = NOW.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let world: World = registry
            .load()
            .max_memory(usize::MAX)
            .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap();
        let heap = PEAK.load(Ordering::Relaxed) - base;
        world.check_invariants();
        (world, heap)
    };
    let (world, heap) = heap_of(&far_sparse_entity(18_800_000));
    assert_eq!(world.len(), 1);
    let e = world
        .query::<handlekit_ecs::Entity>()
        .iter()
        .next()
        .unwrap();
    assert_eq!(world.get::<C5>(e).map(|c| *c), Ok(C5(5)));
    assert_eq!(world.storage_of::<C5>(), Some(Storage::Sparse));
    drop(world);
    let mut bare = far_sparse_entity(18_800_000);
    bare.components.clear();
    let (_, bare_heap) = heap_of(&bare);
    println!("far sparse entity, limit raised: heap {heap} bytes, {bare_heap} without components");
    assert!(
        heap < bare_heap + (64 << 10),
        "heap {heap}, {bare_heap} without components"
    );
}

/// The second save: a few bytes that name 16 million entities.
#[test]
#[cfg_attr(miri, ignore = "the default world reserves 2^24 rows")]
fn tiny_save_of_millions_of_entities_is_refused() {
    let _lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for taken in within_the_bound(&many_entities(16_000_000), "16 million entities") {
        assert!(!taken.loaded);
    }
    // The caller who expects such worlds raises the limit.
    let bytes = encode(&many_entities(1_000_000), true);
    let world: World = registry()
        .load()
        .max_memory(64 << 20)
        .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
        .unwrap();
    assert_eq!(world.len(), 1_000_000);
}

/// A valid world of mixed storages, with free and reused indices, saved.
/// Under Miri each format's save is made once and kept for the cases and
/// tests after: building and saving the same world takes 2 s of Miri's
/// clock each time.
fn valid_save(postcard: bool) -> Vec<u8> {
    if cfg!(miri) {
        static SAVES: Mutex<[Option<Vec<u8>>; 2]> = Mutex::new([None, None]);
        let mut saves = SAVES.lock().unwrap_or_else(|e| e.into_inner());
        return saves[usize::from(postcard)]
            .get_or_insert_with(|| build_valid_save(postcard))
            .clone();
    }
    build_valid_save(postcard)
}

fn build_valid_save(postcard: bool) -> Vec<u8> {
    let max_rows = if cfg!(miri) { 64 } else { 1024 };
    let mut world = World::with_max_rows(max_rows);
    world.register::<C1>(Storage::Sparse);
    world.register::<C4>(Storage::Sparse);
    world.register::<C6>(Storage::Sparse);
    let n = if cfg!(miri) { 20 } else { 300 };
    let mut es = Vec::new();
    for i in 0..n {
        let e = match i % 4 {
            0 => world.spawn((C0(i), C1(i))),
            1 => world.spawn((C2(i), C3(i), C4(i))),
            2 => world.spawn((C5(i), C6(i), C7(i), C0(i))),
            _ => world.spawn((C1(i),)),
        };
        es.push(e);
    }
    for e in es.iter().step_by(3) {
        world.despawn(*e).unwrap();
    }
    for i in 0..n / 4 {
        world.spawn((C7(i), C6(i)));
    }
    let registry = registry();
    if postcard {
        postcard::to_allocvec(&registry.save(&world)).unwrap()
    } else {
        serde_json::to_vec(&registry.save(&world)).unwrap()
    }
}

proptest! {
    #![proptest_config(common::proptest_config(4, 512))]

    /// Saves with up to 4 bytes overwritten (and maybe truncated) load at
    /// default settings within the bound, as an error or a consistent
    /// world.
    #[test]
    fn mutated_saves_stay_within_the_bound(
        postcard in any::<bool>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..5),
        cut in prop::option::weighted(0.1, any::<prop::sample::Index>()),
    ) {
        let _lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut bytes = valid_save(postcard);
        for (at, byte) in edits {
            let at = at.index(bytes.len());
            bytes[at] = byte;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        let taken = measure(&bytes, postcard, true);
        prop_assert!(taken.heap <= bound(bytes.len()), "{} bytes: {:?}", bytes.len(), taken);
        if let Some(resident) = taken.resident {
            prop_assert!(resident <= bound(bytes.len()), "{} bytes: {:?}", bytes.len(), taken);
        }
    }
}

#[test]
fn valid_saves_load_at_default_settings() {
    let _lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for postcard in [false, true] {
        let bytes = valid_save(postcard);
        let taken = measure(&bytes, postcard, false);
        assert!(taken.loaded);
        assert!(taken.heap <= bound(bytes.len()), "{taken:?}");
    }
}
