//! What a viewer may read of a datasource's failure: its category and HTTP status,
//! never the datasource's own words (docs/security.md). Runs, readiness checks and
//! backtests keep a failure as the text of its [`DatasourceError`], inside kerf's own
//! words ("collect: ", "datasource unreachable: "); [`for_viewers`] keeps kerf's words
//! and puts each error's category in place of what the datasource said. Every
//! variant's text starts with a [`MARKERS`] entry (a unit test holds them together).
//!
//! [`DatasourceError`]: super::DatasourceError

use std::borrow::Cow;

/// How the text of a [`super::DatasourceError`] starts, the category shown for it, and
/// whether the datasource's words follow (kept for editors only).
struct Marker {
    starts: &'static str,
    category: &'static str,
    says: bool,
}

/// The category of every variant (and of the datasource test's own refusal).
const MARKERS: &[Marker] = &[
    Marker {
        starts: "datasource unreachable: ",
        category: "datasource unreachable",
        says: true,
    },
    Marker {
        starts: "datasource query failed: ",
        category: "datasource query failed",
        says: true,
    },
    Marker {
        starts: "datasource answer could not be read: ",
        category: "datasource answer could not be read",
        says: true,
    },
    Marker {
        starts: "datasource redirected to another origin",
        category: "datasource redirected to another origin",
        says: true,
    },
    Marker {
        starts: "invalid datasource settings: ",
        category: "invalid datasource settings",
        says: true,
    },
    // "(HTTP 401)" follows: kerf's words.
    Marker {
        starts: "datasource refused the credentials",
        category: "datasource refused the credentials",
        says: false,
    },
];

/// `text` as a viewer reads it: kerf's words kept, each datasource error's category
/// (with the HTTP status it answered, if any) in place of what the datasource said.
/// Text without a datasource error comes back as it is.
pub fn for_viewers(text: &str) -> Cow<'_, str> {
    if first_marker(text).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some((at, m)) = first_marker(rest) {
        out.push_str(&rest[..at]);
        out.push_str(m.category);
        rest = &rest[at + m.starts.len()..];
        if !m.says {
            continue;
        }
        // A nested error (readiness: "datasource unreachable: datasource query
        // failed: …") is read on; anything else the datasource said is left out.
        if matches!(first_marker(rest), Some((0, _))) {
            out.push_str(": ");
            continue;
        }
        if let Some(status) = http_status(rest) {
            out.push_str(&format!(" (HTTP {status})"));
        }
        return Cow::Owned(out);
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The earliest marker in `text`, and where.
fn first_marker(text: &str) -> Option<(usize, &'static Marker)> {
    MARKERS
        .iter()
        .filter_map(|m| text.find(m.starts).map(|at| (at, m)))
        .min_by_key(|(at, _)| *at)
}

/// The status of the first `HTTP NNN` in `said`: kerf writes it before the datasource's
/// words ("HTTP 400: …", "remote read: HTTP 503: …").
fn http_status(said: &str) -> Option<&str> {
    let at = said.find("HTTP ")? + "HTTP ".len();
    let code = said.get(at..at + 3)?;
    let whole = !said[at + 3..].starts_with(|c: char| c.is_ascii_digit());
    (code.bytes().all(|b| b.is_ascii_digit()) && whole).then_some(code)
}

#[cfg(test)]
mod tests {
    use super::super::DatasourceError;
    use super::*;

    /// Every variant, each saying something only editors may read.
    fn every_error() -> Vec<DatasourceError> {
        let said = || "upstream-words".to_string();
        let all = [
            DatasourceError::Unreachable(said()),
            DatasourceError::Unauthorized(401),
            DatasourceError::Query(format!("remote read: HTTP 503: {}", said())),
            DatasourceError::Redirected(said()),
            DatasourceError::Decode(said()),
            DatasourceError::Invalid(said()),
        ];
        // A new variant fails to compile here until it has a marker.
        for e in &all {
            match e {
                DatasourceError::Unreachable(_)
                | DatasourceError::Unauthorized(_)
                | DatasourceError::Query(_)
                | DatasourceError::Redirected(_)
                | DatasourceError::Decode(_)
                | DatasourceError::Invalid(_) => {}
            }
        }
        all.into()
    }

    #[test]
    fn every_datasource_error_shows_viewers_its_category_and_never_its_words() {
        for e in every_error() {
            for text in [e.to_string(), format!("collect: {e}")] {
                let shown = for_viewers(&text);
                assert!(!shown.contains("upstream-words"), "{text} -> {shown}");
                assert!(shown.contains("datasource"), "{text} -> {shown}");
            }
        }
        let query = DatasourceError::Query("HTTP 400: parse error near quokka".into());
        assert_eq!(
            for_viewers(&format!("collect: {query}")),
            "collect: datasource query failed (HTTP 400)"
        );
        let nested = format!(
            "datasource unreachable: {}",
            DatasourceError::Unauthorized(403)
        );
        assert_eq!(
            for_viewers(&nested),
            "datasource unreachable: datasource refused the credentials (HTTP 403)"
        );
        let nested = format!("datasource unreachable: {query}");
        assert_eq!(
            for_viewers(&nested),
            "datasource unreachable: datasource query failed (HTTP 400)"
        );
        let run = format!("last run r1 failed: collect: {query}");
        assert_eq!(
            for_viewers(&run),
            "last run r1 failed: collect: datasource query failed (HTTP 400)"
        );
    }

    #[test]
    fn kerfs_own_words_are_kept_and_a_datasource_cannot_pass_off_its_words_as_them() {
        let own = "reachable and authenticated; missing: container_memory_working_set_bytes";
        assert!(matches!(for_viewers(own), Cow::Borrowed(_)));
        assert_eq!(for_viewers("the check timed out"), "the check timed out");
        // Text a datasource sends that looks like kerf's markers shows only categories.
        let sly = DatasourceError::Query(
            "HTTP 500: secret1 datasource refused the credentials (HTTP 401) secret2".into(),
        );
        let text = sly.to_string();
        assert_eq!(for_viewers(&text), "datasource query failed (HTTP 500)");
        assert_eq!(http_status("HTTP 5000: x"), None);
    }
}
