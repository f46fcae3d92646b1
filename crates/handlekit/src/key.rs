//! Generational keys: the [`Key`] trait, the stock keys [`Id`] and [`Id32`],
//! and the [`define_key!`](crate::define_key) macro for typed keys.
//!
//! A key packs a slot *index* into its low [`Key::INDEX_BITS`] bits and a
//! *generation* into the [`Key::GENERATION_BITS`] bits above them. A
//! generation is never zero, which gives every key type a niche:
//! `Option<Id>` is as small as `Id`.

use core::fmt::Debug;
use core::hash::Hash;
use core::marker::PhantomData;

/// The largest generation a key with `generation_bits` bits can carry.
///
/// Tables keep the occupancy of a slot in the top bit of a 32-bit state word,
/// so at most 31 bits of generation are issued even when the key has room for
/// 32. Generation 0 is never issued: it is the niche.
#[must_use]
pub const fn max_generation(generation_bits: u32) -> u32 {
    if generation_bits >= 31 {
        (1u32 << 31) - 1
    } else {
        (1u32 << generation_bits) - 1
    }
}

/// A generational key: a slot index plus a generation that tells a live key
/// from a stale one.
///
/// Keys are plain data. They can be copied, hashed, compared, stored in other
/// systems and sent across threads. A table never trusts a key: a forged,
/// stale or foreign key makes a lookup return `None` (or makes `Index` panic),
/// never undefined behaviour.
///
/// Implement this trait with [`define_key!`](crate::define_key) rather than
/// by hand; the macro checks the bit split at compile time and adds `Debug`
/// (as `Name(5v3)`, index 5 generation 3) and, with the `serde` feature,
/// serialization as the key's bits.
///
/// # Contract
///
/// A hand-written implementation must keep these rules. Breaking them makes
/// tables return wrong values (the way a bad `Hash` confuses a `HashMap`), but
/// never causes undefined behaviour: no unsafe code relies on them.
///
/// - `from_bits(b)` returns `Some(k)` only when `k.to_bits() == b`;
/// - `index()` is the low `INDEX_BITS` bits and `generation()` the
///   `GENERATION_BITS` bits above them;
/// - a valid key's generation lies in `1..=MAX_GENERATION`.
///
/// # Examples
///
/// ```
/// use handlekit::{Id, Key};
///
/// let id = Id::from_parts(5, 3).unwrap();
/// assert_eq!((id.index(), id.generation()), (5, 3));
/// assert_eq!(Id::from_bits(id.to_bits()), Some(id));
/// assert_eq!(format!("{id:?}"), "Id(5v3)");
/// // Generation 0 is the niche: it never names a key.
/// assert_eq!(Id::from_parts(5, 0), None);
/// ```
pub trait Key: Copy + Eq + Ord + Hash + Debug + Send + Sync + 'static {
    /// Bits that hold the slot index.
    const INDEX_BITS: u32;
    /// Bits that hold the generation.
    const GENERATION_BITS: u32;
    /// The largest generation a table issues for this key type.
    ///
    /// This is `2^GENERATION_BITS - 1`, capped at `2^31 - 1`. When a slot's
    /// generation reaches it, the slot is retired rather than reused.
    const MAX_GENERATION: u32 = max_generation(Self::GENERATION_BITS);

    /// Whether every value of this type has a generation below `2^31`, so
    /// a lookup may skip masking the generation's top bit. Not part of the
    /// stable API. The default, [`GenerationTrust::CHECKED`], is always
    /// sound; the other value can only be made with `unsafe` (see
    /// [`GenerationTrust::trusted`]).
    #[doc(hidden)]
    const __GENERATION_TRUST: GenerationTrust = GenerationTrust::CHECKED;

    /// Whether a key built from a table's own parts gives those parts back,
    /// so a table may use the keys it stored itself to find their slots
    /// without checking them. Not part of the stable API. The default,
    /// [`PartsTrust::CHECKED`], is always sound; every
    /// [`define_key!`](crate::define_key) type is trusted (see
    /// [`PartsTrust::trusted`]).
    #[doc(hidden)]
    const __PARTS_TRUST: PartsTrust = PartsTrust::CHECKED;

    /// Builds a key from its raw bits, or `None` if the bits do not describe
    /// a valid key (a zero or too-large generation, or bits above the key's
    /// width). Never panics.
    fn from_bits(bits: u64) -> Option<Self>;

    /// The raw bits of the key: the index in the low `INDEX_BITS` bits and
    /// the generation above them.
    fn to_bits(self) -> u64;

    /// The slot index.
    #[inline]
    fn index(self) -> usize {
        (self.to_bits() & index_mask(Self::INDEX_BITS)) as usize
    }

    /// The generation: which occupant of the slot this key names.
    #[inline]
    fn generation(self) -> u32 {
        (self.to_bits() >> Self::INDEX_BITS) as u32
    }

    /// Builds a key from parts a table issued itself, so known to be in
    /// range. Not part of the stable API: [`define_key!`](crate::define_key)
    /// implements it without re-validating; the default validates.
    ///
    /// Out-of-range parts give some key of this type (never a panic and
    /// never undefined behaviour), which then simply fails to match.
    #[doc(hidden)]
    #[inline]
    fn __from_table_parts(index: u32, generation: u32) -> Self {
        match Self::from_parts(index as usize, generation) {
            Some(key) => key,
            None => panic!("key parts out of range: index {index}, generation {generation}"),
        }
    }

    /// [`__from_table_parts`](Self::__from_table_parts) without its checks,
    /// for the keys a table issues and iterates (a table's own parts). Not
    /// part of the stable API. The default forwards to the checked one;
    /// [`define_key!`](crate::define_key) builds the key directly.
    ///
    /// # Safety
    ///
    /// `index` must fit in `INDEX_BITS` bits and `generation` must lie in
    /// `1..=max_generation(GENERATION_BITS)`.
    #[doc(hidden)]
    #[inline]
    unsafe fn __from_table_parts_unchecked(index: u32, generation: u32) -> Self {
        Self::__from_table_parts(index, generation)
    }

    /// Builds a key from an index and a generation, or `None` if either is
    /// out of range for this key type.
    #[inline]
    fn from_parts(index: usize, generation: u32) -> Option<Self> {
        let index = index as u64;
        // Check the generation before shifting it: with more than 32 index
        // bits, the shift would silently drop its high bits.
        if index > index_mask(Self::INDEX_BITS)
            || generation == 0
            || generation > max_generation(Self::GENERATION_BITS)
        {
            return None;
        }
        Self::from_bits(index | (u64::from(generation) << Self::INDEX_BITS))
    }
}

