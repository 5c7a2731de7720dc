//! A floor on a score: fixed (`0.7`), or relative to the base commit (`base`: no
//! regression; `base - 0.01`: a drop of at most 0.01). A fixed composite threshold
//! stops meaning anything once a project dimension with its own scale joins the
//! composite; `base` is what a maintainer's "does it make things worse?" asks.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How low a score may be and still pass (factory.md `Eval threshold` and
/// `Dimension thresholds`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// At least this score.
    Score(f64),
    /// At least the base commit's own score, less `tolerance`.
    Base { tolerance: f64 },
}

impl Threshold {
    /// The score to reach, given the base's (`None`: not measured, so no floor yet).
    pub fn floor(self, base: Option<f64>) -> Option<f64> {
        match self {
            Threshold::Score(s) => Some(s),
            Threshold::Base { tolerance } => base.map(|b| b - tolerance),
        }
    }

    /// The fixed score, when this threshold is one.
    pub fn score(self) -> Option<f64> {
        match self {
            Threshold::Score(s) => Some(s),
            Threshold::Base { .. } => None,
        }
    }

    /// Reads `0.7`, `base` or `base - 0.02` (spaces optional).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let wanted = || {
            format!(
                "`{t}` is not a threshold; write a score (e.g. `0.7`), `base` (no regression below the base commit) or `base - 0.02` (a drop of at most 0.02)"
            )
        };
        if let Ok(n) = t.parse::<f64>() {
            return Self::score_in_range(n);
        }
        let rest = t.strip_prefix("base").ok_or_else(wanted)?.trim_start();
        if rest.is_empty() {
            return Ok(Threshold::Base { tolerance: 0.0 });
        }
        let tolerance: f64 = rest
            .strip_prefix('-')
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(wanted)?;
        if !(0.0..=1.0).contains(&tolerance) {
            return Err(format!(
                "`{t}`: the tolerance {tolerance} is outside 0..1 (scores are between 0 and 1; e.g. `base - 0.01`)"
            ));
        }
        Ok(Threshold::Base { tolerance })
    }

    fn score_in_range(n: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&n) {
            Ok(Threshold::Score(n))
        } else {
            Err(format!(
                "{n} is outside 0..1: scores are between 0 and 1 (e.g. 0.7, or `base` for no regression)"
            ))
        }
    }
}

impl Default for Threshold {
    fn default() -> Self {
        Threshold::Score(0.0)
    }
}

impl PartialEq<f64> for Threshold {
    fn eq(&self, other: &f64) -> bool {
        self.score() == Some(*other)
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threshold::Score(s) => write!(f, "{s}"),
            Threshold::Base { tolerance } if *tolerance == 0.0 => f.write_str("base"),
            Threshold::Base { tolerance } => write!(f, "base - {tolerance}"),
        }
    }
}

/// A number stays a number in config.json; a relative threshold is its text.
impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threshold::Score(n) => s.serialize_f64(*n),
            Threshold::Base { .. } => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => Threshold::score_in_range(n).map_err(serde::de::Error::custom),
            // No coercion: "0.7" as a string is an error, as every other number field's.
            Raw::Text(t) if t.trim().parse::<f64>().is_ok() => Err(serde::de::Error::custom(
                format!("the threshold `{t}` is a string; write the number itself (0.7)"),
            )),
            Raw::Text(t) => Threshold::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scores_and_base_relative_forms() {
        assert_eq!(Threshold::parse("0.7"), Ok(Threshold::Score(0.7)));
        assert_eq!(
            Threshold::parse(" base "),
            Ok(Threshold::Base { tolerance: 0.0 })
        );
        assert_eq!(
            Threshold::parse("base-0.02"),
            Ok(Threshold::Base { tolerance: 0.02 })
        );
        assert_eq!(
            Threshold::parse("base - 0.02").map(|t| t.to_string()),
            Ok("base - 0.02".into())
        );
        for bad in ["7", "base + 0.1", "based", "base - 2", "high", ""] {
            assert!(Threshold::parse(bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn floors_follow_the_base_or_stay_fixed() {
        assert_eq!(Threshold::Score(0.5).floor(Some(0.9)), Some(0.5));
        let rel = Threshold::Base { tolerance: 0.01 };
        assert_eq!(
            rel.floor(Some(0.9)).map(|f| (f * 100.0).round()),
            Some(89.0)
        );
        assert_eq!(rel.floor(None), None);
    }

    #[test]
    fn config_json_keeps_numbers_numbers_and_refuses_coercion() {
        let n: Threshold = serde_json::from_str("0.25").unwrap();
        assert_eq!(serde_json::to_string(&n).unwrap(), "0.25");
        let b: Threshold = serde_json::from_str("\"base - 0.01\"").unwrap();
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"base - 0.01\"");
        assert!(serde_json::from_str::<Threshold>("\"0.7\"").is_err());
        assert!(serde_json::from_str::<Threshold>("3").is_err());
    }
}
