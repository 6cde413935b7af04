//! One line of VictoriaMetrics's JSON-lines export: `{"metric":{…},"values":[…],
//! "timestamps":[…]}`, one series with its raw samples. VictoriaMetrics writes the
//! special values bare (`+Inf`, `-Inf`, `NaN` for a staleness marker), which is not
//! JSON, so the two arrays are read by hand and the labels by `serde_json`.

use crate::analysis::Sample;
use crate::datasource::raw::{Labels, RawSeries};

/// Why a line cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("export line: {0}")]
pub struct LineError(String);

fn err(what: impl Into<String>) -> LineError {
    LineError(what.into())
}

/// A cursor over one line.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// Consumes `token` (after optional whitespace) or fails naming it.
    fn expect(&mut self, token: &str) -> Result<(), LineError> {
        self.skip_space();
        if self.text[self.at..].starts_with(token.as_bytes()) {
            self.at += token.len();
            Ok(())
        } else {
            Err(err(format!("expected {token} at byte {}", self.at)))
        }
    }

    /// The comma-separated items of a `[…]` array, each as text.
    fn array(&mut self) -> Result<Vec<&'a str>, LineError> {
        self.expect("[")?;
        let end = self.text[self.at..]
            .iter()
            .position(|b| *b == b']')
            .ok_or_else(|| err("array without its closing bracket"))?;
        let inner = std::str::from_utf8(&self.text[self.at..self.at + end])
            .map_err(|_| err("array is not UTF-8"))?;
        self.at += end + 1;
        if inner.trim().is_empty() {
            return Ok(Vec::new());
        }
        Ok(inner.split(',').map(str::trim).collect())
    }
}

/// A value as VictoriaMetrics writes it: a JSON number, or `+Inf`, `-Inf`, `Inf`, `NaN`,
/// `null`.
fn value(text: &str) -> Result<f64, LineError> {
    let plain = text.trim_matches('"');
    match plain {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        // A staleness marker: `null` from VictoriaMetrics 1.79's export, `NaN` elsewhere.
        "NaN" | "null" => Ok(f64::NAN),
        _ => plain
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| err(format!("value {text:?} is not a number"))),
    }
}

/// Reads one export line into its labels and raw samples (in the server's order).
pub fn parse(line: &[u8]) -> Result<RawSeries, LineError> {
    let mut cur = Cursor { text: line, at: 0 };
    cur.expect("{")?;
    cur.expect("\"metric\"")?;
    cur.expect(":")?;
    let mut labels = serde_json::Deserializer::from_slice(&line[cur.at..]).into_iter::<Labels>();
    let parsed: Labels = labels
        .next()
        .ok_or_else(|| err("no metric object"))?
        .map_err(|e| err(format!("metric: {e}")))?;
    cur.at += labels.byte_offset();
    cur.expect(",")?;
    cur.expect("\"values\"")?;
    cur.expect(":")?;
    let values = cur.array()?;
    cur.expect(",")?;
    cur.expect("\"timestamps\"")?;
    cur.expect(":")?;
    let times = cur.array()?;
    cur.expect("}")?;
    cur.skip_space();
    if cur.at != line.len() {
        return Err(err("bytes after the series object"));
    }
    if values.len() != times.len() {
        return Err(err(format!(
            "{} values for {} timestamps",
            values.len(),
            times.len()
        )));
    }
    let mut samples = Vec::with_capacity(values.len());
    for (v, t) in values.iter().zip(&times) {
        let timestamp = t
            .parse::<i64>()
            .map_err(|_| err(format!("timestamp {t:?} is not an integer")))?;
        samples.push(Sample {
            timestamp,
            value: value(v)?,
        });
    }
    Ok(RawSeries {
        labels: parsed,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_labels_and_samples_and_bare_special_values_are_read() {
        let line = br#"{"metric":{"__name__":"m","pod":"a\"b"},"values":[1,0.15625,+Inf,-Inf,NaN,1e+21],"timestamps":[1,2,3,4,5,6]}"#;
        let s = parse(line).expect("line");
        assert_eq!(s.labels["__name__"], "m");
        assert_eq!(s.labels["pod"], "a\"b");
        let times: Vec<i64> = s.samples.iter().map(|x| x.timestamp).collect();
        assert_eq!(times, [1, 2, 3, 4, 5, 6]);
        assert_eq!(s.samples[1].value, 0.15625);
        assert_eq!(s.samples[2].value, f64::INFINITY);
        assert_eq!(s.samples[3].value, f64::NEG_INFINITY);
        assert!(s.samples[4].value.is_nan());
        assert_eq!(s.samples[5].value, 1e21);
        let empty = parse(br#"{"metric":{},"values":[],"timestamps":[]}"#).expect("empty");
        assert!(empty.labels.is_empty() && empty.samples.is_empty());
    }

    #[test]
    fn a_staleness_marker_written_as_null_is_read_as_nan() {
        // What VictoriaMetrics 1.79 exports for a marker taken by remote write.
        let line = br#"{"metric":{"__name__":"m"},"values":[1,null,2],"timestamps":[1,2,3]}"#;
        let s = parse(line).expect("line");
        assert_eq!(s.samples.len(), 3);
        assert!(s.samples[1].value.is_nan());
    }

    #[test]
    fn broken_lines_are_refused_with_the_reason() {
        for (line, why) in [
            (
                &br#"{"metric":{"a":"b"},"values":[1,2],"timestamps":[1]}"#[..],
                "2 values for 1",
            ),
            (
                br#"{"metric":{"a":"b"},"values":[x],"timestamps":[1]}"#,
                "not a number",
            ),
            (
                br#"{"metric":{"a":"b"},"values":[1],"timestamps":[1.5]}"#,
                "not an integer",
            ),
            (
                br#"{"metric":{"a":1},"values":[1],"timestamps":[1]}"#,
                "metric:",
            ),
            (
                br#"{"metric":{"a":"b"},"values":[1],"timestamps":[1]} x"#,
                "after the series",
            ),
            (br#"{"metric":{"a":"b"},"values":[1"#, "closing bracket"),
            (br#"{"values":[1],"timestamps":[1]}"#, "expected \"metric\""),
        ] {
            let e = parse(line).expect_err(why).to_string();
            assert!(e.contains(why), "{e} (wanted {why})");
        }
    }
}
