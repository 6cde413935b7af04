//! Whole-input validation (contract §2, §5 steps 1–2): schema, window, targets,
//! inventory counts, current signals and every OOM event; then the deterministic
//! container order with duplicate detection.

use super::error::{go_quote, Error};
use super::input::{ContainerObservation, Input, Signal, INPUT_SCHEMA_VERSION};
use super::oom::validate_oom_kills;

/// The contract's message for an unsupported schema.
pub(crate) fn schema_error(got: &str) -> Error {
    Error::input(format!(
        "unsupported input schema version {} (expected {})",
        go_quote(got),
        go_quote(INPUT_SCHEMA_VERSION)
    ))
}

/// Checks the schema version and the window.
pub(crate) fn validate_header(input: &Input) -> Result<(), Error> {
    if input.schema_version != INPUT_SCHEMA_VERSION {
        return Err(schema_error(&input.schema_version));
    }
    if input.window_start <= 0 || input.evaluation_time <= input.window_start {
        return Err(Error::input(format!(
            "analysis window requires windowStart > 0 and evaluationTime > windowStart \
             (windowStart {}, evaluationTime {})",
            input.window_start, input.evaluation_time
        )));
    }
    Ok(())
}

/// Validates every container and returns their indexes in target-key order.
pub(crate) fn validate_containers(input: &Input) -> Result<Vec<usize>, Error> {
    for (i, c) in input.containers.iter().enumerate() {
        validate_container(c).map_err(|text| Error::input(format!("containers[{i}]: {text}")))?;
    }
    let keys: Vec<String> = input.containers.iter().map(target_key).collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].as_bytes().cmp(keys[b].as_bytes()));
    for pair in order.windows(2) {
        if keys[pair[0]] == keys[pair[1]] {
            return Err(Error::input(format!(
                "containers[{}]: duplicate logical container target {}",
                pair[0].max(pair[1]),
                go_quote(&keys[pair[0]])
            )));
        }
    }
    Ok(order)
}

/// namespace, kind, name and container joined by NUL.
fn target_key(c: &ContainerObservation) -> String {
    let t = &c.target;
    [t.namespace.as_str(), &t.kind, &t.name, &t.container].join("\0")
}

fn validate_container(c: &ContainerObservation) -> Result<(), String> {
    let t = &c.target;
    if t.namespace.is_empty() || t.kind.is_empty() || t.name.is_empty() || t.container.is_empty() {
        return Err("target namespace, kind, name, and container are required".into());
    }
    let inv = &c.inventory;
    if inv.eligible < 0 || inv.observed < 0 || inv.excluded < 0 {
        return Err("negative inventory count".into());
    }
    let signals = [
        ("cpu.currentRequest", &c.cpu.current_request),
        ("cpu.currentLimit", &c.cpu.current_limit),
        ("memory.currentRequest", &c.memory.current_request),
        ("memory.currentLimit", &c.memory.current_limit),
    ];
    for (name, signal) in signals {
        validate_signal(signal).map_err(|text| format!("{name}: {text}"))?;
    }
    validate_oom_kills(&c.oom_kills)
}

fn validate_signal(s: &Signal) -> Result<(), &'static str> {
    if !s.available {
        return Ok(());
    }
    if !(s.value.is_finite() && s.value >= 0.0) {
        return Err("current signal must be finite and nonnegative");
    }
    if s.unset && s.value != 0.0 {
        return Err("unset current signal cannot have a numeric value");
    }
    Ok(())
}