/// The mask of the low `bits` bits of a `u64`.
#[inline]
#[must_use]
pub const fn index_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// A key type's promise of kind `P`, or its absence: whether a table may
/// skip a check for it. [`GenerationTrust`] and [`PartsTrust`] are the two
/// kinds (see [`Key::__GENERATION_TRUST`] and [`Key::__PARTS_TRUST`]). The
/// promise can only be made with `unsafe` (each kind's `trusted`). Not part
/// of the stable API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trust<P>(pub(crate) bool, PhantomData<P>);

impl<P> Trust<P> {
    /// No promise: the table checks (a generation's top bit is masked; a
    /// slot a stored key names is checked before it is written), which is
    /// always sound.
    pub const CHECKED: Self = Trust(false, PhantomData);
}

/// The promise of generations below `2^31`: see [`Trust`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenerationsBelowTop {}

/// The promise that a key built from a table's parts gives them back: see
/// [`Trust`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartsKept {}

/// Whether a key type promises generations below `2^31`; see
/// [`Key::__GENERATION_TRUST`]. Not part of the stable API.
#[doc(hidden)]
pub type GenerationTrust = Trust<GenerationsBelowTop>;

/// Whether a key type gives back the parts a table built its keys from;
/// see [`Key::__PARTS_TRUST`]. Not part of the stable API.
#[doc(hidden)]
pub type PartsTrust = Trust<PartsKept>;

impl GenerationTrust {
    /// The promise that no value of the key type has a generation of
    /// `2^31` or more.
    ///
    /// # Safety
    ///
    /// Every value of the key type, however it is made (constructors,
    /// `from_bits`, `__from_table_parts`, deserialization, a struct
    /// literal), must have `generation() < 2^31`. Lookups then compare it
    /// with a slot's state word as it is, and a larger generation could
    /// match a vacant slot, whose value is not initialized.
    #[must_use]
    pub const unsafe fn trusted() -> Self {
        Trust(true, PhantomData)
    }
}

