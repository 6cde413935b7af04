//! Prometheus sample pairs (`[<unix seconds>, "<value>"]`) decoded straight into
//! 16-byte [`Sample`]s while the answer is parsed: no `serde_json::Value`, no `String`
//! per value, so a range answer costs its samples and nothing more.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};

use crate::analysis::Sample;

/// `values` of a matrix series.
pub fn points<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Sample>, D::Error> {
    d.deserialize_seq(Points)
}

/// `value` of a vector series.
pub fn point<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Sample>, D::Error> {
    d.deserialize_seq(Pair).map(Some)
}

struct Points;

impl<'de> Visitor<'de> for Points {
    type Value = Vec<Sample>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of [time, \"value\"] pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Sample>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(s) = seq.next_element_seed(PairSeed)? {
            out.push(s);
        }
        Ok(out)
    }
}

struct PairSeed;

impl<'de> de::DeserializeSeed<'de> for PairSeed {
    type Value = Sample;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Sample, D::Error> {
        d.deserialize_seq(Pair)
    }
}

struct Pair;

impl<'de> Visitor<'de> for Pair {
    type Value = Sample;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a [time, \"value\"] pair")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sample, A::Error> {
        let t: f64 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let value = seq
            .next_element_seed(ValueSeed)?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &self));
        }
        Ok(Sample {
            timestamp: (t * 1000.0).round() as i64,
            value,
        })
    }
}

/// A sample value: a string holding a float (`"1.5"`, `"NaN"`, `"+Inf"`).
struct ValueSeed;

impl<'de> de::DeserializeSeed<'de> for ValueSeed {
    type Value = f64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_str(ValueSeed)
    }
}

impl<'de> Visitor<'de> for ValueSeed {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sample value as a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        v.parse()
            .map_err(|_| E::custom(format!("sample value {v:?}")))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    struct Item {
        #[serde(default, deserialize_with = "points")]
        values: Vec<Sample>,
        #[serde(default, deserialize_with = "point")]
        value: Option<Sample>,
    }

    #[test]
    fn pairs_decode_into_samples_and_bad_values_are_errors() {
        let item: Item =
            serde_json::from_str(r#"{"values":[[1700000000.5,"1.25"],[1700000060,"NaN"]]}"#)
                .expect("matrix");
        assert_eq!(item.values[0].timestamp, 1_700_000_000_500);
        assert_eq!(item.values[0].value, 1.25);
        assert!(item.values[1].value.is_nan());
        assert!(item.value.is_none());
        let item: Item = serde_json::from_str(r#"{"value":[1700000000,"+Inf"]}"#).expect("vector");
        assert_eq!(item.value.map(|s| s.value), Some(f64::INFINITY));
        assert!(serde_json::from_str::<Item>(r#"{"values":[[1,"x"]]}"#).is_err());
        assert!(serde_json::from_str::<Item>(r#"{"values":[[1,"1",2]]}"#).is_err());
    }
}
