//! Numeric `{id}` path segments, typed by what they name: a handler takes
//! `Id(id, _): Id<ids::Policy>` and receives a valid id, or the request is answered in
//! the API's error shape before the handler runs (a segment that is not an id names no
//! resource, so it is a 404 like an id that does not exist).

use std::marker::PhantomData;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;

use super::error::ApiError;

/// What an id names: its word in messages, its path parameter and its rule.
pub trait Kind {
    /// As messages name it: `policy 7 does not exist`.
    const NAME: &'static str;
    /// The path parameter it is read from.
    const PARAM: &'static str = "id";

    /// The id in `raw`, when it is one.
    fn parse(raw: &str) -> Option<i64> {
        raw.parse::<i64>().ok().filter(|n| *n > 0)
    }

    /// The answer when `raw` is not an id.
    fn missing(raw: &str) -> ApiError {
        ApiError::not_found(format!("{} {raw} does not exist", Self::NAME))
    }
}

/// A numeric id of kind `K` from the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id<K>(pub i64, pub PhantomData<K>);

impl<S: Send + Sync, K: Kind> FromRequestParts<S> for Id<K> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        // The access guard has already refused a segment that is not UTF-8.
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(ApiError::internal)?;
        let raw = params
            .iter()
            .find(|(name, _)| *name == K::PARAM)
            .map(|(_, value)| value)
            .ok_or_else(|| ApiError::internal(format!("the route has no {{{}}}", K::PARAM)))?;
        K::parse(raw)
            .map(|id| Id(id, PhantomData))
            .ok_or_else(|| K::missing(raw))
    }
}

macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $kind {}

        impl Kind for $kind {
            const NAME: &'static str = $name;
        }
    )*};
}

kinds! {
    User = "user";
    Team = "team";
    Token = "token";
    Policy = "policy";
    /// A notification channel.
    Channel = "notification channel";
    /// A notification rule.
    Rule = "notification rule";
}

/// A version number of a policy (`/v1/policies/{id}/versions/{version}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyVersion {}

impl Kind for PolicyVersion {
    const NAME: &'static str = "policy version";
    const PARAM: &'static str = "version";
}

/// A datasource: any integer reads as an id (the store then finds none), and what is
/// not one is named quoted, as datasource answers always have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datasource {}

impl Kind for Datasource {
    const NAME: &'static str = "datasource";

    fn parse(raw: &str) -> Option<i64> {
        raw.parse().ok()
    }

    fn missing(raw: &str) -> ApiError {
        ApiError::not_found(format!("no datasource {raw:?}"))
    }
}
