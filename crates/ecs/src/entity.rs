//! The entity handle.

use handlekit::Key;

handlekit::define_key! {
    /// A handle to an entity of a [`World`](crate::World): a 32-bit index and
    /// a 32-bit generation, from `handlekit`'s key family
    /// ([`define_key!`](handlekit::define_key)), so it is also a
    /// [`handlekit::Key`] and can key an [`IdTable`](handlekit::IdTable) or a
    /// [`SecondaryMap`](handlekit::SecondaryMap).
    ///
    /// The index names a slot of the world's entity table, not a row: rows
    /// move under [`World::collect`](crate::World::collect), handles do not.
    /// Generation 0 is never issued, so `Option<Entity>` is 8 bytes. With the
    /// `serde` feature an entity serializes as its bits.
    ///
    /// A handle never dangles: once its entity is despawned, every lookup
    /// with it fails (`None` or `Err`). A handle of another world or forged
    /// bits name whatever live entity of this world has the same index and
    /// generation, if any (as in hecs and bevy); never undefined behaviour.
    ///
    /// ```
    /// use handlekit_ecs::{Entity, World};
    ///
    /// assert_eq!(size_of::<Option<Entity>>(), 8);
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// assert_eq!((e.index(), e.generation()), (0, 1));
    /// assert_eq!(Entity::from_bits(e.to_bits()), Some(e));
    /// assert_eq!(format!("{e:?}"), "Entity(0v1)");
    /// ```
    pub struct Entity(u64; index_bits = 32);
}

impl Entity {
    /// The raw bits: the index in the low 32 bits, the generation above.
    ///
    /// ```
    /// let e = handlekit_ecs::Entity::from_bits(7 | 2 << 32).unwrap();
    /// assert_eq!(e.to_bits(), 7 | 2 << 32);
    /// ```
    #[inline]
    #[must_use]
    pub fn to_bits(self) -> u64 {
        <Self as Key>::to_bits(self)
    }

    /// The entity of these bits, or `None` if they name none (generation 0,
    /// or a generation above [`Key::MAX_GENERATION`]). Never panics.
    ///
    /// ```
    /// use handlekit_ecs::Entity;
    /// assert!(Entity::from_bits(5).is_none()); // generation 0
    /// assert_eq!(Entity::from_bits(5 | 1 << 32).unwrap().index(), 5);
    /// ```
    #[inline]
    #[must_use]
    pub fn from_bits(bits: u64) -> Option<Self> {
        <Self as Key>::from_bits(bits)
    }

    /// The slot index in the world's entity table.
    ///
    /// ```
    /// let e = handlekit_ecs::Entity::from_bits(3 | 1 << 32).unwrap();
    /// assert_eq!(e.index(), 3);
    /// ```
    #[inline]
    #[must_use]
    pub fn index(self) -> usize {
        <Self as Key>::index(self)
    }

    /// The generation: which occupant of the slot this handle names.
    ///
    /// ```
    /// let e = handlekit_ecs::Entity::from_bits(3 | 9 << 32).unwrap();
    /// assert_eq!(e.generation(), 9);
    /// ```
    #[inline]
    #[must_use]
    pub fn generation(self) -> u32 {
        <Self as Key>::generation(self)
    }
}
