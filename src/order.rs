//! One stable sort for the whole program (the binary size budget, docs/ARCHITECTURE.md §7).
//!
//! `slice::sort_by` monomorphises a complete sorting algorithm for every element type and
//! comparator; with dozens of call sites that is well over 100 KB of machine code. Here the only
//! instance of the standard sort orders a permutation of `usize` indices through a `dyn`
//! comparator, and each call site adds just a small generic shim that applies the permutation
//! with swaps. The lists sorted this way are short (tool output rows, config entries), so the
//! indirect comparator call costs nothing that matters.
//!
//! Every function is stable, like `slice::sort_by`: equal elements keep their order.
//!
//! [`set_of`] builds a `BTreeSet` without the sort that `collect()` runs.

use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Sorts `items` in place by `compare`, stably.
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let order = sorted_positions(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    permute(items, order);
}

/// Sorts `items` in place by the key `key` extracts, stably; `key` runs on every comparison.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in place by their natural order, stably.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// Sorts `items` in place by the key `key` extracts, computing each key once (for keys that
/// allocate or are costly to build), stably.
pub fn sort_by_cached_key<T, K: Ord>(items: &mut [T], key: impl FnMut(&T) -> K) {
    if items.len() < 2 {
        return;
    }
    let keys: Vec<K> = items.iter().map(key).collect();
    let order = sorted_positions(items.len(), &mut |a, b| keys[a].cmp(&keys[b]));
    permute(items, order);
}

/// The positions `0..len` in the order `compare` puts them, stably: the one instance of the
/// standard library's sort in this crate's own code.
fn sorted_positions(len: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut positions: Vec<usize> = (0..len).collect();
    positions.sort_by(|&a, &b| compare(a, b));
    positions
}

/// Rearranges `items` so that the new `items[k]` is the old `items[order[k]]`, following each
/// cycle of the permutation with swaps; `order` is used up as the "done" marks.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..items.len() {
        let mut at = start;
        while order[at] != start {
            let from = order[at];
            items.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
}

/// The set of `items`, built by inserting them one at a time. `collect()` into a `BTreeSet`
/// sorts a temporary `Vec` first, which is one more instance of the standard sort for every
/// element type; inserting gives the same set (equal elements here are identical values)
/// without it.
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_stable_sort() {
        // Pseudo-random pairs with many equal keys, so stability is exercised.
        let mut seed = 12345u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) % 17
        };
        for len in [0usize, 1, 2, 3, 7, 31, 200] {
            let items: Vec<(u32, usize)> = (0..len).map(|i| (next(), i)).collect();
            let mut ours = items.clone();
            let mut std_sorted = items.clone();
            sort_by_key(&mut ours, |p| p.0);
            std_sorted.sort_by_key(|p| p.0);
            assert_eq!(ours, std_sorted, "len {len}");

            let mut cached = items.clone();
            let mut std_cached = items.clone();
            sort_by_cached_key(&mut cached, |p| std::cmp::Reverse(p.0));
            std_cached.sort_by_cached_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(cached, std_cached, "len {len}");

            let mut natural = items.clone();
            let mut std_natural = items;
            sort(&mut natural);
            std_natural.sort();
            assert_eq!(natural, std_natural, "len {len}");
        }
    }

    #[test]
    fn sorts_owned_strings() {
        let mut names: Vec<String> = ["b", "a", "c", "a"].iter().map(|s| s.to_string()).collect();
        sort_by(&mut names, |a, b| b.cmp(a));
        assert_eq!(names, ["c", "b", "a", "a"]);
    }
}
