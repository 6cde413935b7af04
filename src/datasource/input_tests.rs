//! Tests of reading the datasource document into its types, every refusal at once.

use serde_json::json;
use utoipa::PartialSchema;

use super::*;
use crate::datasource::connection::validate;

/// Every (path, message) `validate` reports for `body`, sorted.
fn refused(body: Value) -> Vec<(String, String)> {
    let mut all: Vec<_> = validate(&body, None)
        .expect_err("refused")
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect();
    all.sort();
    all
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all: Vec<_> = list
        .iter()
        .map(|(p, m)| (p.to_string(), m.to_string()))
        .collect();
    all.sort();
    all
}

#[test]
fn every_refused_member_is_named_at_once_with_its_rule_and_never_its_value() {
    let body = json!({
        "name": 5, "url": "http://p:9090", "type": "influx",
        "timeoutSeconds": "hunter2-secret", "protocol": "grpc",
        "maxSeriesPerQuery": -1, "stepSeconds": 30.5, "maxConcurrentQueries": 65,
        "auth": {"type": "digest", "username": "u", "colour": 1},
        "headers": [["X-A", "1"], {"name": "X-B", "value": "2", "secret": "yes"},
                    {"name": "X-C", "value": 3}, 7],
        "tls": [1], "extra": true,
    });
    let integer = |min: u64, max: u64| format!("must be an integer from {min} to {max}");
    let (timeout, concurrent) = (integer(1, 600), integer(1, 64));
    let (series, step) = (integer(10, 1_000_000), integer(10, 3600));
    let expected = pairs(&[
        ("$.name", "must be a string"),
        (
            "$.name",
            "required: 1-100 characters of letters, digits, '-', '_' or '.'",
        ),
        (
            "$.type",
            "must be \"prometheus\" (Prometheus, Thanos, Mimir, VictoriaMetrics)",
        ),
        ("$.timeoutSeconds", &timeout),
        (
            "$.protocol",
            "must be auto, remoteRead, vmExport or queryRange",
        ),
        ("$.maxSeriesPerQuery", &series),
        ("$.stepSeconds", &step),
        ("$.maxConcurrentQueries", &concurrent),
        ("$.auth.type", "must be none, basic or bearer"),
        ("$.auth.colour", "unknown field"),
        ("$.auth.username", "does not belong to auth type \"digest\""),
        ("$.headers[0]", "must be an object"),
        ("$.headers[1].secret", "must be a boolean"),
        ("$.headers[2].value", "must be a string"),
        ("$.headers[2].value", "required"),
        ("$.headers[3]", "must be an object"),
        ("$.tls", "must be an object"),
        ("$.extra", "unknown field"),
    ]);
    let got = refused(body);
    assert_eq!(got, expected);
    assert!(!format!("{got:?}").contains("hunter2"));
}

#[test]
fn a_non_string_where_a_value_of_a_list_is_read_must_be_a_string() {
    let body = json!({"name": "p", "url": "http://p:9090", "type": 1, "protocol": true,
                      "auth": {"type": 2}});
    let expected = pairs(&[
        ("$.type", "must be a string"),
        ("$.protocol", "must be a string"),
        ("$.auth.type", "must be a string"),
    ]);
    assert_eq!(refused(body), expected);
}

#[test]
fn the_body_must_be_an_object_and_its_objects_objects() {
    assert_eq!(
        refused(json!(["p", "http://p:9090"])),
        pairs(&[("$", "must be a JSON object")])
    );
    let body = json!({"name": "p", "url": "http://p:9090", "auth": ["basic", "u", "pw"],
                      "headers": {"name": "X-A"}});
    let expected = pairs(&[
        ("$.auth", "must be an object"),
        ("$.headers", "must be an array"),
    ]);
    assert_eq!(refused(body), expected);
}

#[test]
fn fields_of_another_auth_type_are_refused_naming_the_type() {
    let base = |auth: Value| json!({"name": "p", "url": "http://p:9090", "auth": auth});
    assert_eq!(
        refused(base(json!({"type": "none", "password": "x"}))),
        pairs(&[("$.auth.password", "does not belong to auth type \"none\"")])
    );
    assert_eq!(
        refused(base(
            json!({"type": "basic", "username": "u", "password": "p", "token": "t"})
        )),
        pairs(&[("$.auth.token", "does not belong to auth type \"basic\"")])
    );
    assert_eq!(
        refused(base(
            json!({"type": "bearer", "token": "t", "username": "u"})
        )),
        pairs(&[("$.auth.username", "does not belong to auth type \"bearer\"")])
    );
}

#[test]
fn a_null_reads_as_left_out() {
    // The API refuses nulls before reading; a config file's unset key comes as null.
    let body = json!({"name": "p", "url": "http://p:9090", "clusterLabel": null,
                      "tls": {"caPem": null, "insecureSkipVerify": true}});
    let (settings, _) = validate(&body, None).expect("valid");
    assert_eq!(settings.cluster_label, None);
    assert_eq!(
        (settings.ca_pem, settings.insecure_skip_verify),
        (None, true)
    );
}

#[test]
fn a_body_of_many_bad_members_is_refused_after_a_bounded_number_of_reads() {
    let header = json!({"name": "X-A", "value": "1", "secret": "yes"});
    let body = json!({"name": "p", "url": "http://p:9090", "headers": vec![header; 5000]});
    let errors = validate(&body, None).expect_err("refused");
    assert_eq!(errors.len(), MAX_REFUSED);
    // What is not an object where one is read is refused without reading again.
    let body = json!({"name": "p", "url": "http://p:9090", "headers": vec![1; 5000]});
    assert_eq!(validate(&body, None).expect_err("refused").len(), 5000);
}

#[test]
fn the_input_never_shows_a_secret() {
    let body = json!({"name": "p", "url": "http://p:9090",
                      "auth": {"type": "bearer", "token": "t0ken-value"},
                      "headers": [{"name": "X-K", "value": "k3y-value", "secret": true}]});
    let mut errors = Vec::new();
    let input = read(&body, &mut errors).expect("read");
    let shown = format!("{input:?}");
    assert!(
        !shown.contains("t0ken") && !shown.contains("k3y"),
        "{shown}"
    );
}

#[test]
fn the_documented_ranges_are_the_checked_ones() {
    let schema = serde_json::to_value(DatasourceInput::schema()).expect("schema");
    for (key, min, max) in RANGES {
        let field = &schema["properties"][key];
        assert_eq!(
            (field["minimum"].as_u64(), field["maximum"].as_u64()),
            (Some(min), Some(max)),
            "{key}"
        );
    }
}

#[test]
fn every_protocol_name_is_a_protocol_the_client_knows() {
    use crate::datasource::prometheus::ProtocolChoice;
    for p in [
        ProtocolName::Auto,
        ProtocolName::RemoteRead,
        ProtocolName::VmExport,
        ProtocolName::QueryRange,
    ] {
        let json = serde_json::to_value(p.as_str()).expect("json");
        assert_eq!(serde_json::from_value::<ProtocolName>(json).ok(), Some(p));
        assert!(ProtocolChoice::parse(p.as_str()).is_some(), "{p:?}");
    }
}
