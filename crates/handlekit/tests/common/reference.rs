//! The reference free list the stale-key tests predict keys with: which
//! `(index, generation)` the next insertion gets under each reuse policy.

use std::collections::VecDeque;

use handlekit::Reuse;

/// The documented free-list semantics, written as plainly as possible:
/// LIFO reuses the most recently freed slot; FIFO the least recently freed
/// one, but only while more than `min_free` are free or the table cannot
/// grow; a slot whose generation reached the maximum retires on removal;
/// `clear` frees every slot, retiring the exhausted ones, and lists the
/// free ones in index order (lowest first); and an insertion into an empty
/// LIFO table takes the free slots in index order too.
pub struct Reference {
    generations: Vec<u32>,
    /// Free slots; LIFO takes from the back, FIFO from the front, both
    /// put freed slots at the back.
    free: VecDeque<usize>,
    pub retired: usize,
    slot_limit: usize,
    max_generation: u32,
    reuse: Reuse,
}

impl Reference {
    pub fn new(reuse: Reuse, slot_limit: usize, max_generation: u32) -> Self {
        Reference {
            generations: Vec::new(),
            free: VecDeque::new(),
            retired: 0,
            slot_limit,
            max_generation,
            reuse,
        }
    }

    /// The `(index, generation)` the next insertion gets, if any.
    pub fn insert(&mut self) -> Option<(usize, u32)> {
        let live = self.generations.len() - self.free.len() - self.retired;
        if matches!(self.reuse, Reuse::Lifo) && live == 0 {
            self.order_free_list();
        }
        let can_grow = self.generations.len() < self.slot_limit;
        let reuse = match self.reuse {
            Reuse::Lifo => self.free.pop_back(),
            Reuse::Fifo { min_free } if self.free.len() > min_free as usize || !can_grow => {
                self.free.pop_front()
            }
            Reuse::Fifo { .. } => None,
        };
        if let Some(index) = reuse {
            self.generations[index] += 1;
            Some((index, self.generations[index]))
        } else if can_grow {
            self.generations.push(1);
            Some((self.generations.len() - 1, 1))
        } else {
            None
        }
    }

    pub fn remove(&mut self, index: usize) {
        if self.generations[index] >= self.max_generation {
            self.retired += 1;
        } else {
            self.free.push_back(index);
        }
    }

    /// `remove` by key: the same as `remove` (an emptied LIFO table's
    /// refill in index order is the next insertion's business).
    pub fn remove_key(&mut self, index: usize) {
        self.remove(index);
    }

    /// `clear` with the given live indices.
    pub fn clear(&mut self, live: impl IntoIterator<Item = usize>) {
        for index in live {
            self.remove(index);
        }
        self.order_free_list();
    }

    /// Puts the free list in index order, as the table's rebuild does.
    pub fn order_free_list(&mut self) {
        let mut free: Vec<usize> = (0..self.generations.len())
            .filter(|&i| self.generations[i] < self.max_generation)
            .collect();
        if matches!(self.reuse, Reuse::Lifo) {
            // The lowest index is taken first: it goes at the back.
            free.reverse();
        }
        self.free = free.into();
    }
}
