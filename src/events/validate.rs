//! Validation of an agent's event batch against the events contract. A batch is
//! accepted whole or refused whole; a refusal names the bad items by index, id and field
//! so the sender can drop exactly those and resend the rest. What a refusal echoes is
//! bounded: values are clipped, at most [`MAX_ERRORS_PER_ITEM`] problems are listed per
//! item and [`MAX_BATCH_ERRORS`] per batch, with the total counted, so a hostile body
//! cannot make the answer (or the work) grow faster than the body.

use serde::Serialize;
use serde_json::{Map, Value};

use super::quantity::is_quantity;
use super::wellknown as wk;
use crate::wire::event::{AgentEvent, EventType};
use crate::workload::WorkloadKey;

/// Most items in one batch.
pub const MAX_BATCH_ITEMS: usize = 1000;
/// Most problems listed for one item; the rest are counted.
pub const MAX_ERRORS_PER_ITEM: usize = 10;
/// Most problems listed for one batch; the rest are counted.
pub const MAX_BATCH_ERRORS: usize = 100;
/// Characters of a client's value (an id, a field name, a type) echoed in a problem.
const ECHO_CHARS: usize = 64;
/// Characters of a problem's reason.
const REASON_CHARS: usize = 200;

/// One problem with one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemError {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub field: String,
    pub reason: String,
}

/// Why a batch was refused.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("body is not valid JSON: {0}")]
    Json(String),
    #[error("body must be a JSON array of events")]
    NotArray,
    #[error("batch has {0} items; at most 1000 are accepted per request")]
    TooMany(usize),
    #[error(
        "{total} problem(s) in the batch (the first {} listed); nothing was stored",
        listed.len()
    )]
    Items {
        /// The first problems, at most [`MAX_BATCH_ERRORS`].
        listed: Vec<ItemError>,
        /// Every problem found, listed or not.
        total: usize,
    },
}

/// `s` cut to `max` characters, marked with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// An event that passed validation: the typed event (with its canonical, lower-case
/// hyphenated id), its time and the JSON the audit API returns.
#[derive(Debug, Clone)]
pub struct ValidEvent {
    pub event: AgentEvent,
    pub time_ms: i64,
    /// The event as compact JSON, returned by the audit API.
    pub payload: String,
}

const FIELDS: &[&str] = &[
    "id",
    "type",
    "time",
    "workload",
    "reason",
    "recommendationID",
    "strategy",
    "resources",
    "containers",
    "message",
    "details",
];

/// Parses and validates a batch body.
pub fn validate_batch(body: &[u8]) -> Result<Vec<ValidEvent>, BatchError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| BatchError::Json(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(BatchError::NotArray);
    };
    if items.len() > MAX_BATCH_ITEMS {
        return Err(BatchError::TooMany(items.len()));
    }
    let mut out = Vec::with_capacity(items.len());
    let (mut listed, mut total) = (Vec::new(), 0);
    for (index, item) in items.into_iter().enumerate() {
        match validate_item(index, item) {
            Ok(ev) => out.push(ev),
            Err((errs, unlisted)) => {
                total += errs.len() + unlisted;
                let room = MAX_BATCH_ERRORS.saturating_sub(listed.len());
                listed.extend(errs.into_iter().take(room));
            }
        }
    }
    if total == 0 {
        Ok(out)
    } else {
        Err(BatchError::Items { listed, total })
    }
}

struct Check {
    index: usize,
    /// The item's id as sent, clipped.
    id: Option<String>,
    errors: Vec<ItemError>,
    /// Problems found past [`MAX_ERRORS_PER_ITEM`].
    unlisted: usize,
}

/// An item's problems: the listed ones and how many more there were.
type Problems = (Vec<ItemError>, usize);

impl Check {
    fn fail(&mut self, field: &str, reason: impl Into<String>) {
        if self.errors.len() >= MAX_ERRORS_PER_ITEM {
            self.unlisted += 1;
            return;
        }
        let error = problem(self.index, self.id.clone(), field, &reason.into());
        self.errors.push(error);
    }

    fn problems(self) -> Problems {
        (self.errors, self.unlisted)
    }

    fn string<'a>(
        &mut self,
        obj: &'a Map<String, Value>,
        field: &str,
        required: bool,
    ) -> Option<&'a str> {
        match obj.get(field) {
            None | Some(Value::Null) => {
                if required {
                    self.fail(field, "is required");
                }
                None
            }
            Some(Value::String(s)) if s.is_empty() && required => {
                self.fail(field, "must not be empty");
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                self.fail(field, "must be a string");
                None
            }
        }
    }
}

