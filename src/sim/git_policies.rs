//! The demo clusters' own RightsizingPolicy objects, as a team that keeps its policies
//! in Git would have applied them: the in-process cluster holds them (generation 1, a
//! uid of the seed) and `kerf demo` tells the hub of them before its first run, exactly
//! as the cluster's agent then reports them, so no recommendation of the first run is
//! made under a policy that is about to change.

use serde_json::{json, Value};

use super::shape::Rng;

/// The objects of demo cluster `cluster`: `(name, spec)`.
pub fn objects(cluster: &str) -> Vec<(&'static str, Value)> {
    match cluster {
        "demo-west" => vec![(
            "auth-from-git",
            json!({
                "description": "auth on demo-west, from the identity team's Git repository: recommended only, at high confidence, and at most one change in two days",
                "selector": { "namespaces": ["auth"] },
                "mode": { "cpu": "audit", "memory": "audit" },
                "guardrails": { "minConfidence": 80, "cooldown": "48h" },
            }),
        )],
        _ => Vec::new(),
    }
}

/// The uid of object `name` of `cluster` in the world of `seed`.
pub fn uid(seed: u64, cluster: &str, name: &str) -> String {
    Rng::new(seed, &format!("git-policy/{cluster}/{name}")).uuid()
}