impl PartsTrust {
    /// The promise that a key built from a table's own parts names those
    /// parts.
    ///
    /// # Safety
    ///
    /// For every `index` below `2^INDEX_BITS` that fits in a `u32` and
    /// every `generation` in `1..=MAX_GENERATION`, the key `k` returned by
    /// `__from_table_parts_unchecked(index, generation)` (and by
    /// `__from_table_parts`) must have `k.index() == index as usize` and
    /// `k.generation() == generation`; and `index()` and `generation()`
    /// must depend on nothing but the key's value (every call, on every
    /// copy, gives the same answer). [`PackedTable`](crate::PackedTable)
    /// keeps such keys beside its values and repoints their slots, and
    /// reads a value at the position a slot holds, without checks: a key
    /// that named another slot would leave a slot pointing past the values.
    #[must_use]
    pub const unsafe fn trusted() -> Self {
        Trust(true, PhantomData)
    }
}

/// Validates raw key bits for a key of `total_bits` bits split at
/// `index_bits`, and returns them unchanged if they name a valid key.
///
/// Used by [`define_key!`](crate::define_key); not part of the stable API.
#[doc(hidden)]
#[inline]
#[must_use]
pub const fn validate_bits(bits: u64, total_bits: u32, index_bits: u32) -> Option<u64> {
    if total_bits < 64 && bits >> total_bits != 0 {
        return None;
    }
    let generation = bits >> index_bits;
    let max = max_generation(total_bits - index_bits) as u64;
    if generation == 0 || generation > max {
        None
    } else {
        Some(bits)
    }
}

/// Items the [`define_key!`](crate::define_key) macro expands to. Not part of
/// the stable API.
#[doc(hidden)]
pub mod __private {
    pub use super::{validate_bits, GenerationTrust, PartsTrust};
    pub use core;

    #[cfg(feature = "serde")]
    pub use serde;

    /// An integer that can back a key: `u32` or `u64`.
    pub trait KeyBacking: Copy {
        /// Width of the integer in bits.
        const BITS: u32;
        /// Widens to `u64`.
        fn widen(self) -> u64;
        /// Narrows from `u64`; the caller has checked the width.
        fn narrow(bits: u64) -> Self;
    }

    impl KeyBacking for u32 {
        const BITS: u32 = 32;
        #[inline]
        fn widen(self) -> u64 {
            u64::from(self)
        }
        #[inline]
        fn narrow(bits: u64) -> Self {
            bits as u32
        }
    }

    impl KeyBacking for u64 {
        const BITS: u32 = 64;
        #[inline]
        fn widen(self) -> u64 {
            self
        }
        #[inline]
        fn narrow(bits: u64) -> Self {
            bits
        }
    }

    /// Checks a key's bit split at compile time; see `define_key!`.
    #[must_use]
    pub const fn check_split(total_bits: u32, index_bits: u32) -> bool {
        assert!(index_bits >= 1, "a key needs at least one index bit");
        assert!(
            index_bits < total_bits,
            "a key needs at least one generation bit: index_bits must be below the backing width"
        );
        assert!(
            total_bits - index_bits <= 32,
            "a key can have at most 32 generation bits"
        );
        true
    }
}

#[cfg(feature = "serde")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_key_serde {
    ($name:ident) => {
        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
            where
                S: $crate::__private::serde::Serializer,
            {
                serializer.serialize_u64($crate::Key::to_bits(*self))
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D>(deserializer: D) -> ::core::result::Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                let bits: u64 = $crate::__private::serde::Deserialize::deserialize(deserializer)?;
                <$name as $crate::Key>::from_bits(bits).ok_or_else(|| {
                    <D::Error as $crate::__private::serde::de::Error>::custom(::core::concat!(
                        "invalid bits for key type ",
                        ::core::stringify!($name)
                    ))
                })
            }
        }
    };
}

#[cfg(not(feature = "serde"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_key_serde {
    ($name:ident) => {};
}

