//! The guest's dirty rate against the transfer rate, as evidence for a data-plane failure
//! (`explain --metrics|--prometheus`). Pure: what the command read in, facts out.
//!
//! The dirty rate is virt-handler's gauge of the guest now
//! ([`crate::migration::kubevirt_metrics::GUEST_DIRTY_RATE`], a hint), or the migration's own
//! while it runs; the transfer rate is the migration's measured one while it runs, else the
//! `bandwidthPerMigration` it ran with (the VMI's recorded configuration, else the policy's
//! or the cluster's), else unknown (no cap: the network's).

use super::{Evidence, Fact};
use crate::migration::kubevirt_metrics::{DIRTY_RATE, GUEST_DIRTY_RATE, TRANSFER_RATE};
use crate::model::KubeVirt;
use crate::policy::migration_policy::matching_policy;

/// What the command read about the VMI.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Where: `virt-handler pod virt-handler-x` or `Prometheus at URL`.
    pub from: String,
    /// The guest's dirty rate, bytes/s (virt-handler's gauge).
    pub guest_bps: Option<u64>,
    /// While a migration runs: its dirty rate and transfer rate, bytes/s.
    pub migration_dirty_bps: Option<f64>,
    pub migration_transfer_bps: Option<f64>,
}

/// The ratio at which pre-copy stops shrinking the dirty set (as `migration::predict`).
const KEEPS_UP: f64 = 0.9;

fn rate(bps: f64) -> String {
    format!("{}/s", crate::text::bytes(bps.max(0.0) as u64))
}

/// The cap a migration of this VMI runs with, and where it was read: (bytes/s, object,
/// field). None when no cap applies.
fn cap(ev: &Evidence) -> Option<(u64, String, String)> {
    let vmi = ev.vmi.as_ref()?;
    let id = format!("{}/{}", ev.vmi_namespace, ev.vmi_name);
    if let Some(recorded) = vmi
        .status
        .migration_state
        .as_ref()
        .and_then(|s| s.migration_configuration.as_ref())
    {
        return recorded
            .bandwidth_per_migration
            .as_ref()
            .map(|q| q.bytes())
            .filter(|b| *b > 0)
            .map(|b| {
                (
                    b,
                    format!("VirtualMachineInstance/{id}"),
                    "status.migrationState.migrationConfiguration.bandwidthPerMigration".into(),
                )
            });
    }
    let policy = matching_policy(vmi, ev.namespace.as_ref(), &ev.policies)
        .and_then(|m| ev.policies.iter().find(|p| p.name() == m.name));
    if let Some(b) = policy
        .and_then(|p| p.spec.bandwidth_per_migration.as_ref())
        .map(|q| q.bytes())
    {
        return (b > 0).then(|| {
            (
                b,
                format!("MigrationPolicy/{}", policy.map(|p| p.name()).unwrap_or("")),
                "spec.bandwidthPerMigration".into(),
            )
        });
    }
    let kubevirt = ev.kubevirt.as_ref()?;
    let b = kubevirt
        .spec
        .configuration
        .migrations
        .as_ref()
        .and_then(|m| m.bandwidth_per_migration.as_ref())
        .map(|q| q.bytes())
        .filter(|b| *b > 0)?;
    Some((
        b,
        format!(
            "KubeVirt/{}/{}",
            kubevirt.metadata.namespace.as_deref().unwrap_or(""),
            kubevirt.metadata.name.as_deref().unwrap_or("")
        ),
        "spec.configuration.migrations.bandwidthPerMigration".into(),
    ))
}

/// The facts: the dirty rate, the transfer rate, and one against the other.
pub fn facts(ev: &Evidence, r: &Reading) -> Vec<Fact> {
    let labels = format!(
        "{{namespace={:?},name={:?}}}",
        ev.vmi_namespace, ev.vmi_name
    );
    let mut out = Vec::new();
    out.push(Fact {
        object: r.from.clone(),
        field: format!("{GUEST_DIRTY_RATE}{labels}"),
        value: r
            .guest_bps
            .map(|b| rate(b as f64))
            .unwrap_or_else(|| "no sample".into()),
        note: Some(match r.guest_bps {
            Some(_) => "the guest's dirty rate now, measured by libvirt for one second; a hint: reported inaccurate in some releases".into(),
            None => "virt-handler measures Running VMIs that are not migrating (KubeVirt v1.6+), and skips one when libvirt's calculation fails".into(),
        }),
    });
    if let Some(d) = r.migration_dirty_bps {
        out.push(Fact {
            object: r.from.clone(),
            field: format!("{}{labels}", DIRTY_RATE[0]),
            value: rate(d),
            note: Some("the running migration's dirty rate".into()),
        });
    }
    let transfer: Option<(f64, &str)> = match (r.migration_transfer_bps, cap(ev)) {
        (Some(t), _) => {
            out.push(Fact {
                object: r.from.clone(),
                field: format!("{}{labels}", TRANSFER_RATE[0]),
                value: rate(t),
                note: Some("the running migration's transfer rate".into()),
            });
            Some((t, "measured"))
        }
        (None, Some((b, object, field))) => {
            out.push(Fact {
                object,
                field,
                value: rate(b as f64),
                note: Some("the transfer rate is capped at this".into()),
            });
            Some((b as f64, "the cap"))
        }
        (None, None) => {
            out.push(Fact {
                object: format!(
                    "KubeVirt/{}",
                    ev.kubevirt
                        .as_ref()
                        .and_then(|k| k.metadata.name.as_deref())
                        .unwrap_or("kubevirt")
                ),
                field: "spec.configuration.migrations.bandwidthPerMigration".into(),
                value: "unset".into(),
                note: Some(
                    "no cap: the transfer rate is the network's, which vmctl cannot see from here"
                        .into(),
                ),
            });
            None
        }
    };
    let dirty = r.migration_dirty_bps.or(r.guest_bps.map(|b| b as f64));
    if let (Some(d), Some((t, what))) = (dirty, transfer)
        && t > 0.0
    {
        let ratio = d / t;
        out.push(Fact {
            object: "vmctl".into(),
            field: format!("dirty rate / transfer rate ({what})"),
            value: format!("{:.0}%", ratio * 100.0),
            note: Some(if ratio >= KEEPS_UP {
                format!(
                    "{} dirtied against {} sent: at {:.0}% or more each pre-copy pass leaves as much as the one before, so pre-copy cannot converge; post-copy (allowPostCopy), auto-converge (allowAutoConverge) or a higher bandwidthPerMigration would",
                    rate(d),
                    rate(t),
                    KEEPS_UP * 100.0
                )
            } else {
                format!(
                    "{} dirtied against {} sent: the dirty set shrinks each pass, so pre-copy can converge if the completion budget allows",
                    rate(d),
                    rate(t)
                )
            }),
        });
    }
    out
}

