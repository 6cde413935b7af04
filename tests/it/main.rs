//! The one integration-test binary (`autotests = false`): black-box tests of the real
//! `kerf` binary plus the analysis engine's data-driven suites.

mod support;

mod appliance;
mod audit_pagination;
mod bad_input;
mod events_fault;
mod events_ingest;
mod route_table;
mod ui_shell;
