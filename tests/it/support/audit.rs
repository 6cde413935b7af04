//! Checks of the audit trail's configuration-change rows (`/v1/audit/config`).

use serde_json::Value;

/// The one change with `action` and `reason`, checked for actor, target and sides.
pub fn assert_change(
    items: &[Value],
    reason: &str,
    actor: &str,
    target: (&str, &str),
    sides: (bool, bool),
) -> Value {
    let c = items
        .iter()
        .find(|c| c["reason"] == reason)
        .unwrap_or_else(|| panic!("no change with reason {reason}: {items:#?}"));
    assert_eq!(c["actor"]["name"], actor, "{c}");
    assert_eq!(
        (c["target"]["type"].as_str(), c["target"]["id"].as_str()),
        (Some(target.0), Some(target.1)),
        "{c}"
    );
    assert_eq!(
        (c["before"].is_object(), c["after"].is_object()),
        sides,
        "{c}"
    );
    c.clone()
}
