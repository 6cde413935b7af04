//! `Page<T>`: one page of a paged answer and where the next one starts, the one shape
//! every paged query of the store returns (runs, workloads, recommendations, the agent
//! feed, a workload's history and both audit trails).

/// One page in the query's order, and the cursor of the next page (`None` on the
/// last). `C` is what the next page continues after: a log position by default.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T, C = i64> {
    pub items: Vec<T>,
    pub next: Option<C>,
}

impl<T, C> Page<T, C> {
    /// The page of `rows` read one past `limit`: when that extra row is there, more
    /// follow, and the next page continues after the last item kept (`cursor_of`).
    pub fn of_probe(mut rows: Vec<T>, limit: usize, cursor_of: impl FnOnce(&T) -> C) -> Self {
        let next = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(cursor_of)
        } else {
            None
        };
        Page { items: rows, next }
    }

    /// The same page with each item made by `f`.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U, C> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            next: self.next,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Page;

    #[test]
    fn a_probe_row_past_the_limit_is_dropped_and_names_the_next_page() {
        let page = Page::of_probe(vec![5, 4, 3], 2, |n| *n);
        assert_eq!(
            page,
            Page {
                items: vec![5, 4],
                next: Some(4)
            }
        );
        let last = Page::of_probe(vec![2, 1], 2, |n| *n);
        assert_eq!(last.next, None);
        assert_eq!(last.items, [2, 1]);
    }
}
