//! probe
use std::time::Instant;
#[derive(Clone, Copy)]
struct SA(f32);
#[derive(Clone, Copy)]
struct SB(f32);
#[derive(Clone, Copy)]
struct SC(f32);
#[derive(Clone, Copy)]
struct SD(f32);
#[derive(Clone, Copy)]
struct SE(f32);
macro_rules! swap {
    ($x:ident, $y:ident) => {
        |(x, y): (&mut $x, &mut $y)| std::mem::swap(&mut x.0, &mut y.0)
    };
}
fn main() {
    let n = 10_000;
    let mut w = handlekit_ecs::World::new();
    w.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0))));
    w.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0), SC(0.0))));
    w.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0), SC(0.0), SD(0.0))));
    w.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0), SC(0.0), SE(0.0))));
    let mut h = hecs::World::new();
    h.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0))));
    h.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0), SC(0.0))));
    h.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0), SC(0.0), SD(0.0))));
    h.spawn_batch((0..n).map(|_| (SA(0.0), SB(0.0), SC(0.0), SE(0.0))));
    let reps = 20000;
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..reps {
            w.query::<(&mut SA, &mut SB)>().for_each(swap!(SA, SB));
        }
        let hab = t.elapsed() / reps;
        let t = Instant::now();
        for _ in 0..reps {
            w.query::<(&mut SC, &mut SD)>().for_each(swap!(SC, SD));
            w.query::<(&mut SC, &mut SE)>().for_each(swap!(SC, SE));
        }
        let hcd = t.elapsed() / reps;
        let t = Instant::now();
        for _ in 0..reps {
            h.query::<(&mut SA, &mut SB)>()
                .iter()
                .for_each(swap!(SA, SB));
        }
        let eab = t.elapsed() / reps;
        let t = Instant::now();
        for _ in 0..reps {
            h.query::<(&mut SC, &mut SD)>()
                .iter()
                .for_each(swap!(SC, SD));
            h.query::<(&mut SC, &mut SE)>()
                .iter()
                .for_each(swap!(SC, SE));
        }
        let ecd = t.elapsed() / reps;
        let t = Instant::now();
        for _ in 0..reps {
            let w = &w;
            rayon::join(
                || w.query::<(&mut SA, &mut SB)>().for_each(swap!(SA, SB)),
                || {
                    w.query::<(&mut SC, &mut SD)>().for_each(swap!(SC, SD));
                    w.query::<(&mut SC, &mut SE)>().for_each(swap!(SC, SE));
                },
            );
        }
        let hj = t.elapsed() / reps;
        let t = Instant::now();
        for _ in 0..reps {
            let h = &h;
            rayon::join(
                || {
                    h.query::<(&mut SA, &mut SB)>()
                        .iter()
                        .for_each(swap!(SA, SB))
                },
                || {
                    h.query::<(&mut SC, &mut SD)>()
                        .iter()
                        .for_each(swap!(SC, SD));
                    h.query::<(&mut SC, &mut SE)>()
                        .iter()
                        .for_each(swap!(SC, SE));
                },
            );
        }
        let ej = t.elapsed() / reps;
        println!(
            "hk ab {hab:?} cd+ce {hcd:?} join {hj:?} | hecs ab {eab:?} cd+ce {ecd:?} join {ej:?}"
        );
    }
}
