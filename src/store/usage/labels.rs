//! A series' identity: its label set, checked as Prometheus checks names, and its one
//! canonical text `metric{a="x",b="y"}` (names sorted, values escaped as in the
//! exposition format, empty values dropped as Prometheus drops them), which keys the
//! series table, is parsed back for readers and names a series in messages.

use std::collections::BTreeMap;

/// A label set: name → value, sorted by name. `__name__` holds the metric name.
pub type Labels = BTreeMap<String, String>;

/// The label that holds the metric name.
pub const METRIC_NAME: &str = "__name__";

/// A checked label set and what the series table keeps of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SeriesKey {
    pub text: String,
    pub metric: String,
    /// The `namespace` and `pod` values, "" when absent.
    pub namespace: String,
    pub pod: String,
}

impl SeriesKey {
    /// The key of `labels`, or why they are refused.
    pub fn of(labels: &Labels) -> Result<SeriesKey, String> {
        let metric = labels.get(METRIC_NAME).map(String::as_str).unwrap_or("");
        if metric.is_empty() {
            return Err(format!("no {METRIC_NAME} label"));
        }
        if !is_metric_name(metric) {
            return Err(format!(
                "metric name {metric:?} is not [a-zA-Z_:][a-zA-Z0-9_:]*"
            ));
        }
        if let Some(bad) = labels.keys().find(|n| !is_label_name(n)) {
            return Err(format!("label name {bad:?} is not [a-zA-Z_][a-zA-Z0-9_]*"));
        }
        let value = |name: &str| labels.get(name).cloned().unwrap_or_default();
        Ok(SeriesKey {
            text: render(labels),
            metric: metric.to_string(),
            namespace: value("namespace"),
            pod: value("pod"),
        })
    }
}

fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `metric{a="x",b="y"}` of any label set (checked or not: refused series are named
/// too); `metric` alone when it has no other label.
pub(super) fn render(labels: &Labels) -> String {
    let mut out = labels.get(METRIC_NAME).cloned().unwrap_or_default();
    let mut rest = labels
        .iter()
        .filter(|(n, v)| n.as_str() != METRIC_NAME && !v.is_empty())
        .peekable();
    if rest.peek().is_none() {
        return out;
    }
    out.push('{');
    for (i, (name, value)) in rest.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push('}');
    out
}

/// The labels of a canonical text written by [`render`] from a checked set.
pub(super) fn parse(text: &str) -> Option<Labels> {
    let mut labels = Labels::new();
    let (metric, mut rest) = match text.find('{') {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, "}"),
    };
    labels.insert(METRIC_NAME.to_string(), metric.to_string());
    while rest != "}" {
        let (name, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (at, '"') => break at,
                (_, c) => value.push(c),
            }
        };
        labels.insert(name.to_string(), value);
        rest = &after[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    Some(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn canonical_text_sorts_names_escapes_values_and_parses_back() {
        let l = labels(&[
            ("pod", "a\"b\\c\nd"),
            (METRIC_NAME, "container_cpu_usage_seconds_total"),
            ("container", "app,x=\"y\"}"),
        ]);
        let key = SeriesKey::of(&l).expect("valid");
        assert_eq!(
            key.text,
            r#"container_cpu_usage_seconds_total{container="app,x=\"y\"}",pod="a\"b\\c\nd"}"#
        );
        assert_eq!(key.pod, "a\"b\\c\nd");
        assert_eq!(key.namespace, "");
        assert_eq!(parse(&key.text), Some(l));
    }

    #[test]
    fn a_metric_without_other_labels_is_its_bare_name_and_empty_values_are_dropped() {
        let l = labels(&[(METRIC_NAME, "up"), ("job", "")]);
        let key = SeriesKey::of(&l).expect("valid");
        assert_eq!(key.text, "up");
        assert_eq!(parse("up"), Some(labels(&[(METRIC_NAME, "up")])));
    }

    #[test]
    fn a_missing_metric_name_or_a_bad_label_name_is_refused_with_the_reason() {
        let no_name = SeriesKey::of(&labels(&[("pod", "a")])).unwrap_err();
        assert!(no_name.contains("__name__"), "{no_name}");
        let empty = SeriesKey::of(&labels(&[(METRIC_NAME, "")])).unwrap_err();
        assert!(empty.contains("__name__"), "{empty}");
        let bad = SeriesKey::of(&labels(&[(METRIC_NAME, "m"), ("1pod", "a")])).unwrap_err();
        assert!(bad.contains("1pod"), "{bad}");
        let dash = SeriesKey::of(&labels(&[(METRIC_NAME, "m"), ("a-b", "a")])).unwrap_err();
        assert!(dash.contains("a-b"), "{dash}");
        let metric = SeriesKey::of(&labels(&[(METRIC_NAME, "my.metric")])).unwrap_err();
        assert!(metric.contains("my.metric"), "{metric}");
        assert!(SeriesKey::of(&labels(&[(METRIC_NAME, "ns:rule_sum"), ("_x", "1")])).is_ok());
    }
}
