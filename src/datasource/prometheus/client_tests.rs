//! What the client shows of a datasource's text, and where it follows redirects.

use std::time::Duration;

use super::*;

fn client(auth: ClientAuth, headers: &[(&str, &str)]) -> Client {
    Client::new(ClientConfig {
        url: "http://127.0.0.1:9".into(),
        auth,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ca_pem: None,
        insecure_skip_verify: false,
        timeout: Duration::from_secs(1),
        max_concurrent_queries: 1,
        outbound: Default::default(),
    })
    .expect("client")
}

#[test]
fn upstream_text_is_one_short_line_with_every_credential_masked() {
    let c = client(
        ClientAuth::Basic {
            username: "kerf".into(),
            password: "s3cret-pass".into(),
        },
        &[("X-Api-Key", "key-0123456789")],
    );
    // base64("kerf:s3cret-pass")
    let echo =
        "bad query\nAuthorization: Basic a2VyZjpzM2NyZXQtcGFzcw== X-Api-Key: key-0123456789 \
                password=s3cret-pass Bearer abcdefgh12345678 and a basic query";
    let shown = c.shown(&echo.repeat(20));
    for leaked in [
        "a2VyZjpzM2NyZXQtcGFzcw==",
        "key-0123456789",
        "s3cret-pass",
        "abcdefgh12345678",
    ] {
        assert!(!shown.contains(leaked), "{leaked} in {shown}");
    }
    assert!(!shown.contains('\n'));
    assert!(shown.chars().count() <= SHOWN_CHARS + 1, "{shown}");
    assert!(
        shown.starts_with("bad query Authorization: Basic ***"),
        "{shown}"
    );
    assert!(
        c.shown("a basic query failed").contains("basic query"),
        "words stay"
    );
}

#[test]
fn redirects_are_followed_only_inside_the_first_origin() {
    let a = reqwest::Url::parse("http://127.0.0.1:9090/api/v1/query").expect("url");
    let same = reqwest::Url::parse("http://127.0.0.1:9090/prom/api/v1/query").expect("url");
    let other = reqwest::Url::parse("http://127.0.0.1:9091/api/v1/query").expect("url");
    assert_eq!(a.origin(), same.origin());
    assert_ne!(a.origin(), other.origin());
    assert_eq!(origin(&other), "http://127.0.0.1:9091");
}
