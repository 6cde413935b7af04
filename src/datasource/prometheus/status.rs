//! A Prometheus-compatible server's refusal in words, for every protocol.

/// A refused request in words: `what` (the API asked, `""` for the query API), the
/// status, and the server's text, or what the status means when it sent none (a 404 or
/// 405 from a URL that is not a Prometheus-compatible API says nothing of itself).
pub(crate) fn status_text(what: &str, status: u16, text: &str) -> String {
    let text = text.trim();
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let said = match (text.is_empty(), status) {
        (false, _) => text.to_string(),
        (true, 404 | 405) => format!(
            "{reason}: the URL answers, but not as a Prometheus-compatible API (give its base URL, without /api/v1)"
        ),
        (true, _) => format!("{reason}, without an error text"),
    };
    format!("{what}HTTP {status}: {said}")
}

#[cfg(test)]
mod tests {
    use super::status_text;

    #[test]
    fn a_refusal_without_text_says_what_the_status_means() {
        assert_eq!(status_text("", 400, "bad query"), "HTTP 400: bad query");
        let not_prometheus = status_text("", 405, "");
        assert!(
            not_prometheus.starts_with("HTTP 405: Method Not Allowed: the URL answers, but not as a Prometheus-compatible API"),
            "{not_prometheus}"
        );
        assert_eq!(
            status_text("export: ", 502, " "),
            "export: HTTP 502: Bad Gateway, without an error text"
        );
    }
}
