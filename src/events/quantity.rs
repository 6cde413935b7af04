//! Kubernetes resource quantities as they appear in event `from`/`to` values: the one
//! reader is `crate::quantity`.

pub use crate::quantity::{is_quantity, value};
