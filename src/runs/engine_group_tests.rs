//! Runs whose collection fails for some groups: whole groups that cannot be collected,
//! every group failing, and a group whose stream breaks after some workloads arrived.

use super::*;

/// How a group of [`GroupDown`] fails.
#[derive(Clone, Copy, PartialEq)]
enum Failure {
    /// Nothing of it arrives (HTTP 503).
    Whole,
    /// Its first workload arrives, then the stream breaks (as a remote-read stream that
    /// dies mid-group).
    AfterOne,
}

/// The demo fleet, with the groups of some namespaces failing (`None`: all).
struct GroupDown {
    inner: Datasource,
    down: Option<&'static str>,
    failure: Failure,
}

impl GroupDown {
    fn is_down(&self, plan: &CollectPlan, index: usize) -> bool {
        let g = &plan.groups[index];
        self.down
            .is_none_or(|ns| g.namespaces.iter().any(|n| n == ns))
    }
}

impl Source for GroupDown {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        self.inner.plan(scope, window).await
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        if self.failure == Failure::Whole && self.is_down(plan, index) {
            return Err(DatasourceError::Query("HTTP 503: overloaded".into()));
        }
        self.inner.collect_group(plan, index).await
    }

    async fn stream_group(
        &self,
        plan: &CollectPlan,
        index: usize,
        sink: &crate::datasource::Sink,
    ) -> Result<crate::datasource::CollectStats, DatasourceError> {
        let mut whole = self.collect_group(plan, index).await?;
        if self.failure == Failure::Whole || !self.is_down(plan, index) {
            let stats = std::mem::take(&mut whole.stats);
            crate::datasource::send(sink, whole).await?;
            return Ok(stats);
        }
        whole.sort();
        let first = whole.workloads.remove(0);
        let mut piece = Collection::empty(plan.window);
        piece.input.containers = whole
            .input
            .containers
            .into_iter()
            .filter(|c| c.target.name == first.name && c.target.kind == first.kind)
            .collect();
        piece.workloads = vec![first];
        crate::datasource::send(sink, piece).await?;
        Err(DatasourceError::Unreachable("connection reset".into()))
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: &crate::workload::WorkloadKey,
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        self.inner
            .usage(scope, workload, container, resource, window)
            .await
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        self.inner.test(scope).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_that_cannot_be_collected_leaves_its_workloads_stale_and_the_rest_fresh() {
    let f = fixture(&["demo-east"]);
    let s = settings(30);
    let first = run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    let stats: Value = serde_json::to_value(&first.collect_stats).expect("stats");
    assert!(stats["groups"].as_u64().unwrap() >= 2, "{stats}");
    let before = workloads(&f, "demo-east").await;
    f.clock.advance(HOUR);
    let down = GroupDown {
        inner: Datasource::demo(7),
        down: Some("payments"),
        failure: Failure::Whole,
    };
    let second = run_with(&f, "demo-east", &s, down).await;
    assert_eq!(second.status, RunStatus::Partial, "{}", second.errors);
    assert!(
        second.errors.to_string().contains("\"group\":\"payments\""),
        "{}",
        second.errors
    );
    assert!(
        second.errors.to_string().contains("503"),
        "{}",
        second.errors
    );
    let after = workloads(&f, "demo-east").await;
    let lost: Vec<&WorkloadRow> = after
        .iter()
        .filter(|w| w.seen.namespace == "payments")
        .collect();
    assert!(!lost.is_empty());
    for w in &lost {
        assert!(w.stale, "{} is stale", w.seen.name);
        let b = named(&before, &w.seen.name);
        assert_eq!(w.latest_rec_id, b.latest_rec_id, "keeps its last good one");
    }
    assert_eq!(second.workloads_stale, lost.len() as i64);
    assert_eq!(
        second.recommendations,
        first.recommendations - lost.len() as i64
    );
    assert!(after
        .iter()
        .filter(|w| w.seen.namespace != "payments")
        .all(|w| !w.stale));
}

#[tokio::test(flavor = "multi_thread")]
async fn when_every_group_fails_the_run_fails_and_touches_nothing() {
    let f = fixture(&["demo-east"]);
    let s = settings(30);
    run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    let before = workloads(&f, "demo-east").await;
    f.clock.advance(HOUR);
    let down = GroupDown {
        inner: Datasource::demo(7),
        down: None,
        failure: Failure::Whole,
    };
    let run = run_with(&f, "demo-east", &s, down).await;
    assert_eq!(run.status, RunStatus::Failed, "{}", run.errors);
    assert_eq!(run.recommendations, 0);
    let after = workloads(&f, "demo-east").await;
    assert_eq!(
        after, before,
        "no recommendation touched, nothing marked stale"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_mid_group_keeps_what_arrived_and_marks_the_rest_stale() {
    let f = fixture(&["demo-east"]);
    let s = settings(30);
    run_with(&f, "demo-east", &s, Datasource::demo(7)).await;
    let before = workloads(&f, "demo-east").await;
    f.clock.advance(HOUR);
    let cut = GroupDown {
        inner: Datasource::demo(7),
        down: Some("payments"),
        failure: Failure::AfterOne,
    };
    let run = run_with(&f, "demo-east", &s, cut).await;
    assert_eq!(run.status, RunStatus::Partial, "{}", run.errors);
    assert!(
        run.errors.to_string().contains("connection reset"),
        "{}",
        run.errors
    );
    let after = workloads(&f, "demo-east").await;
    let payments: Vec<&WorkloadRow> = after
        .iter()
        .filter(|w| w.seen.namespace == "payments")
        .collect();
    assert!(payments.len() >= 2, "the group has more than the one sent");
    let fresh: Vec<&&WorkloadRow> = payments.iter().filter(|w| !w.stale).collect();
    assert_eq!(fresh.len(), 1, "only the workload that arrived is fresh");
    let b = named(&before, &fresh[0].seen.name);
    assert_ne!(
        fresh[0].latest_rec_id, b.latest_rec_id,
        "it got a new recommendation"
    );
    for w in payments.iter().filter(|w| w.stale) {
        let b = named(&before, &w.seen.name);
        assert_eq!(
            w.latest_rec_id, b.latest_rec_id,
            "{} keeps its last one",
            w.seen.name
        );
    }
    assert!(after
        .iter()
        .filter(|w| w.seen.namespace != "payments")
        .all(|w| !w.stale));
}
