//! The one clock format every record uses.

/// The current UTC time as ISO-8601 with millisecond precision.
pub fn now_iso8601() -> String {
    // Always milliseconds, so every timestamp has the same width (2026-12-01T11:05:01.700Z).
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}
