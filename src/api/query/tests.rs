use serde::Deserialize;
use serde_json::json;

use super::params::{limit, LogWindow};
use super::*;

#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
struct Page {
    #[serde(deserialize_with = "limit")]
    limit: Option<usize>,
    flag: Option<bool>,
    order: Option<Order>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Order {
    Asc,
    Desc,
}

fn refusal<T: DeserializeOwned + std::fmt::Debug>(q: &str) -> (String, Value) {
    let e = parse::<T>(Some(q)).unwrap_err();
    assert_eq!((e.status.as_u16(), e.code), (400, "invalid_query"), "{q}");
    (e.message, e.details)
}

#[test]
fn cursors_round_trip_and_junk_is_refused() {
    let v = json!(["api", "wl-1"]);
    assert_eq!(decode_cursor("next", &encode_cursor(&v)).unwrap(), v);
    assert!(decode_cursor("next", "%%%").is_err());
    assert_eq!(
        refusal::<Page>("limit=0").0,
        "limit: must be an integer from 1 to 500"
    );
    assert!(parse::<Page>(Some("limit=501")).is_err());
    assert_eq!(parse::<Page>(Some("limit=500")).unwrap().limit, Some(500));
}

#[test]
fn every_refusal_names_the_parameter_and_why() {
    let cases = [
        ("who=me", "who: unknown parameter", "who"),
        ("flag=yes", "flag: must be true or false", "flag"),
        ("order=up", "order: must be asc or desc", "order"),
        ("limit=2&limit=3", "limit: is given twice", "limit"),
        (
            "flag=",
            "flag: must not be empty; leave the parameter out instead",
            "flag",
        ),
    ];
    for (q, message, parameter) in cases {
        let (m, details) = refusal::<Page>(q);
        assert_eq!(m, message, "{q}");
        assert_eq!(details, json!({ "parameter": parameter }), "{q}");
    }
    let page = parse::<Page>(Some("order=desc&flag=true")).unwrap();
    assert_eq!((page.order, page.flag), (Some(Order::Desc), Some(true)));
    assert_eq!(parse::<Page>(None).unwrap(), Page::default());
}

#[test]
fn the_first_fault_in_query_order_is_answered_across_groups() {
    type Both = (Page, LogWindow);
    assert_eq!(
        refusal::<Both>("since=x&limit=0").0,
        "since: must be an RFC 3339 timestamp"
    );
    assert_eq!(
        refusal::<Both>("flag=1&since=x").0,
        "flag: must be true or false"
    );
    assert_eq!(
        refusal::<Both>("until=x&who=me").0,
        "until: must be an RFC 3339 timestamp"
    );
    assert_eq!(
        refusal::<Both>("who=me&until=x").0,
        "who: unknown parameter"
    );
    let (page, window) = parse::<Both>(Some("next=eyJzIjo1fQ&flag=false")).unwrap();
    assert_eq!((page.flag, window.before_seq), (Some(false), Some(5)));
}
