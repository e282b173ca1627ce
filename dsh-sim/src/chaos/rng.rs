//! The chaos runner's pseudo-random numbers: SplitMix64 (Steele, Lea and Flood, 2014; the
//! seeding generator of `java.util.SplittableRandom` and of xoshiro), written here so a
//! seed picks the same runs whatever crate versions the workspace resolves. Not for
//! anything secret.

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment, output mixed.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// 2^64 / φ, the increment.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The generator of run `index` of the chaos run seeded `seed`: independent of how
    /// many numbers the other runs drew, so `--run K` replays run K alone.
    pub fn for_run(seed: u64, index: u64) -> Self {
        let mut mixer = Self::new(seed ^ index.wrapping_mul(GOLDEN).rotate_left(17));
        Self::new(mixer.next_u64())
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0); the modulo bias is negligible for the
    /// small bounds chaos uses.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        self.next_u64() % bound
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low) + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_sequence_of_seed_zero() {
        // The first outputs of SplitMix64 seeded 0, as published with the algorithm.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn a_run_draws_the_same_numbers_whatever_ran_before() {
        let mut a = SplitMix64::for_run(7, 42);
        let mut b = SplitMix64::for_run(7, 42);
        assert_eq!(a.next_u64(), b.next_u64());
        assert_ne!(
            SplitMix64::for_run(7, 42).next_u64(),
            SplitMix64::for_run(7, 43).next_u64()
        );
    }
}
