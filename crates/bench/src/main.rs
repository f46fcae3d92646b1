//! The main job. Until the comparison runner lands, a demo that exercises
//! `IdTable` and prints what it did.

fn main() {
    let mut table = handlekit::IdTable::new();
    let keys: Vec<_> = (0..10u64).map(|n| table.insert(n)).collect();
    println!("inserted {} values", table.len());
    for key in keys.iter().step_by(2) {
        table.remove(*key);
    }
    println!("removed every other one: {} left", table.len());
    let stale = keys[0];
    let fresh = table.insert(100);
    println!(
        "stale key {stale:?} -> {:?}; fresh key {fresh:?} -> {:?}",
        table.get(stale),
        table.get(fresh)
    );
}
