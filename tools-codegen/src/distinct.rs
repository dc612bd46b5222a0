//! Dropping repeats in work linear in the input.
//!
//! The renderers drop repeated `oneOf` alternatives, `enum` members, `required` names and union
//! members whose text repeats, and a catalog controls how many there are. Comparing each with
//! every earlier one made that work grow with the square of the count (40,000 alternatives took
//! 800 million comparisons), so repeats are found through a hash of each item, and items are
//! compared only when their hashes match. The hasher is std's `RandomState`, keyed afresh per
//! set, so a catalog cannot choose items that all collide; what is kept (the first of equal
//! items, in order) never depends on the hash.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash};
use std::ops::Range;

/// Lists this short are scanned: hashing costs more than the few comparisons.
const SCAN: usize = 8;

/// An item compared (and, in tests, counted: see [`work`]) by its own equality and hashed by
/// its own hash.
#[derive(Clone, Copy)]
struct Counted<T>(T);

impl<T: PartialEq> PartialEq for Counted<T> {
    fn eq(&self, other: &Self) -> bool {
        #[cfg(test)]
        work::step();
        self.0 == other.0
    }
}

impl<T: Eq> Eq for Counted<T> {}

impl<T: Hash> Hash for Counted<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

/// Keeps the first of each set of equal items of `items`, in order.
pub(crate) fn retain_first<T: Hash + Eq>(items: &mut Vec<T>) {
    let keep: Vec<bool> = if items.len() <= SCAN {
        let mut kept: Vec<Counted<&T>> = Vec::with_capacity(items.len());
        items
            .iter()
            .map(|item| {
                let item = Counted(item);
                let new = !kept.contains(&item);
                if new {
                    kept.push(item);
                }
                new
            })
            .collect()
    } else {
        let mut seen = HashSet::with_capacity(items.len());
        items
            .iter()
            .map(|item| seen.insert(Counted(item)))
            .collect()
    };
    let mut keep = keep.into_iter();
    items.retain(|_| keep.next().unwrap_or(true));
}

/// A set of names (`required` names, property keys) looked up in constant work each.
pub(crate) struct NameSet<'a>(HashSet<Counted<&'a str>>);

impl<'a> NameSet<'a> {
    /// The set of `names`.
    pub(crate) fn new(names: impl IntoIterator<Item = &'a str>) -> Self {
        NameSet(names.into_iter().map(Counted).collect())
    }

    /// True when `name` is in the set.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.contains(&Counted(name))
    }
}

/// The pieces of one text that grows as it is written (union members written in place), to
/// tell whether a new piece repeats an earlier one.
#[derive(Default)]
pub(crate) struct TextPieces {
    /// The ranges of the pieces kept so far, while they are few.
    few: Vec<Range<usize>>,
    /// Past [`SCAN`] pieces: all of them, by the hash of their text.
    by_hash: Option<ByHash>,
}

/// Ranges of a text by the hash of the text in them.
struct ByHash {
    hasher: RandomState,
    ranges: HashMap<u64, Vec<Range<usize>>>,
}

impl TextPieces {
    /// True, and remembered, when `text[piece]` differs from every piece remembered before;
    /// false when it repeats one. Every piece must be a range of the same text, which only
    /// grows: a piece that is not a range of it is treated as new and not remembered.
    pub(crate) fn insert(&mut self, text: &str, piece: Range<usize>) -> bool {
        let Some(new) = text.get(piece.clone()) else {
            return true;
        };
        let repeats = |ranges: &[Range<usize>]| {
            ranges
                .iter()
                .any(|r| text.get(r.clone()).is_some_and(|old| same_text(old, new)))
        };
        if self.by_hash.is_none() {
            if repeats(&self.few) {
                return false;
            }
            if self.few.len() < SCAN {
                self.few.push(piece);
                return true;
            }
            let hasher = RandomState::new();
            let mut ranges: HashMap<u64, Vec<Range<usize>>> = HashMap::new();
            for r in self.few.drain(..) {
                if let Some(old) = text.get(r.clone()) {
                    ranges.entry(hasher.hash_one(old)).or_default().push(r);
                }
            }
            self.by_hash = Some(ByHash { hasher, ranges });
        }
        let Some(ByHash { hasher, ranges }) = &mut self.by_hash else {
            return true;
        };
        let ranges = ranges.entry(hasher.hash_one(new)).or_default();
        if repeats(ranges) {
            return false;
        }
        ranges.push(piece);
        true
    }
}

/// `a == b`, counted in tests (see [`work`]).
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    #[cfg(test)]
    work::step();
    a == b
}

/// The steps of work the current thread made where a catalog controls how many there are:
/// comparisons of items and names, names tried ([`crate::py`]). The tests bound them.
#[cfg(test)]
pub(crate) mod work {
    use std::cell::Cell;

    thread_local! {
        static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    /// One more step.
    pub(crate) fn step() {
        STEPS.with(|c| c.set(c.get() + 1));
    }

    /// The steps since the last call, and starts counting again.
    pub(crate) fn take() -> u64 {
        STEPS.with(|c| c.replace(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_equal_items_is_kept_in_order_with_few_comparisons() {
        for n in [0, 1, 5, SCAN, SCAN + 1, 1000] {
            let mut items: Vec<usize> = (0..n).map(|i| (i * 7) % 5).collect();
            let mut expected: Vec<usize> = Vec::new();
            for item in &items {
                if !expected.contains(item) {
                    expected.push(*item);
                }
            }
            retain_first(&mut items);
            assert_eq!(items, expected, "{n} items");
        }
        let mut items: Vec<String> = (0..20_000)
            .map(|i| format!("item {}", i % 10_000))
            .collect();
        work::take();
        retain_first(&mut items);
        assert_eq!(items.len(), 10_000);
        // One comparison per repeat (with the item it repeats), about none for new items.
        let made = work::take();
        assert!(made < 11_000, "{made} comparisons");
        let set = NameSet::new(items.iter().map(String::as_str));
        assert!(items.iter().all(|item| set.contains(item)));
        assert!(!set.contains("item 10000"));
        let made = work::take();
        assert!(made < 11_000, "{made} comparisons");
    }

    #[test]
    fn text_pieces_tell_repeats_with_few_comparisons() {
        let mut text = String::new();
        let mut pieces = TextPieces::default();
        let mut kept = 0;
        work::take();
        for i in 0..20_000 {
            let start = text.len();
            text.push_str(&format!("member {}", i % 10_000));
            if pieces.insert(&text, start..text.len()) {
                kept += 1;
            } else {
                text.truncate(start);
            }
        }
        assert_eq!(kept, 10_000);
        // One comparison per repeat (with the piece it repeats), about none for new pieces.
        let made = work::take();
        assert!(made < 11_000, "{made} comparisons");
    }
}
