//! Usage shapes of simulated containers and the seeded noise behind them. A shape says
//! what a container would use at a moment if nothing limited it; [`moment`] applies the
//! limits in effect (CFS throttling above the CPU limit, an OOM kill at the memory
//! limit). It is the one rule: the sim's kubelet (both faces) and the demo datasource
//! call it with the same draws ([`Draws::at`]: seeded by the container and the second),
//! so the demo's history and its in-process cluster agree. Everything is a pure
//! function of the seed, the shape and the time.

use serde::{Deserialize, Serialize};

const HOUR_MS: f64 = 3_600_000.0;

/// CPU usage shape, millicores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Cpu {
    Steady(f64),
    /// Base plus a daily swing of `amp` (peak in the afternoon).
    Diurnal(f64, f64),
    /// Base with rare bursts to `peak`.
    Spiky(f64, f64),
    /// Next to nothing: between half and one and a half times the value.
    Idle(f64),
    /// Steady at the first value until Unix time `since` (ms), steady at the second
    /// from then on: a load that surged.
    Surge(f64, f64, i64),
}

/// Memory usage shape, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Memory {
    Flat(f64),
    /// Starts at the first value and grows by the second per hour of container life.
    Leak(f64, f64),
    /// Climbs from the first value to the container's memory limit over `hours`, then
    /// is OOM-killed and restarts.
    OomCycle(f64, f64),
    /// Climbs from `base` to `peak` over `period` hours, then drops back (a collector).
    Sawtooth(f64, f64, f64),
    /// `base`, and `extra` (a fraction of it) more for `lasting` hours every `every`
    /// hours of the container's life: a periodic batch, a report, a cache rebuild.
    Batch(f64, f64, f64, f64),
}

/// splitmix64: small, seedable, good enough for synthetic noise.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, tag: &str) -> Rng {
        Rng(seed ^ crate::fingerprint::fnv1a(tag.as_bytes()))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `len` lowercase alphanumerics, as Kubernetes name suffixes look.
    pub fn suffix(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..len)
            .map(|_| ALPHABET[(self.next_u64() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }

    pub fn uuid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            b >> 52,
            b & 0xffff_ffff_ffff
        )
    }

    /// The noise of one sample, drawn in a fixed order so a seed always gives the same
    /// series.
    pub fn draws(&mut self, memory: Memory) -> Draws {
        let u = self.unit();
        let burst = self.unit() < 0.02;
        let noise = 0.98 + 0.04 * self.unit();
        let fine = match memory {
            Memory::Leak(..) => 0.995 + 0.01 * self.unit(),
            _ => 1.0,
        };
        Draws {
            u,
            burst,
            noise,
            fine,
        }
    }
}

/// The random parts of one sample.
#[derive(Debug, Clone, Copy)]
pub struct Draws {
    pub u: f64,
    pub burst: bool,
    pub noise: f64,
    pub fine: f64,
}

impl Draws {
    /// The draws of container `key` (`namespace/workload/container`) in the second of
    /// `t_ms`: the same wherever the container is simulated.
    pub fn at(seed: u64, key: &str, t_ms: i64, memory: Memory) -> Draws {
        Rng::new(seed, &format!("{key}/{}", t_ms.div_euclid(1000))).draws(memory)
    }
}

/// The limits in force on a container (millicores, bytes); `None` = unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub cpu: Option<f64>,
    pub memory: Option<f64>,
}

/// What a container does at one moment under its limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moment {
    /// CPU it gets (millicores): what it wants, at most its limit.
    pub cpu: f64,
    /// The share of CFS periods in which its quota ran out (0 under the limit).
    pub throttled: f64,
    /// Memory it uses (bytes), as it would if not killed.
    pub memory: f64,
    /// Its memory reached the limit: the kernel OOM-kills it.
    pub oom_killed: bool,
}

/// The rule of the simulated kubelet: CPU above the limit is throttled (the container
/// gets the limit, and the periods in which it wanted more are throttled), memory that
/// reaches the limit is OOM-killed. `life_ms` is the time since the container (re)started.
pub fn moment(
    cpu: Cpu,
    memory: Memory,
    scale: f64,
    t_ms: i64,
    life_ms: i64,
    limits: Limits,
    d: &Draws,
) -> Moment {
    let wanted = cpu_at(cpu, t_ms, d) * scale;
    let (granted, throttled) = match limits.cpu {
        Some(limit) if wanted > limit => (limit, 1.0 - limit / wanted),
        _ => (wanted, 0.0),
    };
    let bytes = memory_at(memory, life_ms, limits.memory, scale, d);
    Moment {
        cpu: granted,
        throttled,
        memory: bytes,
        oom_killed: limits.memory.is_some_and(|l| bytes >= l),
    }
}

/// CPU wanted (millicores) at Unix time `t_ms`.
pub fn cpu_at(shape: Cpu, t_ms: i64, d: &Draws) -> f64 {
    let hour = (t_ms as f64 / HOUR_MS) % 24.0;
    let u = d.u;
    match shape {
        Cpu::Steady(m) => m * (0.9 + 0.2 * u),
        Cpu::Diurnal(base, amp) => {
            let phase = ((hour - 9.0) / 24.0 * std::f64::consts::TAU)
                .sin()
                .max(-1.0);
            (base + amp * 0.5 * (1.0 + phase)) * (0.92 + 0.16 * u)
        }
        Cpu::Spiky(base, peak) => {
            if d.burst {
                peak * (0.8 + 0.2 * u)
            } else {
                base * (0.85 + 0.3 * u)
            }
        }
        Cpu::Idle(m) => m * (0.5 + u),
        Cpu::Surge(base, peak, since) => {
            let m = if t_ms >= since { peak } else { base };
            m * (0.9 + 0.2 * u)
        }
    }
}