fn validate_item(index: usize, item: Value) -> Result<ValidEvent, Problems> {
    let Value::Object(mut obj) = item else {
        return Err((
            vec![problem(index, None, "", "item must be a JSON object")],
            0,
        ));
    };
    let raw_id = obj
        .get("id")
        .and_then(Value::as_str)
        .map(|s| clip(s, ECHO_CHARS));
    let mut c = Check {
        index,
        id: raw_id,
        errors: Vec::new(),
        unlisted: 0,
    };
    for key in obj.keys() {
        if !FIELDS.contains(&key.as_str()) {
            c.fail(key, "unknown field");
        }
    }
    let id = c
        .string(&obj, "id", true)
        .and_then(|s| match uuid::Uuid::parse_str(s) {
            Ok(u) => Some(u.hyphenated().to_string()),
            Err(_) => {
                c.fail("id", "must be a UUID");
                None
            }
        });
    let event_type = c.string(&obj, "type", true).map(str::to_string);
    let reasons = match event_type.as_deref() {
        Some(wk::CONFIG_CHANGED) => {
            c.fail(
                "type",
                "config_changed is recorded by the hub and cannot be sent",
            );
            None
        }
        Some(t) => wk::reasons_for(t).or_else(|| {
            c.fail("type", format!("unknown type {:?}", clip(t, ECHO_CHARS)));
            None
        }),
        None => None,
    };
    let reason = c.string(&obj, "reason", true).map(str::to_string);
    if let (Some(reason), Some(allowed), Some(t)) = (&reason, reasons, &event_type) {
        if !allowed.contains(&reason.as_str()) {
            let reason = clip(reason, ECHO_CHARS);
            c.fail("reason", format!("{reason:?} is not a reason of type {t}"));
        }
    }
    let time_ms = c
        .string(&obj, "time", true)
        .and_then(|s| match crate::timestamp::parse_ms(s) {
            Some(ms) => Some(ms),
            None => {
                c.fail("time", "must be an RFC 3339 timestamp");
                None
            }
        });
    let workload = check_workload(&mut c, obj.get("workload"));
    let recommendation_id = c
        .string(&obj, "recommendationID", false)
        .map(str::to_string);
    if recommendation_id.as_ref().is_some_and(|r| r.len() > 128) {
        c.fail("recommendationID", "must be at most 128 characters");
    }
    check_optional_fields(&mut c, &obj, event_type.as_deref());
    if reason.as_deref() == Some("ApprovedOnce") {
        let approval = obj.get("details").and_then(|d| d.get("approvalId"));
        if approval.and_then(Value::as_str).is_none_or(str::is_empty) {
            c.fail(
                "details.approvalId",
                "is required on ApprovedOnce: the id of the approval applied",
            );
        }
    }
    if !c.errors.is_empty() {
        return Err(c.problems());
    }
    let (Some(id), Some(time_ms), Some(_)) = (id, time_ms, workload) else {
        return Err((vec![problem(index, c.id, "", "incomplete item")], 0));
    };
    obj.insert("id".into(), Value::String(id));
    // Null stands for absent everywhere in the contract.
    obj.retain(|_, v| !v.is_null());
    let one = |reason: String| (vec![problem(index, c.id.clone(), "", &reason)], 0);
    let event: AgentEvent =
        serde_json::from_value(Value::Object(obj)).map_err(|e| one(e.to_string()))?;
    let payload = serde_json::to_string(&event).map_err(|e| one(e.to_string()))?;
    Ok(ValidEvent {
        event,
        time_ms,
        payload,
    })
}

/// One problem, with the client's text in it clipped.
fn problem(index: usize, id: Option<String>, field: &str, reason: &str) -> ItemError {
    ItemError {
        index,
        id,
        field: clip(field, ECHO_CHARS),
        reason: clip(reason, REASON_CHARS),
    }
}

