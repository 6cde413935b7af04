//! Batch validation against the events contract, and its bounded refusals.

use super::*;
use serde_json::json;

fn valid() -> Value {
    json!({
        "id": "6f1c2a8e-0d7b-4c55-a0b1-8f9e2f0d1c3a",
        "type": "rolled_back",
        "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": "payments-prod", "kind": "Deployment", "name": "checkout"},
        "recommendationID": "0b9b5c1e-4f7c-4a52-9a43-1f1d3f6b7c10",
        "strategy": "in-place",
        "resources": ["memory"],
        "containers": [{"name": "app",
            "from": {"requests": {"memory": "384Mi"}, "limits": {"memory": "384Mi"}},
            "to": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}}],
        "reason": "OOMKills",
        "message": "2 OOM kills within 30m after change (threshold 1)",
        "details": {"oomKills": "2", "watchDuration": "30m"}
    })
}

fn errors_of(item: Value) -> Vec<ItemError> {
    match validate_batch(json!([item]).to_string().as_bytes()) {
        Err(BatchError::Items { listed, .. }) => listed,
        other => panic!("expected item errors, got {other:?}"),
    }
}

#[test]
fn the_contract_example_is_valid() {
    let evs = validate_batch(json!([valid()]).to_string().as_bytes()).expect("valid");
    assert_eq!(evs[0].event.reason.as_str(), "OOMKills");
    assert_eq!(evs[0].time_ms, 1_793_787_300_000);
}

#[test]
fn each_broken_field_is_named() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("type", json!("config_changed"), "type"),
        ("type", json!("exploded"), "type"),
        ("reason", json!("ModeOff"), "reason"),
        ("time", json!("yesterday"), "time"),
        ("id", json!("not-a-uuid"), "id"),
        ("resources", json!(["disk"]), "resources[0]"),
        ("message", json!("x".repeat(1025)), "message"),
        ("details", json!({"a": 1}), "details.a"),
        (
            "workload",
            json!({"namespace": "a", "kind": "Deployment"}),
            "workload.name",
        ),
        ("surprise", json!(true), "surprise"),
        ("strategy", json!("yolo"), "strategy"),
    ];
    for (field, value, expect) in cases {
        let mut item = valid();
        item[field] = value;
        let errs = errors_of(item);
        assert!(errs.iter().any(|e| e.field == expect), "{field}: {errs:?}");
        assert!(errs.iter().all(|e| e.index == 0));
    }
}

#[test]
fn required_fields_depend_on_the_type() {
    let mut item = valid();
    item.as_object_mut().unwrap().remove("containers");
    assert!(errors_of(item.clone())
        .iter()
        .any(|e| e.field == "containers"));
    item["type"] = json!("blocked");
    item["reason"] = json!("Paused");
    item.as_object_mut().unwrap().remove("strategy");
    assert!(validate_batch(json!([item]).to_string().as_bytes()).is_ok());
}

#[test]
fn a_fallback_must_name_rollout_as_its_strategy() {
    let mut item = valid();
    item["type"] = json!("fallback");
    item["reason"] = json!("ResizeInfeasible");
    item["strategy"] = json!("in-place");
    let errs = errors_of(item.clone());
    assert!(errs.iter().any(|e| e.field == "strategy"), "{errs:?}");
    item["strategy"] = json!("rollout");
    assert!(validate_batch(json!([item]).to_string().as_bytes()).is_ok());
}

#[test]
fn an_approved_once_must_name_the_approval_it_consumes() {
    let mut item = valid();
    item["type"] = json!("applied");
    item["reason"] = json!("ApprovedOnce");
    item["details"] = json!({"approvedBy": "ann"});
    let errs = errors_of(item.clone());
    assert!(
        errs.iter().any(|e| e.field == "details.approvalId"),
        "{errs:?}"
    );
    item["details"] = json!({"approvalId": "a-1", "approvedBy": "ann"});
    let evs = validate_batch(json!([item]).to_string().as_bytes()).expect("valid");
    assert_eq!(evs[0].event.approval_id(), Some("a-1"));
}

#[test]
fn a_message_of_1024_multibyte_characters_is_accepted() {
    let mut item = valid();
    item["message"] = json!("é".repeat(1024));
    assert!(validate_batch(json!([item]).to_string().as_bytes()).is_ok());
}

#[test]
fn non_arrays_and_oversized_batches_are_refused() {
    assert!(matches!(validate_batch(b"{}"), Err(BatchError::NotArray)));
    assert!(matches!(validate_batch(b"[1,"), Err(BatchError::Json(_))));
    let many = Value::Array(vec![valid(); 1001]).to_string();
    assert!(matches!(
        validate_batch(many.as_bytes()),
        Err(BatchError::TooMany(1001))
    ));
}

#[test]
fn a_hostile_item_gets_an_answer_bounded_by_the_caps_not_by_its_size() {
    // The original attack: one 30,000-character id and 3,000 unknown keys.
    let mut item = valid();
    item["id"] = json!("i".repeat(30_000));
    for k in 0..3000 {
        item[format!("{k:04}{}", "k".repeat(300))] = json!(1);
    }
    let batch = json!([item.clone(), item.clone(), valid()]).to_string();
    let Err(BatchError::Items { listed, total }) = validate_batch(batch.as_bytes()) else {
        panic!("refused");
    };
    assert_eq!(total, 2 * 3001, "every problem is counted");
    assert_eq!(listed.len(), 2 * MAX_ERRORS_PER_ITEM);
    for e in &listed {
        assert!(e.id.as_deref().is_some_and(|id| id.chars().count() <= 65));
        assert!(e.field.chars().count() <= 65 && e.reason.chars().count() <= 201);
    }
    let answer = serde_json::to_string(&listed).expect("json");
    assert!(answer.len() < 8 * 1024, "{} bytes", answer.len());
}

#[test]
fn a_batch_lists_at_most_its_cap_of_problems() {
    let mut bad = valid();
    bad["type"] = json!("x".repeat(5000));
    let batch = Value::Array(vec![bad; 1000]).to_string();
    let Err(BatchError::Items { listed, total }) = validate_batch(batch.as_bytes()) else {
        panic!("refused");
    };
    assert_eq!((listed.len(), total), (MAX_BATCH_ERRORS, 1000));
    assert!(
        listed[0].reason.chars().count() < 100,
        "{}",
        listed[0].reason
    );
}