/// Memory wanted (bytes) `life_ms` into the container's life; `limit` is the memory
/// limit in effect (an `OomCycle` climbs towards it), `scale` the container's share.
pub fn memory_at(shape: Memory, life_ms: i64, limit: Option<f64>, scale: f64, d: &Draws) -> f64 {
    let hours = life_ms as f64 / HOUR_MS;
    match shape {
        Memory::Flat(b) => b * scale * d.noise,
        Memory::Leak(b, per_hour) => (b + per_hour * hours) * scale * d.fine,
        Memory::OomCycle(b, hours_to_limit) => {
            let top = limit.filter(|l| l.is_finite()).unwrap_or(b * 2.0);
            (b + (top - b) * (hours / hours_to_limit).min(1.2)) * d.noise
        }
        Memory::Sawtooth(base, peak, period) => {
            let phase = if period > 0.0 {
                (hours % period) / period
            } else {
                0.0
            };
            (base + (peak - base) * phase) * scale * d.noise
        }
        Memory::Batch(base, extra, every, lasting) => {
            let busy = every > 0.0 && hours % every < lasting;
            base * if busy { 1.0 + extra } else { 1.0 } * scale * d.noise
        }
    }
}

/// Ground truth: the share of time a container with `shape` wants more than
/// `threshold` millicores (times uniform over whole days, the noise of [`Rng::draws`]).
/// What a backtest's "CPU above the request" should find on this shape's samples.
pub fn cpu_exceedance(shape: Cpu, threshold: f64) -> f64 {
    // P(lo + width × U > threshold) for U uniform in [0, 1).
    let above = |lo: f64, width: f64| ((lo + width - threshold) / width).clamp(0.0, 1.0);
    match shape {
        Cpu::Steady(m) => above(0.9 * m, 0.2 * m),
        Cpu::Idle(m) => above(0.5 * m, m),
        // Long after the surge.
        Cpu::Surge(_, m, _) => above(0.9 * m, 0.2 * m),
        Cpu::Spiky(base, peak) => {
            0.02 * above(0.8 * peak, 0.2 * peak) + 0.98 * above(0.85 * base, 0.3 * base)
        }
        Cpu::Diurnal(base, amp) => {
            // The samples fall on whole minutes; every minute of the day weighs the same.
            let minutes = 24 * 60;
            let total: f64 = (0..minutes)
                .map(|i| {
                    let hour = f64::from(i) / 60.0;
                    let phase = ((hour - 9.0) / 24.0 * std::f64::consts::TAU).sin();
                    let level = base + amp * 0.5 * (1.0 + phase);
                    above(0.92 * level, 0.16 * level)
                })
                .sum();
            total / f64::from(minutes)
        }
    }
}

/// Ground truth: the CPU level `shape` stays at or under for a `q` share of the time
/// (0 < q < 1), the inverse of [`cpu_exceedance`].
pub fn cpu_quantile(shape: Cpu, q: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 1.0);
    while cpu_exceedance(shape, hi) > 0.0 {
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if cpu_exceedance(shape, mid) > 1.0 - q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ground_truth_matches_the_samples_the_shape_draws() {
        for shape in [
            Cpu::Steady(100.0),
            Cpu::Diurnal(100.0, 80.0),
            Cpu::Spiky(60.0, 500.0),
            Cpu::Idle(10.0),
        ] {
            let mut rng = Rng::new(3, "truth");
            let samples: Vec<f64> = (0..7 * 1440)
                .map(|i| cpu_at(shape, i64::from(i) * 60_000, &rng.draws(Memory::Flat(1.0))))
                .collect();
            for q in [0.5, 0.9, 0.95, 0.99] {
                let r = cpu_quantile(shape, q);
                let share =
                    samples.iter().filter(|v| **v > r).count() as f64 / samples.len() as f64;
                assert!((share - (1.0 - q)).abs() < 0.01, "{shape:?} q{q}: {share}");
                assert!((cpu_exceedance(shape, r) - (1.0 - q)).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn the_rule_throttles_above_the_cpu_limit_and_kills_at_the_memory_limit() {
        let d = Draws::at(7, "web/api/app", 1_000, Memory::Flat(1.0));
        let limits = Limits {
            cpu: Some(100.0),
            memory: Some(64.0 * 1024.0 * 1024.0),
        };
        let calm = moment(
            Cpu::Steady(50.0),
            Memory::Flat(32.0 * 1024.0 * 1024.0),
            1.0,
            1_000,
            0,
            limits,
            &d,
        );
        assert_eq!(calm.throttled, 0.0);
        assert!(!calm.oom_killed);
        let busy = moment(
            Cpu::Steady(400.0),
            Memory::Flat(80.0 * 1024.0 * 1024.0),
            1.0,
            1_000,
            0,
            limits,
            &d,
        );
        assert_eq!(busy.cpu, 100.0);
        assert!(busy.throttled > 0.7 && busy.throttled < 0.8, "{busy:?}");
        assert!(busy.oom_killed);
    }

    #[test]
    fn draws_depend_on_the_container_and_the_second_only() {
        let a = Draws::at(7, "web/api/app", 1_000, Memory::Flat(1.0));
        let b = Draws::at(7, "web/api/app", 1_999, Memory::Flat(1.0));
        let c = Draws::at(7, "web/api/proxy", 1_000, Memory::Flat(1.0));
        assert_eq!(a.u, b.u);
        assert_ne!(a.u, c.u);
    }
}