/// Defines a typed generational key with a chosen backing integer and index
/// width.
///
/// The backing is `u32` or `u64`. The index takes the low `index_bits` bits
/// and the generation the rest. Keys of different types do not mix: a table
/// typed with one key type rejects every other at compile time.
///
/// A key written `(u64; index_bits = 32)` is stored as two `u32` fields, the
/// index and the generation, rather than one `u64` (its alignment is 4), so
/// a table reads each part of a key with one load; its bits, `Ord`, `Hash`
/// and niche are those of the `u64`. Write the split as the literal `32`
/// to get this layout.
///
/// # Examples
///
/// ```
/// use handlekit::{IdTable, Key};
///
/// handlekit::define_key! {
///     /// Handle to an enemy.
///     pub struct EnemyId(u32; index_bits = 20);
/// }
///
/// assert_eq!(EnemyId::INDEX_BITS, 20);
/// assert_eq!(EnemyId::GENERATION_BITS, 12);
/// assert_eq!(core::mem::size_of::<Option<EnemyId>>(), 4);
///
/// let mut enemies: IdTable<&str, EnemyId> = IdTable::default();
/// let orc = enemies.insert("orc");
/// assert_eq!(enemies[orc], "orc");
/// assert_eq!(format!("{orc:?}"), "EnemyId(0v1)");
/// ```
///
/// An impossible split does not compile: no generation bits,
///
/// ```compile_fail
/// handlekit::define_key! { pub struct NoGeneration(u32; index_bits = 32); }
/// ```
///
/// more index bits than the backing holds,
///
/// ```compile_fail
/// handlekit::define_key! { pub struct TooWide(u32; index_bits = 40); }
/// ```
///
/// more than 32 generation bits,
///
/// ```compile_fail
/// handlekit::define_key! { pub struct TooManyGenerations(u64; index_bits = 16); }
/// ```
///
/// or a backing other than `u32` and `u64`:
///
/// ```compile_fail
/// handlekit::define_key! { pub struct Small(u16; index_bits = 8); }
/// ```
///
/// Keys of different types do not mix:
///
/// ```compile_fail
/// handlekit::define_key! { pub struct EnemyId(u32; index_bits = 20); }
/// let mut enemies: handlekit::IdTable<u8, EnemyId> = handlekit::IdTable::default();
/// let id: handlekit::Id = handlekit::IdTable::<u8>::new().insert(1);
/// enemies.get(id);
/// ```
#[macro_export]
macro_rules! define_key {
    ($(
        $(#[$meta:meta])*
        $vis:vis struct $name:ident($backing:ident; index_bits = $($index_bits:tt)+);
    )+) => {$(
        // The split stays a token tree, so the arms below can match a
        // literal `u64; index_bits = 32`.
        $crate::define_key! {
            @trust = $crate::__private::GenerationTrust::CHECKED;
            $(#[$meta])*
            $vis struct $name($backing; index_bits = $($index_bits)+);
        }
    )+};
    (
        @trust = $trust:expr;
        $(#[$meta:meta])*
        $vis:vis struct $name:ident(u64; index_bits = 32);
    ) => {
        // A 64-bit key split in the middle is kept as its two halves, so a
        // table reads the index and the generation of a key in memory with
        // one 32-bit load each, where one 64-bit load would need a move and
        // a shift to split it (a lookup is a dozen instructions, so this is
        // a tenth of one). Its bits, order, hash and niche are those of the
        // `u64` it stands for.
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq)]
        #[repr(C)]
        $vis struct $name {
            index: u32,
            generation: $crate::__private::core::num::NonZero<u32>,
        }

        impl $crate::Key for $name {
            const INDEX_BITS: u32 = 32;
            const GENERATION_BITS: u32 = 32;
            const __GENERATION_TRUST: $crate::__private::GenerationTrust = $trust;
            const __PARTS_TRUST: $crate::__private::PartsTrust = {
                // The macro writes every method that makes or reads a key:
                // `__from_table_parts(_unchecked)` store the two parts in
                // their own fields, which `index()` and `generation()` read
                // back, for any parts in range, from the key's value alone.
                // SAFETY: so a key built from a table's parts gives them back.
                unsafe { $crate::__private::PartsTrust::trusted() }
            };

            #[inline]
            fn from_bits(bits: u64) -> ::core::option::Option<Self> {
                let bits = $crate::__private::validate_bits(bits, 64, 32)?;
                ::core::option::Option::Some($name {
                    index: bits as u32,
                    generation: $crate::__private::core::num::NonZero::<u32>::new(
                        (bits >> 32) as u32,
                    )?,
                })
            }

            #[inline]
            fn to_bits(self) -> u64 {
                (u64::from(self.generation.get()) << 32) | u64::from(self.index)
            }

            #[inline]
            fn index(self) -> usize {
                self.index as usize
            }

            #[inline]
            fn generation(self) -> u32 {
                self.generation.get()
            }

            #[inline]
            fn __from_table_parts(index: u32, generation: u32) -> Self {
                // Tables issue generations below 2^31; cutting the top bit
                // off keeps that true of every key this makes, whatever it
                // is given (a trusted key type promises it). Tables issue
                // generations from 1, so the fallback only keeps this free
                // of panics and `unsafe`.
                $name {
                    index,
                    generation: $crate::__private::core::num::NonZero::<u32>::new(
                        generation & !(1 << 31),
                    )
                    .unwrap_or($crate::__private::core::num::NonZero::<u32>::MIN),
                }
            }

            #[inline]
            unsafe fn __from_table_parts_unchecked(index: u32, generation: u32) -> Self {
                ::core::debug_assert!(
                    <Self as $crate::Key>::from_parts(index as usize, generation).is_some()
                );
                // The caller's generation is at least 1, and the raw layer
                // tells the optimizer so (`table_key`): the fallback folds
                // away, and no `unsafe` is needed here.
                $name {
                    index,
                    generation: $crate::__private::core::num::NonZero::<u32>::new(generation)
                        .unwrap_or($crate::__private::core::num::NonZero::<u32>::MIN),
                }
            }
        }

        impl ::core::cmp::PartialOrd for $name {
            #[inline]
            fn partial_cmp(&self, other: &Self) -> ::core::option::Option<::core::cmp::Ordering> {
                ::core::option::Option::Some(::core::cmp::Ord::cmp(self, other))
            }
        }

        /// Ordered as the key's bits: by generation, then by index.
        impl ::core::cmp::Ord for $name {
            #[inline]
            fn cmp(&self, other: &Self) -> ::core::cmp::Ordering {
                ::core::cmp::Ord::cmp(
                    &$crate::Key::to_bits(*self),
                    &$crate::Key::to_bits(*other),
                )
            }
        }

        /// Hashed as the key's bits, one `u64`.
        impl ::core::hash::Hash for $name {
            #[inline]
            fn hash<H: ::core::hash::Hasher>(&self, state: &mut H) {
                ::core::hash::Hash::hash(&$crate::Key::to_bits(*self), state);
            }
        }

        $crate::define_key!(@shared $name);
    };
    (@shared $name:ident) => {
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                ::core::write!(
                    f,
                    "{}({}v{})",
                    ::core::stringify!($name),
                    $crate::Key::index(*self),
                    $crate::Key::generation(*self),
                )
            }
        }

        $crate::__impl_key_serde!($name);
    };
    (
        @trust = $trust:expr;
        $(#[$meta:meta])*
        $vis:vis struct $name:ident($backing:ident; index_bits = $index_bits:expr);
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        $vis struct $name($crate::__private::core::num::NonZero<$backing>);

        const _: () = {
            ::core::assert!($crate::__private::check_split(
                <$backing as $crate::__private::KeyBacking>::BITS,
                $index_bits,
            ));
        };

        impl $crate::Key for $name {
            const INDEX_BITS: u32 = $index_bits;
            const GENERATION_BITS: u32 =
                <$backing as $crate::__private::KeyBacking>::BITS - $index_bits;
            const __GENERATION_TRUST: $crate::__private::GenerationTrust = $trust;
            const __PARTS_TRUST: $crate::__private::PartsTrust = {
                // The macro writes every method that makes or reads a key:
                // `__from_table_parts(_unchecked)` put the generation above
                // `$index_bits` bits of index, which the default `index()`
                // and `generation()` split apart again, for any parts in
                // range, from the key's bits alone.
                // SAFETY: so a key built from a table's parts gives them back.
                unsafe { $crate::__private::PartsTrust::trusted() }
            };

            #[inline]
            fn from_bits(bits: u64) -> ::core::option::Option<Self> {
                match $crate::__private::validate_bits(
                    bits,
                    <$backing as $crate::__private::KeyBacking>::BITS,
                    $index_bits,
                ) {
                    ::core::option::Option::Some(bits) => {
                        let narrow =
                            <$backing as $crate::__private::KeyBacking>::narrow(bits);
                        $crate::__private::core::num::NonZero::<$backing>::new(narrow).map($name)
                    }
                    ::core::option::Option::None => ::core::option::Option::None,
                }
            }

            #[inline]
            fn __from_table_parts(index: u32, generation: u32) -> Self {
                // Tables issue generations below 2^31; cutting the top bit
                // off keeps that true of every key this makes, whatever it
                // is given (a trusted key type promises it).
                let generation = generation & !(1 << 31);
                let bits = (u64::from(generation) << $index_bits) | u64::from(index);
                let narrow = <$backing as $crate::__private::KeyBacking>::narrow(bits);
                // Tables issue generations from 1, so `narrow` is never 0;
                // the fallback only keeps this free of panics and `unsafe`.
                $name(
                    $crate::__private::core::num::NonZero::<$backing>::new(narrow)
                        .unwrap_or($crate::__private::core::num::NonZero::<$backing>::MIN),
                )
            }

            #[inline]
            unsafe fn __from_table_parts_unchecked(index: u32, generation: u32) -> Self {
                ::core::debug_assert!(
                    <Self as $crate::Key>::from_parts(index as usize, generation).is_some()
                );
                let bits = (u64::from(generation) << $index_bits) | u64::from(index);
                let narrow = <$backing as $crate::__private::KeyBacking>::narrow(bits);
                // The generation survives the narrowing, since it fits.
                // SAFETY: the caller's generation is at least 1 and fits.
                $name(unsafe { $crate::__private::core::num::NonZero::<$backing>::new_unchecked(narrow) })
            }

            #[inline]
            fn to_bits(self) -> u64 {
                <$backing as $crate::__private::KeyBacking>::widen(self.0.get())
            }
        }

        $crate::define_key!(@shared $name);
    };
}

