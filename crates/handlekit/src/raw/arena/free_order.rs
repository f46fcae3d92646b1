//! The order of an arena's free list, read out for serialization and put
//! back, validated, after deserialization (feature `serde`). With it a
//! round-tripped table hands out exactly the keys the original would have.
//!
//! The order is the listed slots from the head (the slots the next LIFO or
//! FIFO insertions take, in that order), and, when the list ends in the
//! refill of an emptied table, where the refill goes on (`sweep`).

use alloc::vec;

use super::{BuildError, SlotArena, NO_SWEEP, SWEEP};
use crate::raw::buf::BufLayout;
use crate::raw::slot::NO_SLOT;
use crate::Reuse;

impl<T, K, L: BufLayout> SlotArena<T, K, L> {
    /// The listed free slots, from the head of the free list (the next
    /// insertion's) to its tail. Retired and detached slots are never
    /// listed; neither are the slots of a refill (see
    /// [`refill_start`](Self::refill_start)).
    pub(crate) fn free_list(&self) -> impl Iterator<Item = u32> + '_ {
        // As the next insertion sees it (an emptied table's reset applied).
        let mut cursor = self.list_ends().0;
        core::iter::from_fn(move || {
            if cursor == NO_SLOT || cursor == SWEEP {
                return None;
            }
            let index = cursor;
            cursor = self.store.slot(index as usize)?.next_free();
            Some(index)
        })
    }

    /// Where the refill of an emptied table goes on, if the free list ends
    /// in it: every slot from there on is vacant, and those that are not
    /// retired follow the listed ones, in index order.
    pub(crate) fn refill_start(&self) -> Option<u32> {
        // `sweep` is `NO_SWEEP` unless the list ends in `SWEEP`, and then at
        // most `slot_count`, which fits in a `u32`.
        let sweep = self.list_ends().1;
        (sweep != NO_SWEEP).then_some(sweep as u32)
    }

    /// Replaces the free list (rebuilt in index order by
    /// [`finish_build`](Self::finish_build)) with `list`, in that order,
    /// ending in a refill from `refill` if given. The reuse policy must be
    /// set first. Refuses (and changes nothing) unless the order is one an
    /// arena can have:
    ///
    /// - every listed index names an existing vacant slot that is not
    ///   retired (nor detached), at most once (so no cycle);
    /// - a refill starts at or below the slot count, only under LIFO reuse
    ///   (FIFO never refills), with every slot from there on vacant and
    ///   none of them listed;
    /// - every free slot (vacant, not retired) is listed or in the refill.
    pub(crate) fn restore_free_order(
        &mut self,
        list: &[u32],
        refill: Option<u32>,
    ) -> Result<(), BuildError> {
        let slots = self.store.slot_count();
        let max_generation = self.limits.max_generation;
        if list.len() > slots {
            return Err(BuildError::Layout("the free list is longer than the slots"));
        }
        let sweep = match refill {
            None => slots,
            Some(start) => {
                if matches!(self.reuse, Reuse::Fifo { .. }) {
                    return Err(BuildError::Layout(
                        "a FIFO free list cannot end in a refill",
                    ));
                }
                let start = start as usize;
                if start > slots {
                    return Err(BuildError::Layout("the refill starts past the slots"));
                }
                start
            }
        };
        // The free slots: vacant and not retired (detached slots are
        // parked at the last generation, so they count as retired).
        let is_free = |index: usize| {
            self.store
                .slot(index)
                .is_some_and(|slot| !slot.is_occupied() && slot.generation() < max_generation)
        };
        let mut in_refill = 0;
        for index in sweep..slots {
            let vacant = self
                .store
                .slot(index)
                .is_some_and(|slot| !slot.is_occupied());
            if !vacant {
                return Err(BuildError::Layout("a slot of the refill is occupied"));
            }
            in_refill += usize::from(is_free(index));
        }
        let mut seen = vec![false; sweep];
        for &index in list {
            let index = index as usize;
            if index >= sweep {
                return Err(BuildError::Layout(
                    "the free list names a slot past the slots or in the refill",
                ));
            }
            if seen[index] {
                return Err(BuildError::Layout(
                    "the free list names a slot twice (a cycle)",
                ));
            }
            seen[index] = true;
            if !is_free(index) {
                return Err(BuildError::Layout(
                    "the free list names an occupied, retired or detached slot",
                ));
            }
        }
        // `finish_build` counted the free slots: every vacant slot that is
        // not retired.
        let free = slots - self.store.len() - self.retired;
        if list.len() + in_refill != free {
            return Err(BuildError::Layout(
                "a free slot is neither on the free list nor in the refill",
            ));
        }
        // Valid: link it.
        let end = if refill.is_some() { SWEEP } else { NO_SLOT };
        for pair in list.windows(2) {
            self.set_link(pair[0] as usize, pair[1]);
        }
        if let Some(&last) = list.last() {
            self.set_link(last as usize, end);
        }
        self.free_head = list.first().copied().unwrap_or(end);
        self.sweep = if refill.is_some() { sweep } else { NO_SWEEP };
        self.free_tail = match self.reuse {
            Reuse::Fifo { .. } => list.last().copied().unwrap_or(NO_SLOT),
            Reuse::Lifo => NO_SLOT,
        };
        Ok(())
    }
}
