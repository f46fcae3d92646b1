//! What the table targets share: their input (a header from the first bytes,
//! then the operations from the rest) and the narrow key type.

// Not every target uses every item.
#![allow(dead_code)]

use arbitrary::{Arbitrary, Unstructured};

handlekit::define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    pub struct Narrow(u32; index_bits = 28);
}

/// A 12-byte value, loaded from a container's own serde form of `Box<u32>`
/// values (each a `u32`), so that a walk also runs over slots whose size
/// the address modes do not scale: there the iterators with keys step
/// each slot's value pointer beside its index, where over `Box<u32>` they
/// do not.
#[derive(serde::Deserialize)]
#[serde(from = "u32")]
pub struct Wide(pub [u32; 3]);

impl From<u32> for Wide {
    fn from(value: u32) -> Self {
        Wide([value, !value, 7])
    }
}

/// `container` loaded again through its JSON form as another type: the
/// same slots, holes and generations with [`Wide`] values.
pub fn reload<C: serde::Serialize, D: serde::de::DeserializeOwned>(container: &C) -> D {
    let json = serde_json::to_string(container).expect("serialize");
    serde_json::from_str(&json).expect("load as 12-byte values")
}

/// A fuzz input: `head` (the key type, the container's setup: a tuple of
/// them, or a type of the target's own) is decoded first, then every byte
/// left goes to the operations.
#[derive(Debug)]
pub struct Input<H, Op> {
    pub head: H,
    pub ops: Vec<Op>,
}

impl<'a, H: Arbitrary<'a>, Op: Arbitrary<'a>> Arbitrary<'a> for Input<H, Op> {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            head: H::arbitrary(u)?,
            ops: Vec::arbitrary(u)?,
        })
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            head: H::arbitrary(&mut u)?,
            ops: Vec::arbitrary_take_rest(u)?,
        })
    }
}

/// `$run::<T>(args…)` with the type `T` that `$byte` picks (mod 3) among
/// the three named: how a target draws its key or element type from the
/// input's first byte. (A macro: a closure cannot be generic over `T`.)
#[allow(unused_macros)]
macro_rules! run_with_type_picked {
    ($byte:expr, [$a:ty, $b:ty, $c:ty], $run:ident($($arg:expr),* $(,)?)) => {
        match $byte % 3 {
            0 => $run::<$a>($($arg),*),
            1 => $run::<$b>($($arg),*),
            _ => $run::<$c>($($arg),*),
        }
    };
}
#[allow(unused_imports)]
pub(crate) use run_with_type_picked;

/// The `n`th (mod the count) of `keys` in sorted order, so the pick does
/// not depend on a hash map's iteration order; `None` when there are none.
pub fn nth_sorted<K: Ord + Copy>(keys: impl IntoIterator<Item = K>, n: u16) -> Option<K> {
    let mut keys: Vec<K> = keys.into_iter().collect();
    keys.sort();
    (!keys.is_empty()).then(|| keys[usize::from(n) % keys.len()])
}

/// `try_insert_with_key`, called by `insert`, with a closure that fails
/// (handing its key back) when `fail` is set and else makes `value(key)`.
/// Checks that the outcome follows `fail` and that the closure saw the key
/// the call returned.
pub fn try_insert_with_key<K: Copy + PartialEq + std::fmt::Debug, V>(
    insert: impl FnOnce(&mut dyn FnMut(K) -> Result<V, K>) -> Result<K, K>,
    fail: bool,
    value: impl Fn(K) -> V,
) -> Result<K, K> {
    let mut seen = None;
    let result = insert(&mut |key| {
        seen = Some(key);
        if fail {
            Err(key)
        } else {
            Ok(value(key))
        }
    });
    assert_eq!(result.is_err(), fail, "try_insert_with_key: {result:?}");
    let (Ok(key) | Err(key)) = result;
    assert_eq!(seen, Some(key), "try_insert_with_key saw another key");
    result
}
