//! The timestamps among an object's time fields: the newest, and the first that is not one.

use k8s_openapi::jiff::Timestamp;

/// The key of a time field, copied (keys are short; a longer one is cut).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct TimeKey {
    bytes: [u8; 40],
    len: u8,
}

impl TimeKey {
    pub(super) fn new(key: &str) -> TimeKey {
        let mut end = key.len().min(40);
        while !key.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; 40];
        bytes[..end].copy_from_slice(&key.as_bytes()[..end]);
        TimeKey {
            bytes,
            len: end as u8,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("?")
    }
}

/// A time field whose value is not an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTime {
    /// The field's key (`startTimestamp`, `lastTransitionTime` …).
    pub field: String,
    /// The value, cut to 64 characters.
    pub value: String,
}

/// What the time fields of one object say: the newest time, and the first value that is
/// not a time.
#[derive(Debug, Default)]
pub(super) struct TimeNotes {
    pub(super) newest: Option<[u8; 20]>,
    pub(super) bad: Option<Box<BadTime>>,
}

impl TimeNotes {
    /// Notes the value of a time field. Kubernetes writes `2026-11-29T03:00:00Z` (and
    /// `…:00.000000Z` for a MicroTime); any other RFC 3339 form counts too, in UTC to the
    /// second. A value that is not a time is kept as the object's bad time (the first one).
    pub(super) fn note(&mut self, s: &str, key: TimeKey) {
        if s.is_empty() {
            return;
        }
        let bytes = if looks_like_timestamp(s) && plausible_timestamp(s.as_bytes()) {
            <[u8; 20]>::try_from(s.as_bytes()).ok()
        } else {
            canonical_timestamp(s)
        };
        match bytes {
            Some(b) if self.newest.is_none_or(|n| b > n) => {
                // Only a candidate is checked in full (a 30th of February passes the cheap
                // check): at most a few per object.
                if std::str::from_utf8(&b).is_ok_and(|t| t.parse::<Timestamp>().is_ok()) {
                    self.newest = Some(b);
                } else {
                    self.bad(s, key);
                }
            }
            Some(_) => {}
            None => self.bad(s, key),
        }
    }

    fn bad(&mut self, s: &str, key: TimeKey) {
        if self.bad.is_none() {
            self.bad = Some(Box::new(BadTime {
                field: key.as_str().to_string(),
                value: if s.chars().count() > 64 {
                    format!("{}…", s.chars().take(64).collect::<String>())
                } else {
                    s.to_string()
                },
            }));
        }
    }
}

/// Month, day, hour, minute and second in range (the digits are known to be digits).
fn plausible_timestamp(b: &[u8]) -> bool {
    let n = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    (1..=12).contains(&n(5)) && (1..=31).contains(&n(8)) && n(11) < 24 && n(14) < 60 && n(17) < 60
}

/// Any RFC 3339 time as `YYYY-MM-DDTHH:MM:SSZ` in UTC, to the second.
fn canonical_timestamp(s: &str) -> Option<[u8; 20]> {
    if s.len() > 64 {
        return None;
    }
    let t: Timestamp = s.parse().ok()?;
    let text = t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    <[u8; 20]>::try_from(text.as_bytes()).ok()
}

/// An RFC 3339 UTC timestamp string: `2026-11-29T03:00:00Z`.
pub fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && s.chars().filter(char::is_ascii_digit).count() == 14
}
