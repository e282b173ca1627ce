//! How a byte count is shown to people ([`format_bytes`]): in the installer's messages and
//! in an install's progress.

/// A byte count for people: `512 B`, `1.5 KiB`, `318.3 MiB`, `1.6 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // Exact enough for a display: f64 holds every byte count below 2^53 exactly.
    let mut value = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    format!("{value:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_read_as_people_write_them() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        // The pinned archive, and five times it.
        assert_eq!(format_bytes(333_727_150), "318.3 MiB");
        assert_eq!(format_bytes(5 * 333_727_150), "1.6 GiB");
    }
}
