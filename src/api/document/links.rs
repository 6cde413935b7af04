//! The document's links: how the answer of one operation names what another takes (the
//! id a create returns, the version a policy write needs, the next page of a log). A
//! reader sees the workflows; a stateful fuzzer (schemathesis) follows them.

use yaml_serde::{Mapping, Value};

/// One link: from an operation's answer to an operation and the values it takes.
struct Link {
    from: &'static str,
    status: &'static str,
    to: &'static str,
    /// `(parameter, runtime expression)`; `header.X` for a header.
    parameters: &'static [(&'static str, &'static str)],
    /// A body built from runtime expressions, as JSON text.
    body: Option<&'static str>,
}

const fn link(
    from: &'static str,
    status: &'static str,
    to: &'static str,
    parameters: &'static [(&'static str, &'static str)],
) -> Link {
    Link {
        from,
        status,
        to,
        parameters,
        body: None,
    }
}

const ID: &[(&str, &str)] = &[("id", "$response.body#/id")];
const POLICY: &[(&str, &str)] = &[
    ("id", "$response.body#/id"),
    ("header.If-Match", "\"{$response.body#/version}\""),
];
const POLICY_VERSION: &[(&str, &str)] = &[
    ("id", "$response.body#/id"),
    ("version", "$response.body#/version"),
];
const CLUSTER: &[(&str, &str)] = &[("cluster", "$response.body#/name")];
const FIRST_ITEM: &[(&str, &str)] = &[("id", "$response.body#/items/0/id")];
const SAME_ID: &[(&str, &str)] = &[("id", "$request.path.id")];
const NEXT_PAGE: &[(&str, &str)] = &[("next", "$response.body#/next")];