crate::define_key! {
    // The field of this type is private to this module, which makes no
    // value of it by a struct literal; `from_bits` (and through it
    // `from_parts` and deserialization) refuses generations above
    // `max_generation(32) = 2^31 - 1`, and `__from_table_parts` cuts the
    // top bit off.
    // SAFETY: so every value has a generation below 2^31.
    @trust = unsafe { GenerationTrust::trusted() };
    /// The default 64-bit key: a 32-bit index and a 32-bit generation field.
    ///
    /// Tables issue generations `1..=2^31 - 1` for it (see
    /// [`Key::MAX_GENERATION`]): a slot can be reused two billion times
    /// before it retires. `Option<Id>` is 8 bytes.
    ///
    /// ```
    /// use handlekit::{Id, IdTable, Key};
    /// assert_eq!(core::mem::size_of::<Option<Id>>(), 8);
    /// let mut table = IdTable::new();
    /// let id: Id = table.insert("x");
    /// assert_eq!((id.index(), id.generation()), (0, 1));
    /// ```
    pub struct Id(u64; index_bits = 32);
}

crate::define_key! {
    /// A compact 32-bit key: a 20-bit index (about a million slots) and a
    /// 12-bit generation (4095 reuses of a slot before it retires).
    ///
    /// Use it with [`Reuse::Fifo`](crate::Reuse::Fifo) to spread reuse over
    /// many slots. `Option<Id32>` is 4 bytes.
    ///
    /// ```
    /// use handlekit::{Id32, IdTable, Key};
    /// assert_eq!(core::mem::size_of::<Option<Id32>>(), 4);
    /// assert_eq!(Id32::MAX_GENERATION, 4095);
    /// let mut table: IdTable<u8, Id32> = IdTable::default();
    /// let id = table.insert(7);
    /// assert_eq!(table[id], 7);
    /// ```
    pub struct Id32(u32; index_bits = 20);
}

crate::define_key! {
    // The field of this type is private to this module, which makes no
    // value of it by a struct literal; `from_bits` (and through it
    // `from_parts` and deserialization) refuses generations above
    // `max_generation(32) = 2^31 - 1`, and `__from_table_parts` cuts the
    // top bit off.
    // SAFETY: so every value has a generation below 2^31.
    @trust = unsafe { GenerationTrust::trusted() };
    /// The key of a [`Pool`](crate::Pool): a 32-bit flat slot index (block
    /// number and offset) and a 32-bit generation field, like [`Id`], but a
    /// type of its own so pool keys and table keys do not mix.
    ///
    /// ```
    /// use handlekit::{Key, Pool, PoolKey};
    /// assert_eq!(core::mem::size_of::<Option<PoolKey>>(), 8);
    /// let mut pool = Pool::new();
    /// let key: PoolKey = pool.insert("x");
    /// assert_eq!((key.index(), key.generation()), (0, 1));
    /// ```
    pub struct PoolKey(u64; index_bits = 32);
}
