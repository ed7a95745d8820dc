//! Times given on the command line (`consume --from-time`, `offsets --time`): epoch
//! milliseconds, or an ISO-8601 date and time as Kafka's tools read one (`Utils.getDateTime`:
//! `yyyy-MM-ddTHH:mm:ss.SSS`, then a zone `Z`, `+08`, `+0800` or `+08:00`). A time without a zone
//! is UTC, as in Kafka, which appends `Z` to it.

use jiff::civil::DateTime;
use jiff::tz::{Offset, TimeZone};

/// Parses `value` as epoch milliseconds or an ISO-8601 date and time (clap's value parser: an
/// error is a usage error naming the value).
pub(crate) fn parse(value: &str) -> Result<i64, String> {
    if let Ok(ms) = value.parse::<i64>() {
        return Ok(ms);
    }
    iso(value).map_err(|why| {
        format!(
            "{why}: expected milliseconds since the epoch or an ISO-8601 time such as 2024-05-01T12:00:00.000 (UTC) or 2024-05-01T14:00:00.000+02:00"
        )
    })
}

/// Parses an ISO-8601 date and time, with an optional zone, to epoch milliseconds (anything
/// finer than a millisecond is dropped, toward the past).
fn iso(value: &str) -> Result<i64, String> {
    let Some(t) = value.find('T') else {
        return Err("no 'T' between the date and the time".to_owned());
    };
    let (civil, offset) = split_zone(value, t)?;
    let civil: DateTime = civil
        .parse()
        .map_err(|e| format!("not a date and time: {e}"))?;
    let zoned = civil
        .to_zoned(TimeZone::fixed(offset))
        .map_err(|e| format!("out of range: {e}"))?;
    Ok(zoned.timestamp().as_millisecond())
}

/// Splits the zone off `value` (whose time part starts after byte `t`): `Z`, `+HH`, `+HHMM` or
/// `+HH:MM` (or `-`), none meaning UTC.
fn split_zone(value: &str, t: usize) -> Result<(&str, Offset), String> {
    if let Some(civil) = value.strip_suffix('Z') {
        return Ok((civil, Offset::UTC));
    }
    let time = value.get(t..).unwrap_or_default();
    let Some(sign_at) = time.rfind(['+', '-']) else {
        return Ok((value, Offset::UTC));
    };
    let (civil, zone) = value.split_at(t + sign_at);
    let sign: i32 = if zone.starts_with('-') { -1 } else { 1 };
    let digits: String = zone.chars().skip(1).filter(|c| *c != ':').collect();
    let bad = || format!("bad zone {zone:?} (expected Z, +HH, +HHMM or +HH:MM)");
    let colon_ok = !zone.contains(':') || zone.len() == 6 && zone.as_bytes().get(3) == Some(&b':');
    if !colon_ok || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (hours, minutes) = match digits.len() {
        2 => (digits.parse::<i32>().map_err(|_| bad())?, 0),
        4 => (
            digits
                .get(..2)
                .and_then(|h| h.parse::<i32>().ok())
                .ok_or_else(bad)?,
            digits
                .get(2..)
                .and_then(|m| m.parse::<i32>().ok())
                .ok_or_else(bad)?,
        ),
        _ => return Err(bad()),
    };
    if hours > 18 || minutes > 59 {
        return Err(bad());
    }
    let offset = Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).map_err(|_| bad())?;
    Ok((civil, offset))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::parse;

    #[test]
    fn milliseconds_and_kafka_dates() {
        assert_eq!(parse("1700000000000"), Ok(1_700_000_000_000));
        assert_eq!(parse("-1"), Ok(-1));
        // Kafka's own examples (Utils.getDateTime's documentation).
        assert_eq!(parse("2020-11-10T16:51:38.198"), Ok(1_605_027_098_198));
        assert_eq!(parse("2020-11-10T16:51:38.198Z"), Ok(1_605_027_098_198));
        let east = 1_605_027_098_198 - 8 * 3_600_000;
        assert_eq!(parse("2020-11-10T16:51:38.198+0800"), Ok(east));
        assert_eq!(parse("2020-11-10T16:51:38.198+08"), Ok(east));
        assert_eq!(parse("2020-11-10T16:51:38.198+08:00"), Ok(east));
        assert_eq!(
            parse("2020-11-10T16:51:38.198-05:30"),
            Ok(1_605_027_098_198 + 5 * 3_600_000 + 30 * 60_000)
        );
        assert_eq!(parse("2020-11-10T16:51:38Z"), Ok(1_605_027_098_000));
    }

    #[test]
    fn refusals_say_why() {
        for bad in [
            "yesterday",
            "2020-11-10",
            "2020-11-10T25:00:00.000",
            "2020-13-10T10:00:00.000",
            "2020-11-10T10:00:00.000+8",
            "2020-11-10T10:00:00.000+08:0",
            "2020-11-10T10:00:00.000+19",
            "",
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("ISO-8601"), "{bad}: {err}");
        }
    }
}
