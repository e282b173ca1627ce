//! The one median of the benchmarks: the middle value of an odd count, the mean of the
//! two middle values of an even count (as the plugin's `bench/` computes it in JS).

use std::time::Duration;

/// The median of `values` (0 when there are none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The median of `durations`.
pub fn median_duration(durations: &[Duration]) -> Duration {
    let seconds: Vec<f64> = durations.iter().map(Duration::as_secs_f64).collect();
    Duration::from_secs_f64(median(&seconds))
}

/// The median of `durations`, in milliseconds.
pub fn median_ms(durations: &[Duration]) -> f64 {
    median(
        &durations
            .iter()
            .map(|d| d.as_secs_f64() * 1000.0)
            .collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_even_count_takes_the_mean_of_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[5.0, 1.0, 4.0, 2.0, 3.0]), 3.0);
        assert_eq!(median(&[]), 0.0);
        let ms = |n| Duration::from_millis(n);
        assert_eq!(median_ms(&[ms(1), ms(4)]), 2.5);
        assert_eq!(median_duration(&[ms(2), ms(4), ms(9), ms(1)]), ms(3));
    }
}