/// The KubeVirt namespace words of a reading's absence, for a note.
pub fn absent(from: &str, kubevirt: Option<&KubeVirt>) -> String {
    format!(
        "{from} has no {GUEST_DIRTY_RATE} (KubeVirt v1.6+{}): no dirty-rate evidence",
        kubevirt
            .and_then(KubeVirt::version)
            .map(|v| format!("; the cluster runs {v}"))
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// A VMI whose recorded migration configuration is `recorded`.
    fn evidence_of(recorded: serde_json::Value, namespace: &str, name: &str) -> Evidence {
        let vmi = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": namespace},
            "status": {"nodeName": "node-1", "phase": "Running",
                "migrationState": {"migrationConfiguration": recorded}}}))
        .unwrap();
        Evidence {
            now: "2026-11-29T03:00:00Z".parse().unwrap(),
            migration: None,
            vmi_namespace: namespace.into(),
            vmi_name: name.into(),
            vmi: Some(vmi),
            migrations: Vec::new(),
            pods: Vec::new(),
            events: Vec::new(),
            kubevirt: None,
            policies: Vec::new(),
            namespace: None,
            load: None,
            unread: Vec::new(),
            pdbs: Vec::new(),
            loops: Default::default(),
        }
    }

    #[test]
    fn the_guest_against_the_cap_it_ran_with() {
        let ev = evidence_of(
            serde_json::json!({"bandwidthPerMigration": "64Mi"}),
            "prod",
            "db-01",
        );
        let r = Reading {
            from: "virt-handler pod virt-handler-1".into(),
            guest_bps: Some(128 * MIB),
            ..Reading::default()
        };
        let f = facts(&ev, &r);
        assert_eq!(f.len(), 3, "{f:#?}");
        assert_eq!(
            f[0].field,
            "kubevirt_vmi_dirty_rate_bytes_per_second{namespace=\"prod\",name=\"db-01\"}"
        );
        assert_eq!(f[0].value, "128.0 MiB/s");
        assert_eq!(f[1].object, "VirtualMachineInstance/prod/db-01");
        assert_eq!(
            f[1].field,
            "status.migrationState.migrationConfiguration.bandwidthPerMigration"
        );
        assert_eq!(f[1].value, "64.0 MiB/s");
        assert_eq!(f[2].field, "dirty rate / transfer rate (the cap)");
        assert_eq!(f[2].value, "200%");
        assert!(
            f[2].note
                .as_deref()
                .unwrap()
                .contains("pre-copy cannot converge")
        );
    }

    #[test]
    fn a_running_migration_brings_its_own_rates_and_no_cap_is_said() {
        let ev = evidence_of(serde_json::json!({}), "prod", "db-01");
        let r = Reading {
            from: "Prometheus at http://p".into(),
            guest_bps: None,
            migration_dirty_bps: Some(10.0 * MIB as f64),
            migration_transfer_bps: Some(100.0 * MIB as f64),
        };
        let f = facts(&ev, &r);
        assert_eq!(f[0].value, "no sample");
        assert_eq!(
            f[1].field,
            "kubevirt_vmi_migration_dirty_memory_rate_bytes{namespace=\"prod\",name=\"db-01\"}"
        );
        assert_eq!(f[2].value, "100.0 MiB/s");
        assert_eq!(f[3].value, "10%");
        assert!(f[3].note.as_deref().unwrap().contains("can converge"));

        // Not migrating and no cap anywhere: the transfer rate is unknown, no ratio.
        let r = Reading {
            from: "x".into(),
            guest_bps: Some(MIB),
            ..Reading::default()
        };
        let f = facts(&ev, &r);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(f[1].value, "unset");
    }
}
