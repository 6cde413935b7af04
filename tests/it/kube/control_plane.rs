//! The control plane itself: the pinned version, RBAC on, the static identities.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};

use crate::support::kube::control_plane;

#[tokio::test]
async fn control_plane_is_the_pinned_version_with_rbac_and_static_identities() {
    let plane = control_plane();
    let admin = plane.admin().await;
    let version = admin.apiserver_version().await.expect("version");
    assert_eq!(version.git_version, "v1.36.3");
    let names: Vec<String> = Api::<Namespace>::all(admin)
        .list(&ListParams::default())
        .await
        .expect("admin lists namespaces")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.iter().any(|n| n == "kube-system"), "{names:?}");

    let refused = Api::<Namespace>::all(plane.unprivileged().await)
        .list(&ListParams::default())
        .await
        .expect_err("an unprivileged user may not list namespaces");
    match refused {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden")),
        other => panic!("expected 403, got {other}"),
    }
}
