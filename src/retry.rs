//! When and how long to wait before sending a request again.
//!
//! Pure policy: the caller supplies the attempt number and a random number,
//! and owns the clock. Exponential backoff with jitter, as openai-node and
//! the Anthropic SDK do: 0.5 s doubling to at most 8 s, minus up to 25 %
//! jitter; a provider's `retry-after` (up to 60 s) wins over the backoff.

/// The retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (2 by default).
    pub max_retries: u32,
    /// The first backoff delay, in milliseconds.
    pub initial_delay_ms: u64,
    /// The longest backoff delay, in milliseconds.
    pub max_delay_ms: u64,
    /// The longest `retry-after` honoured; a longer one falls back to the
    /// backoff delay.
    pub max_retry_after_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_delay_ms: 500,
            max_delay_ms: 8_000,
            max_retry_after_ms: 60_000,
        }
    }
}

/// The next number of a splitmix64 sequence in `state`, uniform in
/// `[0, 1)`: the backoff's jitter, seeded by the driver.
pub(crate) fn next_random(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

impl RetryPolicy {
    /// The delay before retry number `retries_done + 1` of a request that
    /// failed retryably, or `None` when no retry is left. `retry_after_ms` is
    /// the provider's requested delay, if any; `random` is uniform in
    /// `[0, 1)`.
    pub fn delay_ms(
        &self,
        retries_done: u32,
        retry_after_ms: Option<u64>,
        random: f64,
    ) -> Option<u64> {
        if retries_done >= self.max_retries {
            return None;
        }
        if let Some(ms) = retry_after_ms.filter(|&ms| ms <= self.max_retry_after_ms) {
            return Some(ms);
        }
        let exp = self
            .initial_delay_ms
            .saturating_mul(1u64 << retries_done.min(20))
            .min(self.max_delay_ms);
        let random = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let jitter = 1.0 - 0.25 * random;
        Some((exp as f64 * jitter) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter_below() {
        let p = RetryPolicy {
            max_retries: 10,
            ..RetryPolicy::default()
        };
        assert_eq!(p.delay_ms(0, None, 0.0), Some(500));
        assert_eq!(p.delay_ms(1, None, 0.0), Some(1_000));
        assert_eq!(p.delay_ms(5, None, 0.0), Some(8_000));
        assert_eq!(p.delay_ms(2, None, 1.0), Some(1_500));
        assert_eq!(p.delay_ms(9, None, f64::NAN), Some(8_000));
    }

    #[test]
    fn retry_after_wins_up_to_sixty_seconds() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay_ms(0, Some(1_234), 0.5), Some(1_234));
        assert_eq!(p.delay_ms(0, Some(0), 0.5), Some(0));
        assert_eq!(p.delay_ms(0, Some(120_000), 0.0), Some(500));
    }

    #[test]
    fn no_retry_is_left_after_max_retries() {
        let p = RetryPolicy::default();
        assert!(p.delay_ms(1, None, 0.0).is_some());
        assert_eq!(p.delay_ms(2, None, 0.0), None);
        let none = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        assert_eq!(none.delay_ms(0, Some(10), 0.0), None);
    }
}
