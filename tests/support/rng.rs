//! A seeded generator for the fuzz and stress tests: included with `#[path]` by
//! `tests/support/stress.rs` and by the extractor fuzz harness (`src/index/extract_fuzz.rs`).
#![allow(dead_code)]

/// SplitMix64: a tiny, seeded, reproducible generator (no `rand` crate in this project).
pub struct Rng(u64);

impl Rng {
    /// A generator that yields the same sequence for the same seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// `len` random bytes, none of them a newline (a newline would end the frame).
    pub fn bytes_without_newline(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| match self.below(256) as u8 {
                b'\n' => b' ',
                b => b,
            })
            .collect()
    }
}
