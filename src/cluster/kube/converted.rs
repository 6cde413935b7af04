//! The Kubernetes view's conversions kept between snapshots, by object uid and resource
//! version: the agent takes a snapshot every pass, and converting every object of every
//! reflector each time made a steady pass grow with the cluster's size, not with what
//! changed. An object converts again only when the API server gave it a new resource
//! version (or, for a pod, when the Deployment its ReplicaSet belongs to is resolved
//! differently); entries of objects gone from the stores are dropped at the end of
//! each snapshot.

use std::collections::HashMap;
use std::sync::Arc;

use kube::Resource;

/// One kind's conversions.
pub struct Converted<T> {
    entries: HashMap<String, Entry<T>>,
    /// The snapshot being built (entries not seen in it are dropped by [`Converted::end`]).
    pass: u64,
}

struct Entry<T> {
    version: String,
    value: Option<Arc<T>>,
    seen: u64,
}

impl<T> Default for Converted<T> {
    fn default() -> Self {
        Converted {
            entries: HashMap::new(),
            pass: 0,
        }
    }
}

impl<T> Converted<T> {
    /// Starts a snapshot.
    pub fn begin(&mut self) {
        self.pass += 1;
    }

    /// `object` converted: the kept conversion while its resource version is the same
    /// and `still` accepts it, else `convert`'s (kept for the next snapshot). An object
    /// without a uid or a resource version is converted every time.
    pub fn get<K: Resource>(
        &mut self,
        object: &K,
        still: impl FnOnce(&T) -> bool,
        convert: impl FnOnce(&K) -> Option<T>,
    ) -> Option<Arc<T>> {
        let meta = object.meta();
        let (Some(uid), Some(version)) = (meta.uid.as_deref(), meta.resource_version.as_deref())
        else {
            return convert(object).map(Arc::new);
        };
        let pass = self.pass;
        if let Some(e) = self.entries.get_mut(uid) {
            if e.version == version && e.value.as_deref().is_none_or(still) {
                e.seen = pass;
                return e.value.clone();
            }
        }
        let value = convert(object).map(Arc::new);
        self.entries.insert(
            uid.to_string(),
            Entry {
                version: version.to_string(),
                value: value.clone(),
                seen: pass,
            },
        );
        value
    }

    /// Ends a snapshot: conversions of objects it did not see are dropped.
    pub fn end(&mut self) {
        let pass = self.pass;
        self.entries.retain(|_, e| e.seen == pass);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn object(uid: &str, version: &str, value: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                uid: Some(uid.into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            data: Some([("v".to_string(), value.to_string())].into()),
            ..ConfigMap::default()
        }
    }

    fn read(c: &ConfigMap) -> Option<String> {
        c.data.as_ref()?.get("v").cloned()
    }

    #[test]
    fn an_object_converts_again_only_when_its_version_moves_or_its_conversion_is_refused() {
        let mut kept = Converted::<String>::default();
        let conversions = std::cell::Cell::new(0);
        let convert = |c: &ConfigMap| {
            conversions.set(conversions.get() + 1);
            read(c)
        };
        kept.begin();
        let a = kept.get(&object("u1", "1", "a"), |_| true, convert);
        kept.end();
        kept.begin();
        let again = kept.get(&object("u1", "1", "a"), |_| true, convert);
        kept.end();
        assert!(Arc::ptr_eq(a.as_ref().unwrap(), again.as_ref().unwrap()));
        kept.begin();
        let moved = kept.get(&object("u1", "2", "b"), |_| true, convert);
        let refused = kept.get(&object("u1", "2", "b"), |_| false, convert);
        kept.end();
        assert_eq!(moved.as_deref().map(String::as_str), Some("b"));
        assert_eq!(refused.as_deref().map(String::as_str), Some("b"));
        assert_eq!(conversions.get(), 3);
        // Gone from the stores: gone from the cache at the end of the next snapshot.
        kept.begin();
        kept.get(&object("u2", "1", "c"), |_| true, convert);
        kept.end();
        assert_eq!(kept.len(), 1);
        // Without a resource version nothing is kept.
        let mut bare = object("u3", "1", "d");
        bare.metadata.resource_version = None;
        kept.begin();
        kept.get(&bare, |_| true, convert);
        kept.get(&bare, |_| true, convert);
        kept.end();
        assert_eq!(conversions.get(), 6);
    }

    #[test]
    fn a_pod_of_a_replicaset_converts_again_when_its_deployment_resolves_differently() {
        use k8s_openapi::api::core::v1::Pod;
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
        use std::collections::BTreeMap;

        use crate::cluster::kube::convert;

        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("web-7d9-x".into()),
                namespace: Some("shop".into()),
                uid: Some("p1".into()),
                resource_version: Some("5".into()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "apps/v1".into(),
                    kind: "ReplicaSet".into(),
                    name: "web-7d9".into(),
                    uid: "rs1".into(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        };
        let mut kept = Converted::default();
        let mut read = |rs_owners: &crate::cluster::kube::convert::PodOwners| {
            kept.begin();
            let p = kept.get(
                &pod,
                |cached| convert::same_pod_owner(&pod, cached, rs_owners),
                |p| Some(convert::pod(p, rs_owners)),
            );
            kept.end();
            p.and_then(|p| p.owner.clone()).map(|o| o.name)
        };
        let owner = |n: &str| (crate::cluster::WorkloadKind::Deployment, n.to_string());
        let rs = ("ReplicaSet", "web-7d9".to_string());
        let web = BTreeMap::from([(rs.clone(), owner("web"))]);
        let adopted = BTreeMap::from([(rs, owner("web-v2"))]);
        // The ReplicaSet not listed yet, then listed, then adopted by another Deployment:
        // the pod's own resource version never moves, its owner does each time.
        assert_eq!(read(&BTreeMap::new()), None);
        assert_eq!(read(&web), Some("web".into()));
        assert_eq!(read(&web), Some("web".into()));
        assert_eq!(read(&adopted), Some("web-v2".into()));
    }
}
