//! The components of the ECS workloads, after the data of the community's
//! ECS benchmark suite (rust-gamedev/ecs_bench_suite): a 4×4 `f32` matrix
//! and three 3-vectors per entity, the 26 fragmenting types `A..Z` with a
//! shared `Data`, and the four `f32` components of `schedule`.
//!
//! Every component derives bevy's and shipyard's `Component` and
//! implements specs's (hecs, legion, planck_ecs and handlekit-ecs take any
//! `Send + Sync + 'static` type), and serde's traits (for the
//! serialization workloads).

use bevy_ecs::component::Component as BevyComponent;
use serde::{Deserialize, Serialize};
use shipyard::Component as ShipyardComponent;

/// A 3-vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

impl Vec3 {
    /// The unit vector along x.
    pub const X: Vec3 = Vec3 {
        x: 1.0,
        y: 0.0,
        z: 0.0,
    };
}

impl std::ops::AddAssign for Vec3 {
    #[inline(always)]
    fn add_assign(&mut self, other: Vec3) {
        self.x += other.x;
        self.y += other.y;
        self.z += other.z;
    }
}

/// A 4×4 matrix, column-major (`cols[c][r]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mat4 {
    pub cols: [[f32; 4]; 4],
}

impl Mat4 {
    /// The identity.
    pub const IDENTITY: Mat4 = Mat4 {
        cols: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
    };

    /// The inverse, by cofactors, or `None` if the determinant is zero.
    pub fn invert(&self) -> Option<Mat4> {
        // Row-major view: m[r][c].
        let m = |r: usize, c: usize| self.cols[c][r];
        // 2×2 minors of the top two rows (s) and the bottom two rows (t).
        let s0 = m(0, 0) * m(1, 1) - m(1, 0) * m(0, 1);
        let s1 = m(0, 0) * m(1, 2) - m(1, 0) * m(0, 2);
        let s2 = m(0, 0) * m(1, 3) - m(1, 0) * m(0, 3);
        let s3 = m(0, 1) * m(1, 2) - m(1, 1) * m(0, 2);
        let s4 = m(0, 1) * m(1, 3) - m(1, 1) * m(0, 3);
        let s5 = m(0, 2) * m(1, 3) - m(1, 2) * m(0, 3);
        let c5 = m(2, 2) * m(3, 3) - m(3, 2) * m(2, 3);
        let c4 = m(2, 1) * m(3, 3) - m(3, 1) * m(2, 3);
        let c3 = m(2, 1) * m(3, 2) - m(3, 1) * m(2, 2);
        let c2 = m(2, 0) * m(3, 3) - m(3, 0) * m(2, 3);
        let c1 = m(2, 0) * m(3, 2) - m(3, 0) * m(2, 2);
        let c0 = m(2, 0) * m(3, 1) - m(3, 0) * m(2, 1);
        let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
        if det == 0.0 {
            return None;
        }
        let k = 1.0 / det;
        // inv[r][c], row-major.
        let inv = [
            [
                (m(1, 1) * c5 - m(1, 2) * c4 + m(1, 3) * c3) * k,
                (-m(0, 1) * c5 + m(0, 2) * c4 - m(0, 3) * c3) * k,
                (m(3, 1) * s5 - m(3, 2) * s4 + m(3, 3) * s3) * k,
                (-m(2, 1) * s5 + m(2, 2) * s4 - m(2, 3) * s3) * k,
            ],
            [
                (-m(1, 0) * c5 + m(1, 2) * c2 - m(1, 3) * c1) * k,
                (m(0, 0) * c5 - m(0, 2) * c2 + m(0, 3) * c1) * k,
                (-m(3, 0) * s5 + m(3, 2) * s2 - m(3, 3) * s1) * k,
                (m(2, 0) * s5 - m(2, 2) * s2 + m(2, 3) * s1) * k,
            ],
            [
                (m(1, 0) * c4 - m(1, 1) * c2 + m(1, 3) * c0) * k,
                (-m(0, 0) * c4 + m(0, 1) * c2 - m(0, 3) * c0) * k,
                (m(3, 0) * s4 - m(3, 1) * s2 + m(3, 3) * s0) * k,
                (-m(2, 0) * s4 + m(2, 1) * s2 - m(2, 3) * s0) * k,
            ],
            [
                (-m(1, 0) * c3 + m(1, 1) * c1 - m(1, 2) * c0) * k,
                (m(0, 0) * c3 - m(0, 1) * c1 + m(0, 2) * c0) * k,
                (-m(3, 0) * s3 + m(3, 1) * s1 - m(3, 2) * s0) * k,
                (m(2, 0) * s3 - m(2, 1) * s1 + m(2, 2) * s0) * k,
            ],
        ];
        let mut cols = [[0.0; 4]; 4];
        for (r, row) in inv.iter().enumerate() {
            for (c, &value) in row.iter().enumerate() {
                cols[c][r] = value;
            }
        }
        Some(Mat4 { cols })
    }