const LINKS: &[Link] = &[
    // Policies: every write answers the new version, which the next write names.
    link("postPolicies", "201", "getPoliciesById", ID),
    link("postPolicies", "201", "putPoliciesById", POLICY),
    link("postPolicies", "201", "deletePoliciesById", POLICY),
    link("postPolicies", "201", "getPoliciesByIdVersions", ID),
    link(
        "postPolicies",
        "201",
        "getPoliciesByIdVersionsByVersion",
        POLICY_VERSION,
    ),
    link("putPoliciesById", "200", "putPoliciesById", POLICY),
    link("putPoliciesById", "200", "postPoliciesByIdRevert", POLICY),
    link("putPoliciesById", "200", "deletePoliciesById", POLICY),
    link("postPoliciesByIdRevert", "200", "getPoliciesById", ID),
    // Accounts.
    link("postAdminUsers", "201", "getAdminUsersById", ID),
    link("postAdminUsers", "201", "patchAdminUsersById", ID),
    link(
        "postAdminUsers",
        "201",
        "postAdminUsersByIdPasswordReset",
        ID,
    ),
    link("postAdminUsers", "201", "deleteAdminUsersById", ID),
    link("postAdminTokens", "201", "deleteAdminTokensById", ID),
    link("postAdminTeams", "201", "getAdminTeamsById", ID),
    link("postAdminTeams", "201", "patchAdminTeamsById", ID),
    link("postAdminTeams", "201", "putAdminTeamsByIdMembers", ID),
    link("postAdminTeams", "201", "deleteAdminTeamsById", ID),
    // Datasources.
    link("postDatasources", "201", "getDatasourcesById", ID),
    link("postDatasources", "201", "putDatasourcesById", ID),
    link("postDatasources", "201", "postDatasourcesByIdTest", ID),
    link("postDatasources", "201", "deleteDatasourcesById", ID),
    // Clusters.
    link("postClusters", "201", "getClustersByCluster", CLUSTER),
    link("postClusters", "201", "patchClustersByCluster", CLUSTER),
    link("postClusters", "201", "postClustersByClusterToken", CLUSTER),
    link("postClusters", "201", "putClustersByClusterFreeze", CLUSTER),
    link(
        "postClusters",
        "201",
        "getClustersByClusterReadiness",
        CLUSTER,
    ),
    link("postClusters", "201", "postClustersByClusterPause", CLUSTER),
    link(
        "postClusters",
        "201",
        "postClustersByClusterResume",
        CLUSTER,
    ),
    link("postClusters", "201", "postClustersByClusterRuns", CLUSTER),
    link("postClusters", "201", "deleteClustersByCluster", CLUSTER),
    link("postClustersByClusterRuns", "202", "getRunsById", ID),
    // Workloads: from the list to one, and from one to what it has.
    link("getWorkloads", "200", "getWorkloadsById", FIRST_ITEM),
    link(
        "getWorkloadsById",
        "200",
        "getWorkloadsByIdRecommendations",
        ID,
    ),
    link("getWorkloadsById", "200", "getWorkloadsByIdUsage", ID),
    link("getWorkloadsById", "200", "getWorkloadsByIdPolicy", ID),
    link("getWorkloadsById", "200", "getWorkloadsByIdHistory", ID),
    link("getWorkloadsById", "200", "putWorkloadsByIdOverride", ID),
    link("getWorkloadsById", "200", "deleteWorkloadsByIdOverride", ID),
    Link {
        from: "getWorkloadsByIdRecommendations",
        status: "200",
        to: "postWorkloadsByIdApprove",
        parameters: SAME_ID,
        body: Some(r#"{"recommendationId": "$response.body#/items/0/id"}"#),
    },
    // Notifications.
    link(
        "postNotificationsChannels",
        "201",
        "getNotificationsChannelsById",
        ID,
    ),
    link(
        "postNotificationsChannels",
        "201",
        "putNotificationsChannelsById",
        ID,
    ),
    link(
        "postNotificationsChannels",
        "201",
        "postNotificationsChannelsByIdTest",
        ID,
    ),
    link(
        "postNotificationsChannels",
        "201",
        "getNotificationsChannelsByIdDigest",
        ID,
    ),
    link(
        "postNotificationsChannels",
        "201",
        "putNotificationsChannelsByIdDigest",
        ID,
    ),
    link(
        "postNotificationsChannels",
        "201",
        "deleteNotificationsChannelsById",
        ID,
    ),
    link(
        "postNotificationsRules",
        "201",
        "getNotificationsRulesById",
        ID,
    ),
    link(
        "postNotificationsRules",
        "201",
        "putNotificationsRulesById",
        ID,
    ),
    link(
        "postNotificationsRules",
        "201",
        "deleteNotificationsRulesById",
        ID,
    ),
    link(
        "getNotificationsDeliveries",
        "200",
        "getNotificationsDeliveriesById",
        FIRST_ITEM,
    ),
    link("getRuns", "200", "getRunsById", FIRST_ITEM),
    // Cursor pages.
    link("getAudit", "200", "getAudit", NEXT_PAGE),
    link("getAuditConfig", "200", "getAuditConfig", NEXT_PAGE),
    link("getRuns", "200", "getRuns", NEXT_PAGE),
    link(
        "getNotificationsDeliveries",
        "200",
        "getNotificationsDeliveries",
        NEXT_PAGE,
    ),
];

/// Adds [`LINKS`] to the operations of `doc`. A link naming an operation or answer the
/// document lacks is a bug in this table.
pub fn add(doc: &mut Value) {
    let mut ids = std::collections::BTreeSet::new();
    for op in operations(doc) {
        if let Some(id) = op["operationId"].as_str() {
            ids.insert(id.to_string());
        }
    }
    for l in LINKS {
        assert!(ids.contains(l.to), "link to unknown operation {}", l.to);
        let mut link = Mapping::new();
        link.insert("operationId".into(), l.to.into());
        let mut params = Mapping::new();
        for (k, v) in l.parameters {
            params.insert((*k).into(), (*v).into());
        }
        link.insert("parameters".into(), Value::Mapping(params));
        if let Some(body) = l.body {
            let body: Value = yaml_serde::from_str(body).expect("a link body is JSON");
            link.insert("requestBody".into(), body);
        }
        let name = format!("{}{}", to_upper_first(l.to), link_suffix(l.parameters));
        let response = operations(doc)
            .find(|op| op["operationId"].as_str() == Some(l.from))
            .and_then(|op| op.get_mut("responses"))
            .and_then(|r| r.get_mut(l.status))
            .and_then(Value::as_mapping_mut)
            .unwrap_or_else(|| panic!("link from unknown answer {} {}", l.from, l.status));
        let links = response
            .entry("links".into())
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if let Some(links) = links.as_mapping_mut() {
            links.insert(name.into(), Value::Mapping(link));
        }
    }
}

/// Every operation of `doc`.
pub fn operations(doc: &mut Value) -> impl Iterator<Item = &mut Value> {
    doc.get_mut("paths")
        .and_then(Value::as_mapping_mut)
        .into_iter()
        .flat_map(|paths| paths.values_mut())
        .filter_map(Value::as_mapping_mut)
        .flat_map(|item| item.values_mut())
}

fn to_upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Tells apart two links to one operation (a page and an item).
fn link_suffix(parameters: &[(&str, &str)]) -> &'static str {
    if parameters == NEXT_PAGE {
        "NextPage"
    } else {
        ""
    }
}
