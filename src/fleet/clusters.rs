//! Registered clusters as the API and the config feed show them.

use crate::store::FreezeRecord;
use crate::timestamp::format_ms;
use crate::wire::Freeze;

/// The cluster-wide freeze as the API shows it.
pub fn freeze_view(f: Option<&FreezeRecord>) -> Freeze {
    match f {
        None => Freeze::off(),
        Some(f) => Freeze {
            enabled: true,
            reason: Some(f.reason.clone()),
            since: Some(format_ms(f.since)),
            until: Some(f.until.map(format_ms)),
        },
    }
}