    /// The matrix applied to a direction (w = 0).
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        let c = &self.cols;
        Vec3 {
            x: c[0][0] * v.x + c[1][0] * v.y + c[2][0] * v.z,
            y: c[0][1] * v.x + c[1][1] * v.y + c[2][1] * v.z,
            z: c[0][2] * v.x + c[1][2] * v.y + c[2][2] * v.z,
        }
    }
}

/// What every ECS does per entity in `heavy_compute`: invert the matrix 100
/// times, then transform the position by it. Out of line, so that every
/// contender runs the same machine code for it: inlined into each one's
/// loop, it was compiled differently per contender, and an unrelated change
/// to handlekit-ecs's type index made handlekit-ecs's copy 11% slower than
/// before (1,338–1,370 ns an entity against 1,472–1,501, side by side, two
/// runs each) while the peers' copies stayed put. The call costs nothing
/// beside 100 inversions.
#[inline(never)]
pub fn heavy(position: &mut Position, transform: &mut Transform) {
    for _ in 0..100 {
        transform.0 = transform.0.invert().expect("an invertible matrix");
    }
    position.0 = transform.0.transform_vector(position.0);
}

/// Components: bevy's and shipyard's derives, specs's `Component` with the
/// storage the suite's specs module gives it, and a `From` and an `AsMut` of
/// the wrapped value (so one generic function makes, or swaps, any of them).
macro_rules! component {
    (specs: $storage:ident; $($(#[$meta:meta])* $name:ident($ty:ty);)*) => {
        $(
            $(#[$meta])*
            #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, BevyComponent, ShipyardComponent)]
            pub struct $name(pub $ty);

            impl specs::Component for $name {
                type Storage = specs::$storage<Self>;
            }

            impl From<$ty> for $name {
                fn from(value: $ty) -> Self {
                    $name(value)
                }
            }

            impl AsMut<$ty> for $name {
                #[inline(always)]
                fn as_mut(&mut self) -> &mut $ty {
                    &mut self.0
                }
            }
        )*
    };
}

component! {
    specs: VecStorage;
    /// A 4×4 matrix (64 bytes).
    Transform(Mat4);
    /// A position.
    Position(Vec3);
    /// A rotation.
    Rotation(Vec3);
    /// A velocity.
    Velocity(Vec3);
    /// The component every `frag_iter` entity has.
    Data(f32);
    /// `schedule`'s first component; `add_remove`'s base component.
    SA(f32);
    /// `schedule`'s second component; `add_remove`'s added component.
    SB(f32);
    /// `schedule`'s third component.
    SC(f32);
    /// `schedule`'s fourth component.
    SD(f32);
    /// `schedule`'s fifth component.
    SE(f32);
}

/// `add_remove`'s added component in bevy's sparse-set storage (the second
/// bevy row).
#[derive(Clone, Copy, Debug, PartialEq, BevyComponent)]
#[component(storage = "SparseSet")]
pub struct SparseB(pub f32);

impl From<f32> for SparseB {
    fn from(value: f32) -> Self {
        SparseB(value)
    }
}

/// The entity of `simple_insert`, `simple_iter`, `heavy_compute` and the
/// serialization workloads.
pub type Simple = (Transform, Position, Rotation, Velocity);

/// One entity of [`Simple`].
#[inline]
pub fn simple() -> Simple {
    (
        Transform(Mat4::IDENTITY),
        Position(Vec3::X),
        Rotation(Vec3::X),
        Velocity(Vec3::X),
    )
}

/// The `i`-th entity of `random_get`: a position whose `x` is `i`, and a
/// velocity.
#[inline]
pub fn located(i: usize) -> (Position, Velocity) {
    (
        Position(Vec3 {
            x: i as f32,
            ..Vec3::X
        }),
        Velocity(Vec3::X),
    )
}

/// Entities of each fragmenting type in `frag_iter`.
pub const FRAG_PER_TYPE: usize = 20;

/// `frag_iter`'s entities of the fragmenting type `F`: `FRAG_PER_TYPE` of
/// `(F, Data)`.
pub fn frag_bundles<F: From<f32>>() -> impl Iterator<Item = (F, Data)> {
    (0..FRAG_PER_TYPE).map(|_| (F::from(0.0), Data(1.0)))
}

/// Runs `$body` once for each of the 26 fragmenting types `A..Z`, with
/// `$ty` naming the type (`for_each_frag_type!(|F| spawn(frag_bundles::<F>()))`).
#[macro_export]
macro_rules! for_each_frag_type {
    (|$ty:ident| $body:expr) => {
        $crate::for_each_frag_type!(@each $ty, $body; A B C D E F G H I J K L M N O P Q R S T U V W X Y Z)
    };
    (@each $ty:ident, $body:expr; $($name:ident)*) => {{
        $({
            type $ty = $crate::ecs::data::frag::$name;
            $body;
        })*
    }};
}

/// Runs `$body` once for each of `schedule`'s four kinds of entity, with
/// `$kind` bound to one entity of the kind: `(SA, SB)`, then with `SC`, then
/// with `SC` and `SD`, then with `SC` and `SE`.
#[macro_export]
macro_rules! for_each_schedule_kind {
    (|$kind:ident| $body:expr) => {{
        use $crate::ecs::data::{SA, SB, SC, SD, SE};
        {
            let $kind = (SA(0.0), SB(0.0));
            $body;
        }
        {
            let $kind = (SA(0.0), SB(0.0), SC(0.0));
            $body;
        }
        {
            let $kind = (SA(0.0), SB(0.0), SC(0.0), SD(0.0));
            $body;
        }
        {
            let $kind = (SA(0.0), SB(0.0), SC(0.0), SE(0.0));
            $body;
        }
    }};
}

/// `schedule`'s system body: swaps the values of two `f32` components.
#[inline(always)]
pub fn swap<X: AsMut<f32>, Y: AsMut<f32>>(x: &mut X, y: &mut Y) {
    std::mem::swap(x.as_mut(), y.as_mut());
}

/// The 26 fragmenting types of `frag_iter`.
pub mod frag {
    use super::{BevyComponent, Deserialize, Serialize, ShipyardComponent};

    // The suite's specs module keeps the fragmenting types in dense vectors.
    component! {
        specs: DenseVecStorage;
        A(f32); B(f32); C(f32); D(f32); E(f32); F(f32); G(f32); H(f32); I(f32);
        J(f32); K(f32); L(f32); M(f32); N(f32); O(f32); P(f32); Q(f32); R(f32);
        S(f32); T(f32); U(f32); V(f32); W(f32); X(f32); Y(f32); Z(f32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_a_matrix_times_the_matrix_is_the_identity() {
        let m = Mat4 {
            cols: [
                [2.0, 0.0, 1.0, 0.0],
                [0.0, 3.0, 0.0, 0.0],
                [1.0, 0.0, 1.0, 0.0],
                [4.0, 5.0, 6.0, 1.0],
            ],
        };
        let inv = m.invert().unwrap();
        for r in 0..4 {
            for c in 0..4 {
                let dot: f32 = (0..4).map(|k| m.cols[k][r] * inv.cols[c][k]).sum();
                let want = if r == c { 1.0 } else { 0.0 };
                assert!((dot - want).abs() < 1e-5, "({r},{c}): {dot}");
            }
        }
        assert_eq!(Mat4::IDENTITY.invert(), Some(Mat4::IDENTITY));
        let singular = Mat4 {
            cols: [[0.0; 4]; 4],
        };
        assert_eq!(singular.invert(), None);
    }

    #[test]
    fn heavy_keeps_an_identity_and_transforms() {
        let (mut t, mut p, _, _) = simple();
        heavy(&mut p, &mut t);
        assert_eq!(p.0, Vec3::X);
        assert_eq!(t.0, Mat4::IDENTITY);
    }
}
