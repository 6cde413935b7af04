//! The recommendations as they leave kerf: each container's plan (what the agent would
//! set, as Kubernetes quantities rounded as it rounds) and the export formats (CSV, JSON,
//! server-side apply YAML). The hub's export endpoint and `kerf scan` print the same.

pub mod plan;
pub mod render;
