//! A component whose `Drop` panics: no double drop, no leak, in despawn,
//! collect, clear and the world's drop.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use handlekit_ecs::{Order, Storage, World};

const BOOM: &str = "intentional test panic";

/// Counts the drops of each value; one value can be armed to panic once.
#[derive(Default)]
struct Tracker {
    drops: Mutex<Vec<usize>>,
    armed: AtomicUsize,
    armed_set: AtomicBool,
}

impl Tracker {
    fn new() -> Arc<Self> {
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let default = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if info.payload().downcast_ref::<&str>() != Some(&BOOM) {
                    default(info);
                }
            }));
        });
        Arc::new(Tracker::default())
    }
    fn make(self: &Arc<Self>) -> Val {
        let mut drops = self.drops.lock().unwrap();
        drops.push(0);
        Val(drops.len() - 1, self.clone())
    }
    fn arm(&self, id: usize) {
        self.armed.store(id, Ordering::SeqCst);
        self.armed_set.store(true, Ordering::SeqCst);
    }
    /// Drops `world`, then checks that every value was dropped once.
    fn drop_world(&self, world: World) {
        drop(world);
        self.assert_all_dropped_once();
    }
    fn assert_all_dropped_once(&self) {
        for (id, &n) in self.drops.lock().unwrap().iter().enumerate() {
            assert_eq!(n, 1, "value {id} dropped {n} times");
        }
    }
    fn drops(&self, id: usize) -> usize {
        self.drops.lock().unwrap()[id]
    }
}

struct Val(usize, Arc<Tracker>);

impl Drop for Val {
    fn drop(&mut self) {
        self.1.drops.lock().unwrap()[self.0] += 1;
        if self.1.armed_set.load(Ordering::SeqCst) && self.1.armed.load(Ordering::SeqCst) == self.0
        {
            self.1.armed_set.store(false, Ordering::SeqCst);
            std::panic::panic_any(BOOM);
        }
    }
}

/// A second component type of the same kind.
struct Other(#[allow(dead_code)] Val);
/// A sparse one.
struct Rare(#[allow(dead_code)] Val);

fn world(t: &Arc<Tracker>, n: usize) -> (World, Vec<handlekit_ecs::Entity>) {
    let mut world = World::new();
    world.register::<Rare>(Storage::Sparse);
    let es = (0..n)
        .map(|_| world.spawn((t.make(), Other(t.make()), Rare(t.make()))))
        .collect();
    (world, es)
}

/// Arms the drop of value `id`, then runs `f`, which must panic with it.
fn boom<R>(t: &Tracker, id: usize, f: impl FnOnce() -> R) {
    t.arm(id);
    let payload = catch_unwind(AssertUnwindSafe(f)).err();
    let payload = payload.expect("expected a panic");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&BOOM));
}

#[test]
fn despawn() {
    let t = Tracker::new();
    let (mut world, es) = world(&t, 10);
    // Entity 4's first component.
    boom(&t, 3 * 4, || world.despawn(es[4]));
    assert!(!world.contains(es[4]));
    for id in 12..15 {
        assert_eq!(t.drops(id), 1, "entity 4's components are all dropped");
    }
    assert_eq!(world.len(), 9);
    world.collect(100, Order::Preserve);
    t.drop_world(world);
}

#[test]
fn clear() {
    let t = Tracker::new();
    let (mut world, _) = world(&t, 10);
    boom(&t, 7, || world.clear());
    assert!(world.is_empty());
    t.assert_all_dropped_once();
    world.spawn((t.make(),));
    t.drop_world(world);
}

#[test]
fn world_drop() {
    let t = Tracker::new();
    let (world, _) = world(&t, 10);
    boom(&t, 16, || drop(world));
    t.assert_all_dropped_once();
}

#[test]
fn remove_replaced_value() {
    let t = Tracker::new();
    let (mut world, es) = world(&t, 3);
    let new = t.make();
    boom(&t, 0, || world.insert_one(es[0], new));
    // The old value was dropped (panicking); the new one is in place.
    assert!(world.get::<Val>(es[0]).is_ok());
    t.drop_world(world);
}

#[test]
fn collect_after_despawn_panic() {
    let t = Tracker::new();
    let (mut world, es) = world(&t, 200);
    for (i, &e) in es.iter().enumerate().take(150) {
        if i == 70 {
            boom(&t, 3 * 70 + 1, || world.despawn(e));
        } else {
            world.despawn(e).unwrap();
        }
    }
    while world.row_count() > world.len() {
        world.collect(37, Order::Any);
    }
    assert_eq!(world.len(), 50);
    t.drop_world(world);
}
