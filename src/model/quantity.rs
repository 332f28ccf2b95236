//! Kubernetes resource quantities ("2Gi", "1500M", "500m", "1.5Gi", "1e3"), parsed exactly.
//!
//! Values are kept in milli-units as an `i128`, which holds every quantity a cluster writes
//! (up to exabytes) without rounding; sub-milli values ("100n") round up, as Kubernetes does.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {input:?}: {problem}")]
pub struct QuantityError {
    pub input: String,
    pub problem: &'static str,
}

/// A parsed quantity; keeps the text it came from for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    millis: i128,
    text: String,
}

const KI: i128 = 1024;

fn suffix_multiplier(suffix: &str) -> Option<(i128, i128)> {
    // (numerator, denominator) applied to the number, in milli-units.
    Some(match suffix {
        "" => (1000, 1),
        "n" => (1, 1_000_000),
        "u" => (1, 1000),
        "m" => (1, 1),
        "k" => (1000 * 1000, 1),
        "M" => (1000 * 1_000_000, 1),
        "G" => (1000 * 1_000_000_000, 1),
        "T" => (1000 * 1_000_000_000_000, 1),
        "P" => (1000 * 1_000_000_000_000_000, 1),
        "E" => (1000 * 1_000_000_000_000_000_000, 1),
        "Ki" => (1000 * KI, 1),
        "Mi" => (1000 * KI.pow(2), 1),
        "Gi" => (1000 * KI.pow(3), 1),
        "Ti" => (1000 * KI.pow(4), 1),
        "Pi" => (1000 * KI.pow(5), 1),
        "Ei" => (1000 * KI.pow(6), 1),
        _ => return None,
    })
}

impl Quantity {
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        let err = |problem| QuantityError {
            input: input.to_string(),
            problem,
        };
        let s = input.trim();
        if s.is_empty() {
            return Err(err("empty"));
        }
        let (negative, s) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let number_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (number, suffix) = s.split_at(number_end);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(err("expected a number"));
        }
        let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
        if frac_part.len() > 30 || int_part.len() > 30 {
            return Err(err("too many digits"));
        }
        let digits = format!("{int_part}{frac_part}");
        let mantissa: i128 = digits.parse().map_err(|_| err("expected a number"))?;
        let mut num = mantissa;
        let mut den: i128 = 10i128.pow(frac_part.len() as u32);
        // Decimal exponent form: 1e3, 12E6 ("E" alone is the exa suffix).
        let suffix = if let Some(exp) = suffix.strip_prefix(['e', 'E']).filter(|e| {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        }) {
            let exp: i32 = exp.parse().map_err(|_| err("bad exponent"))?;
            if exp.abs() > 18 {
                return Err(err("exponent out of range"));
            }
            if exp >= 0 {
                num = num
                    .checked_mul(10i128.pow(exp as u32))
                    .ok_or(err("too large"))?;
            } else {
                den = den
                    .checked_mul(10i128.pow((-exp) as u32))
                    .ok_or(err("too large"))?;
            }
            ""
        } else {
            suffix
        };
        let (mul, div) = suffix_multiplier(suffix).ok_or(err("unknown suffix"))?;
        let num = num.checked_mul(mul).ok_or(err("too large"))?;
        let den = den.checked_mul(div).ok_or(err("too large"))?;
        // Round up to whole milli-units, as resource.Quantity does.
        let mut millis = num / den + i128::from(num % den != 0);
        if negative {
            millis = -millis;
        }
        Ok(Quantity {
            millis,
            text: input.to_string(),
        })
    }

    /// The exact value in milli-units (CPU millicores, or thousandths of a byte).
    pub fn millis(&self) -> i128 {
        self.millis
    }

    /// The value in whole units (bytes for memory), rounded up.
    pub fn value(&self) -> i128 {
        let whole = self.millis.div_euclid(1000);
        whole + i128::from(self.millis.rem_euclid(1000) != 0)
    }

    /// Bytes as u64 (negative clamps to 0), for memory arithmetic.
    pub fn bytes(&self) -> u64 {
        u64::try_from(self.value().max(0)).unwrap_or(u64::MAX)
    }

    /// `ceil(value / 10^9)`: KubeVirt's decimal-GB scaling for completion budgets.
    pub fn ceil_decimal_gb(&self) -> u64 {
        self.bytes().div_ceil(1_000_000_000)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn from_bytes(bytes: u64) -> Self {
        Quantity {
            millis: i128::from(bytes) * 1000,
            text: bytes.to_string(),
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Quantities appear as strings, but YAML writers sometimes emit bare numbers.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
            Float(f64),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Text(t) => t,
            Raw::Int(i) => i.to_string(),
            Raw::Float(f) => f.to_string(),
        };
        Quantity::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> i128 {
        Quantity::parse(s).unwrap().value()
    }

    #[test]
    fn binary_suffixes() {
        assert_eq!(bytes("1Ki"), 1024);
        assert_eq!(bytes("2Mi"), 2 * 1024 * 1024);
        assert_eq!(bytes("2Gi"), 2_147_483_648);
        assert_eq!(bytes("1Ti"), 1024_i128.pow(4));
        assert_eq!(bytes("1Pi"), 1024_i128.pow(5));
        assert_eq!(bytes("1Ei"), 1024_i128.pow(6));
    }

    #[test]
    fn decimal_suffixes() {
        assert_eq!(bytes("1500M"), 1_500_000_000);
        assert_eq!(bytes("3k"), 3000);
        assert_eq!(bytes("4G"), 4_000_000_000);
        assert_eq!(bytes("1T"), 10_i128.pow(12));
        assert_eq!(bytes("1P"), 10_i128.pow(15));
        assert_eq!(bytes("2E"), 2 * 10_i128.pow(18));
        assert_eq!(bytes("1024"), 1024);
    }

    #[test]
    fn small_suffixes_and_rounding() {
        assert_eq!(Quantity::parse("500m").unwrap().millis(), 500);
        assert_eq!(Quantity::parse("250u").unwrap().millis(), 1, "rounds up");
        assert_eq!(Quantity::parse("1000000n").unwrap().millis(), 1);
        assert_eq!(bytes("100m"), 1, "a fraction of a byte rounds up");
    }

    #[test]
    fn fractions_and_exponents() {
        assert_eq!(bytes("1.5Gi"), 1_610_612_736);
        assert_eq!(bytes("0.5Ki"), 512);
        assert_eq!(bytes("1e3"), 1000);
        assert_eq!(bytes("12E6"), 12_000_000);
        assert_eq!(Quantity::parse("1e-3").unwrap().millis(), 1);
        assert_eq!(bytes("-1Gi"), -1_073_741_824);
    }

    #[test]
    fn decimal_gb_scaling_matches_kubevirt() {
        // FACTS §5.2: a 2Gi guest is ceil(2.147) = 3 decimal GB.
        assert_eq!(Quantity::parse("2Gi").unwrap().ceil_decimal_gb(), 3);
        assert_eq!(Quantity::parse("1G").unwrap().ceil_decimal_gb(), 1);
        assert_eq!(Quantity::parse("0").unwrap().ceil_decimal_gb(), 0);
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "Gi", "1.2.3", "1Gb", "abc", "1 Gi x", "."] {
            assert!(Quantity::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn deserializes_from_numbers_too() {
        let q: Quantity = serde_json::from_str("4").unwrap();
        assert_eq!(q.value(), 4);
        let q: Quantity = serde_json::from_str("\"64Mi\"").unwrap();
        assert_eq!(q.as_str(), "64Mi");
    }
}
