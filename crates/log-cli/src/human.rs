//! Sizes and times as people read them, for text output only (JSON keeps raw numbers): sizes in
//! binary units (`1.5 MiB`), times as ISO-8601 in UTC (`2026-12-01T18:07:44.123Z`).

/// `bytes` in the largest binary unit it fills, one decimal past bytes: `0 B`, `1023 B`,
/// `1.0 KiB`, `1.5 MiB`.
pub(crate) fn size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // Tenths of the unit, rounded in integers; a value that rounds to 1024.0 moves up a unit.
    let tenths = |scale: u128| (u128::from(bytes) * 10 + scale / 2) / scale;
    let mut unit = 0;
    let mut scale: u128 = 1024;
    while unit + 1 < UNITS.len() && tenths(scale) >= 10_240 {
        unit += 1;
        scale *= 1024;
    }
    let tenths = tenths(scale);
    let name = UNITS.get(unit).copied().unwrap_or("EiB");
    format!("{}.{} {name}", tenths / 10, tenths % 10)
}

/// Milliseconds since the Unix epoch as ISO-8601 in UTC, to the millisecond.
pub(crate) fn time(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, milli) = (rest / 1000, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// A timestamp of a record or an index (`-1` is Kafka's "none"), or `-` when there is none.
pub(crate) fn timestamp(ms: Option<i64>) -> String {
    ms.filter(|t| *t >= 0).map_or_else(|| "-".to_owned(), time)
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1024), "1.0 KiB");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(1024 * 1024 - 1), "1.0 MiB");
        assert_eq!(size(1024 * 1024 - 52), "1023.9 KiB");
        assert_eq!(size(1 << 30), "1.0 GiB");
        assert_eq!(size(5 * (1 << 40) + (1 << 39)), "5.5 TiB");
        assert_eq!(size(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn times() {
        assert_eq!(time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(time(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(time(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(time(1_796_148_464_123), "2026-12-01T18:07:44.123Z");
        assert_eq!(timestamp(Some(-1)), "-");
        assert_eq!(timestamp(None), "-");
        assert_eq!(timestamp(Some(1000)), "1970-01-01T00:00:01.000Z");
    }
}
