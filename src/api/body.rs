//! Reading request bodies under a byte limit, with errors in the API's shape.

use axum::body::Body;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};

use super::error::ApiError;

/// Collects `body`, refusing with 413 (naming `limit`) once it grows past `limit` bytes.
pub async fn read_limited(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::too_large(limit)),
        Err(e) => Err(ApiError::bad_request(
            "invalid_body",
            format!("cannot read request body: {e}"),
        )),
    }
}