fn check_workload(c: &mut Check, v: Option<&Value>) -> Option<WorkloadKey> {
    let obj = match v {
        Some(Value::Object(o)) => o,
        None | Some(Value::Null) => {
            c.fail("workload", "is required");
            return None;
        }
        Some(_) => {
            c.fail(
                "workload",
                "must be an object with namespace, kind and name",
            );
            return None;
        }
    };
    for key in obj.keys() {
        if !["namespace", "kind", "name"].contains(&key.as_str()) {
            c.fail(&format!("workload.{key}"), "unknown field");
        }
    }
    let mut part = |f: &str| -> Option<String> {
        let field = format!("workload.{f}");
        match obj.get(f) {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= 253 => Some(s.clone()),
            Some(Value::String(s)) if !s.is_empty() => {
                c.fail(&field, "must be at most 253 characters");
                None
            }
            Some(Value::String(_)) | None | Some(Value::Null) => {
                c.fail(&field, "is required");
                None
            }
            Some(_) => {
                c.fail(&field, "must be a string");
                None
            }
        }
    };
    let (namespace, kind, name) = (part("namespace"), part("kind"), part("name"));
    Some(WorkloadKey {
        namespace: namespace?,
        kind: kind?,
        name: name?,
    })
}

fn check_optional_fields(c: &mut Check, obj: &Map<String, Value>, event_type: Option<&str>) {
    let event_type = event_type.and_then(EventType::parse);
    if let Some(s) = c.string(
        obj,
        "strategy",
        event_type.is_some_and(EventType::needs_strategy),
    ) {
        if !wk::STRATEGIES.contains(&s) {
            c.fail("strategy", "must be in-place, rollout or deferred");
        } else if event_type == Some(EventType::Fallback) && s != "rollout" {
            // A fallback is the switch from in-place to a rollout: it names the new one.
            c.fail("strategy", "a fallback's strategy is rollout");
        }
    }
    match obj.get("resources") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            let mut seen = Vec::new();
            for (i, r) in list.iter().enumerate() {
                match r.as_str() {
                    Some(s) if wk::RESOURCES.contains(&s) && !seen.contains(&s) => seen.push(s),
                    Some(s) if seen.contains(&s) => {
                        c.fail(&format!("resources[{i}]"), "listed twice")
                    }
                    _ => c.fail(&format!("resources[{i}]"), "must be cpu or memory"),
                }
            }
        }
        Some(_) => c.fail("resources", "must be an array of cpu and memory"),
    }
    check_containers(
        c,
        obj.get("containers"),
        event_type.is_some_and(EventType::needs_containers),
    );
    if let Some(m) = c.string(obj, "message", false) {
        if m.chars().count() > wk::MAX_MESSAGE_CHARS {
            c.fail("message", "must be at most 1024 characters");
        }
    }
    match obj.get("details") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                if !v.is_string() {
                    c.fail(&format!("details.{k}"), "must be a string");
                }
            }
        }
        Some(_) => c.fail("details", "must be an object of string values"),
    }
}

fn check_containers(c: &mut Check, v: Option<&Value>, required: bool) {
    let list = match v {
        None | Some(Value::Null) => {
            if required {
                c.fail("containers", "is required for this type");
            }
            return;
        }
        Some(Value::Array(list)) => list,
        Some(_) => return c.fail("containers", "must be an array"),
    };
    if required && list.is_empty() {
        c.fail("containers", "must list the changed containers");
    }
    for (i, item) in list.iter().enumerate() {
        let at = format!("containers[{i}]");
        let Some(obj) = item.as_object() else {
            c.fail(&at, "must be an object");
            continue;
        };
        for key in obj.keys() {
            if !["name", "from", "to"].contains(&key.as_str()) {
                c.fail(&format!("{at}.{key}"), "unknown field");
            }
        }
        if obj
            .get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            c.fail(&format!("{at}.name"), "is required");
        }
        for side in ["from", "to"] {
            check_settings(c, &format!("{at}.{side}"), obj.get(side));
        }
    }
}

fn check_settings(c: &mut Check, at: &str, v: Option<&Value>) {
    let obj = match v {
        Some(Value::Object(o)) => o,
        None | Some(Value::Null) => return c.fail(at, "is required"),
        Some(_) => return c.fail(at, "must be an object with requests and/or limits"),
    };
    for (setting, values) in obj {
        let here = format!("{at}.{setting}");
        if setting != "requests" && setting != "limits" {
            c.fail(&here, "unknown field");
            continue;
        }
        let Some(values) = values.as_object() else {
            c.fail(&here, "must be an object of quantities");
            continue;
        };
        for (resource, q) in values {
            let field = format!("{here}.{resource}");
            if !wk::RESOURCES.contains(&resource.as_str()) {
                c.fail(&field, "must be cpu or memory");
            } else if !q.as_str().is_some_and(is_quantity) {
                c.fail(
                    &field,
                    "must be a Kubernetes quantity such as 250m or 384Mi",
                );
            }
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
