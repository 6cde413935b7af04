//! The pricing settings: what a vCPU-hour and a GiB-hour of requests cost, fleet-wide
//! and per cluster, as stored in the database and served by the API. Runs turn resource
//! deltas into the monthly cost delta with them (`summary`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::recommender::{bad, SettingsError};

/// Settings key of the pricing document.
pub const PRICING_KEY: &str = "pricing";

/// Prices that turn resource deltas into money.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Pricing {
    /// ISO 4217 code, e.g. `USD`.
    pub currency: String,
    /// Price of one vCPU (1000 millicores) requested for one hour.
    pub cpu_per_vcpu_hour: f64,
    /// Price of one GiB of memory requested for one hour.
    pub memory_per_gib_hour: f64,
    /// Per-cluster overrides; a missing price falls back to the fleet price.
    pub clusters: BTreeMap<String, PriceOverride>,
}

/// One cluster's prices.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_vcpu_hour: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_per_gib_hour: Option<f64>,
}

impl Default for Pricing {
    fn default() -> Self {
        // Typical on-demand list prices of general-purpose cloud nodes.
        Pricing {
            currency: "USD".into(),
            cpu_per_vcpu_hour: 0.0316,
            memory_per_gib_hour: 0.0042,
            clusters: BTreeMap::new(),
        }
    }
}

impl Pricing {
    /// Checks the currency code and that every price is a finite, non-negative number.
    pub fn validated(&self) -> Result<Pricing, SettingsError> {
        let c = &self.currency;
        if c.len() != 3 || !c.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(bad(
                "currency",
                "must be a 3-letter ISO 4217 code such as USD",
            ));
        }
        let price = |field: String, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(bad(&field, "must be a finite number ≥ 0"))
            }
        };
        price("cpuPerVcpuHour".into(), self.cpu_per_vcpu_hour)?;
        price("memoryPerGibHour".into(), self.memory_per_gib_hour)?;
        for (name, o) in &self.clusters {
            if let Some(v) = o.cpu_per_vcpu_hour {
                price(format!("clusters.{name}.cpuPerVcpuHour"), v)?;
            }
            if let Some(v) = o.memory_per_gib_hour {
                price(format!("clusters.{name}.memoryPerGibHour"), v)?;
            }
        }
        Ok(self.clone())
    }

    /// (per vCPU-hour, per GiB-hour) in force for `cluster`.
    pub fn for_cluster(&self, cluster: &str) -> (f64, f64) {
        let o = self.clusters.get(cluster);
        (
            o.and_then(|o| o.cpu_per_vcpu_hour)
                .unwrap_or(self.cpu_per_vcpu_hour),
            o.and_then(|o| o.memory_per_gib_hour)
                .unwrap_or(self.memory_per_gib_hour),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate() {
        Pricing::default().validated().unwrap();
    }

    #[test]
    fn bad_prices_are_named() {
        let p = Pricing {
            currency: "usd".into(),
            ..Default::default()
        };
        assert_eq!(p.validated().unwrap_err().field, "currency");
        let mut p = Pricing::default();
        p.clusters.insert(
            "prod".into(),
            PriceOverride {
                cpu_per_vcpu_hour: Some(-1.0),
                memory_per_gib_hour: None,
            },
        );
        assert_eq!(
            p.validated().unwrap_err().field,
            "clusters.prod.cpuPerVcpuHour"
        );
    }

    #[test]
    fn cluster_overrides_fall_back_to_fleet_prices() {
        let mut p = Pricing::default();
        p.clusters.insert(
            "eu".into(),
            PriceOverride {
                cpu_per_vcpu_hour: Some(0.05),
                memory_per_gib_hour: None,
            },
        );
        assert_eq!(p.for_cluster("eu"), (0.05, 0.0042));
        assert_eq!(p.for_cluster("us"), (0.0316, 0.0042));
    }
}
