//! The one integration-test binary (`autotests = false`): black-box tests of the real
//! `kerf` binary plus the analysis engine's data-driven suites.

mod support;

mod access_matrix;
mod analysis_cli;
mod analysis_fuzz;
mod analysis_golden;
mod analysis_leak_golden;
mod analysis_props;
mod appliance;
mod approval_consumption;
mod audit_pagination;
mod backup_restore;
mod bad_input;
mod body_shapes;
mod datasource_api;
mod datasource_link_audit;
mod datasource_oom_limit;
mod datasource_prometheus;
mod datasource_protocols;
mod events_fault;
mod events_ingest;
mod fleet_audit;
mod fleet_clock;
mod identity;
mod identity_audit;
mod jobs_supervision;
mod kube;
mod module_fence;
mod notify_api;
mod notify_delivery;
mod notify_digest;
mod notify_restart;
mod notify_teams;
mod one_clock;
mod openapi_document;
mod policies_api;
mod route_table;
mod runs_api;
mod runs_stale;
mod ui_shell;
mod ui_size;
mod workload_policy;
mod workload_scope;
