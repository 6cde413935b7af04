//! The two list shapes of the API: `{"items": [...]}` for whole lists and
//! `{"items": [...], "next": cursor|null}` for cursor-paged ones. Generic, so every
//! list answer is typed and documented with its item schema.

use serde::Serialize;
use utoipa::ToSchema;

/// A whole list.
#[derive(Debug, Serialize, ToSchema)]
pub struct Items<T> {
    pub items: Vec<T>,
}

impl<T> Items<T> {
    pub fn new(items: Vec<T>) -> Self {
        Items { items }
    }
}

/// One page of a cursor-paged list, newest (or first) first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Pass back as `next` for the following page; `null` on the last one.
    pub next: Option<String>,
}
