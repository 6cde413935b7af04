//! A RightsizingPolicy object of a cluster (`kerf.getkerf.dev/v1alpha1`, cluster-scoped)
//! read as the policy document: its `spec` with `name` = `metadata.name`. The agent
//! judges each object with this (its status condition and Event) and the hub judges the
//! same object again with it before anything takes effect, so both say the same.

use serde_json::Value;

use super::model::PolicySpec;
use super::validate::{validate_policy, FieldError};

/// The policy document of the object named `name` with `spec`, or every problem with
/// its path from the object's root (`spec.guardrails.cooldown`, `metadata.name`).
pub fn document_of(name: &str, spec: &Value) -> Result<PolicySpec, Vec<FieldError>> {
    let one = |path: &str, message: &str| {
        vec![FieldError {
            path: path.into(),
            message: message.into(),
        }]
    };
    let mut fields = match spec {
        Value::Object(o) => o.clone(),
        Value::Null => serde_json::Map::new(),
        _ => return Err(one("spec", "must be an object")),
    };
    if fields.contains_key("name") {
        return Err(one(
            "spec.name",
            "must not be set: the policy's name is metadata.name",
        ));
    }
    fields.insert("name".into(), Value::String(name.to_string()));
    let doc: PolicySpec = serde_path_to_error::deserialize(Value::Object(fields)).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        one(&format!("spec.{path}"), &message)
    })?;
    let errors: Vec<FieldError> = validate_policy(&doc)
        .into_iter()
        .map(|e| FieldError {
            path: if e.path == "name" {
                "metadata.name".into()
            } else {
                format!("spec.{}", e.path)
            },
            message: e.message,
        })
        .collect();
    if errors.is_empty() {
        Ok(doc)
    } else {
        Err(errors)
    }
}

/// The problems in one line, for a status condition, an Event and a log.
pub fn summary(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_valid_spec_takes_its_name_from_the_object() {
        let doc = document_of(
            "prod-web",
            &json!({"priority": 5, "mode": {"cpu": "auto-patch"}}),
        )
        .expect("valid");
        assert_eq!(doc.name, "prod-web");
        assert_eq!(doc.priority, 5);
        assert_eq!(
            document_of("empty", &Value::Null).expect("valid").name,
            "empty"
        );
    }

    #[test]
    fn every_problem_is_named_from_the_objects_root() {
        let errors = document_of(
            "web",
            &json!({"guardrails": {"cooldown": "soon"}, "priority": 5000}),
        )
        .expect_err("invalid");
        let paths: Vec<_> = errors.iter().map(|e| e.path.as_str()).collect();
        assert!(paths.contains(&"spec.priority"), "{paths:?}");
        assert!(paths.contains(&"spec.guardrails.cooldown"), "{paths:?}");
        let wrong_type = document_of("web", &json!({"mode": {"cpu": "always"}})).unwrap_err();
        assert_eq!(wrong_type[0].path, "spec.mode.cpu");
        assert!(summary(&wrong_type).starts_with("spec.mode.cpu: unknown variant"));
        let named = document_of("web", &json!({"name": "other"})).unwrap_err();
        assert_eq!(named[0].path, "spec.name");
        let bad_name = document_of("Web_1", &json!({})).unwrap_err();
        assert_eq!(bad_name[0].path, "metadata.name");
        assert_eq!(document_of("web", &json!([1])).unwrap_err()[0].path, "spec");
    }
}
