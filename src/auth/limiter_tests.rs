//! The login limiter on a manual clock.

use super::*;
use crate::clock::ManualClock;

fn limiter() -> (Arc<ManualClock>, LoginLimiter) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let limits = Limits {
        window_ms: 60_000,
        max_per_pair: 3,
        max_per_address: 5,
        slow_after: 6,
        slow_every_ms: 10_000,
    };
    (clock.clone(), LoginLimiter::new(limits, clock))
}

fn ip(n: u8) -> IpAddr {
    IpAddr::from([10, 0, 0, n])
}

fn fail(l: &LoginLimiter, account: &str, addr: IpAddr) -> Vec<NewLock> {
    l.begin(account, addr).expect("admitted").failed()
}

#[test]
fn an_account_locks_for_the_failing_address_only_and_unlocks_when_the_window_passes() {
    let (clock, l) = limiter();
    let mut locks = Vec::new();
    for _ in 0..3 {
        locks = fail(&l, "Ann", ip(1));
        clock.advance(1_000);
    }
    assert_eq!(
        locks,
        vec![NewLock {
            account: "ann".into(),
            address: ip(1),
            until_ms: 1_060_000,
        }]
    );
    let locked = l.begin("ANN", ip(1)).err().expect("locked");
    assert_eq!(locked.scope, LockScope::Account);
    assert_eq!(locked.retry_after_secs, 57);
    assert!(
        l.begin("ann", ip(2)).is_ok(),
        "other addresses are unaffected"
    );
    clock.advance(57_000);
    assert!(l.begin("ann", ip(1)).is_ok(), "recovered after the window");
}

#[test]
fn concurrent_attempts_count_before_their_password_checks_end() {
    let (_clock, l) = limiter();
    let admitted: Vec<_> = (0..30).filter_map(|_| l.begin("ann", ip(1)).ok()).collect();
    assert_eq!(
        admitted.len(),
        3,
        "only the limit's worth of checks in flight"
    );
    let refused = l.begin("ann", ip(1)).err().expect("full");
    assert_eq!(
        (refused.scope, refused.retry_after_secs),
        (LockScope::Account, 1)
    );
    drop(admitted); // checks that end without an outcome free their room
    assert!(l.begin("ann", ip(1)).is_ok());
}

#[test]
fn an_address_locks_across_accounts() {
    let (clock, l) = limiter();
    for i in 0..5 {
        fail(&l, &format!("user{i}"), ip(9));
    }
    let locked = l.begin("fresh", ip(9)).err().expect("locked");
    assert_eq!(locked.scope, LockScope::Address);
    assert!(l.begin("fresh", ip(8)).is_ok());
    clock.advance(60_000);
    assert!(l.begin("fresh", ip(9)).is_ok());
}

#[test]
fn a_much_guessed_account_is_slowed_except_from_addresses_it_signed_in_from() {
    let (clock, l) = limiter();
    l.begin("ann", ip(50)).expect("admitted").succeeded();
    for n in 1..4 {
        fail(&l, "ann", ip(n));
        fail(&l, "ann", ip(n));
    }
    assert!(l.begin("ann", ip(20)).is_ok(), "one attempt per slot");
    let slowed = l.begin("ann", ip(21)).err().expect("slowed");
    assert_eq!(
        (slowed.scope, slowed.retry_after_secs),
        (LockScope::Slowed, 10)
    );
    assert!(
        l.begin("ann", ip(50)).is_ok(),
        "a known address is not slowed"
    );
    clock.advance(10_000);
    assert!(l.begin("ann", ip(21)).is_ok(), "slowed, never locked");
}

#[test]
fn success_clears_the_failures_of_that_address() {
    let (_clock, l) = limiter();
    fail(&l, "ann", ip(1));
    fail(&l, "ann", ip(1));
    l.begin("ann", ip(1)).expect("admitted").succeeded();
    fail(&l, "ann", ip(1));
    assert!(l.begin("ann", ip(1)).is_ok());
}

#[test]
fn restored_locks_hold_until_they_end() {
    let (clock, l) = limiter();
    let locks = [
        NewLock {
            account: "ann".into(),
            address: ip(1),
            until_ms: 1_030_000,
        },
        NewLock {
            account: String::new(),
            address: ip(2),
            until_ms: 1_020_000,
        },
        NewLock {
            account: "bob".into(),
            address: ip(3),
            until_ms: 999_000,
        },
    ];
    l.restore(&locks);
    let a = l.begin("ann", ip(1)).err().expect("pair lock kept");
    assert_eq!((a.scope, a.retry_after_secs), (LockScope::Account, 30));
    let b = l.begin("zed", ip(2)).err().expect("address lock kept");
    assert_eq!(b.scope, LockScope::Address);
    assert!(l.begin("bob", ip(3)).is_ok(), "an expired lock is ignored");
    clock.advance(30_000);
    assert!(l.begin("ann", ip(1)).is_ok());
}
