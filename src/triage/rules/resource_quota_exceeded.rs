//! The `resource-quota-exceeded` rule: its cause, reads, advice and check, and the parsing
//! of the API server's quota message.

use super::*;

/// `exceeded quota: q, requested: a=1,b=2, used: a=1, limited: a=3` → parts.
pub(super) struct QuotaMessage {
    name: String,
    requested: Vec<(String, String)>,
    used: Vec<(String, String)>,
    limited: Vec<(String, String)>,
}

pub(super) fn parse_quota_message(message: &str) -> Option<QuotaMessage> {
    let rest = &message[message.find("exceeded quota: ")? + "exceeded quota: ".len()..];
    let (name, rest) = rest.split_once(',')?;
    let pairs = |text: &str| -> Vec<(String, String)> {
        text.split(',')
            .filter_map(|kv| kv.trim().split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    };
    let section = |label: &str, next: Option<&str>| -> Vec<(String, String)> {
        let Some(start) = rest.find(label) else {
            return Vec::new();
        };
        let body = &rest[start + label.len()..];
        let body = match next.and_then(|n| body.find(n)) {
            Some(end) => &body[..end],
            None => body,
        };
        pairs(body.trim_end_matches(',').trim())
    };
    Some(QuotaMessage {
        name: name.trim().to_string(),
        requested: section("requested: ", Some(", used: ")),
        used: section("used: ", Some(", limited: ")),
        limited: section("limited: ", None),
    })
}

/// A quantity in the unit an operator would write it in.
pub(super) fn format_quantity(resource: &str, millis: i128) -> String {
    let bytes_like = resource.contains("memory") || resource.contains("storage");
    if bytes_like {
        let bytes = (millis + 999) / 1000;
        let mi = (bytes + (1 << 20) - 1) >> 20;
        format!("{mi}Mi")
    } else if millis % 1000 == 0 {
        format!("{}", millis / 1000)
    } else {
        format!("{millis}m")
    }
}

pub(crate) const RESOURCE_QUOTA_EXCEEDED: Rule = Rule {
    cause: Cause {
        id: "resource-quota-exceeded",
        plane: Plane::ControlPlane,
    },
    reads: &[
        "VirtualMachineInstanceMigration status.conditions[type=migrationRejectedByResourceQuota]",
        "Event FailedCreate on the VMI (exceeded quota)",
    ],
    advice: "During a migration the source and target pods both count against the namespace's quota: raise the quota by the target pod's request, or free that much.",
    blocks: true,
    check: resource_quota_exceeded,
};

pub(super) fn resource_quota_exceeded(v: &View) -> Option<Finding> {
    if !before_streaming(v) {
        return None;
    }
    let cond = v.vmim_condition(s::COND_QUOTA);
    let event = v.newest_event(|e| {
        event_reason(e) == s::REASON_FAILED_CREATE && event_message(e).contains(s::EXCEEDED_QUOTA)
    });
    let open = matches!(v.phase, MigrationPhase::Pending | MigrationPhase::Unset);
    if !(cond.is_some() || (event.is_some() && (open || v.phase == MigrationPhase::Failed))) {
        return None;
    }
    let mut f = Finding::default();
    if cond.is_some() {
        f.evidence.push(v.vmim_fact(
            "status.conditions[type=migrationRejectedByResourceQuota].status",
            "True",
        ));
    }
    let parsed = event.and_then(|e| parse_quota_message(event_message(e)));
    if let Some(e) = event {
        f.evidence.push(v.event_fact(e));
    }
    let ns = v.namespace();
    let mut shortfalls = Vec::new();
    if let Some(q) = &parsed {
        for (resource, requested) in &q.requested {
            let get = |list: &[(String, String)]| {
                list.iter()
                    .find(|(k, _)| k == resource)
                    .and_then(|(_, v)| Quantity::parse(v).ok())
            };
            let (Ok(req), Some(used), Some(limit)) =
                (Quantity::parse(requested), get(&q.used), get(&q.limited))
            else {
                continue;
            };
            let need = used.millis() + req.millis();
            if need > limit.millis() {
                shortfalls.push((
                    resource.clone(),
                    requested.clone(),
                    format_quantity(resource, need),
                    format_quantity(resource, need - limit.millis()),
                    limit.as_str().to_string(),
                    used.as_str().to_string(),
                ));
            }
        }
    }
    let quota = parsed
        .as_ref()
        .map(|q| format!("ResourceQuota {ns}/{}", q.name))
        .unwrap_or_else(|| "a ResourceQuota".into());
    // limits.memory and requests.memory usually read the same: say it once.
    let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
    for (r, req, _, short, limit, used) in &shortfalls {
        let text =
            format!("the target pod requests {req}, {used} of {limit} is used, {short} short");
        match groups.iter_mut().find(|(_, t)| *t == text) {
            Some((names, _)) => names.push(r),
            None => groups.push((vec![r], text)),
        }
    }
    let detail = groups
        .iter()
        .map(|(names, text)| format!("{}: {text}", names.join(" and ")))
        .collect::<Vec<_>>()
        .join("; ");
    f.summary = format!(
        "The target pod cannot be created: it would exceed {quota}{}. The source and target pods both count during a migration; KubeVirt retries without a time limit, so the migration stays Pending until there is room.",
        if detail.is_empty() {
            String::new()
        } else {
            format!(" ({detail})")
        }
    );
    if let Some(q) = &parsed {
        f.next_steps
            .push(format!("kubectl describe resourcequota -n {ns} {}", q.name));
        if !shortfalls.is_empty() {
            let hard: Vec<String> = shortfalls
                .iter()
                .map(|(r, _, need, _, _, _)| format!("\"{r}\":\"{need}\""))
                .collect();
            f.next_steps.push(format!(
                "Raise the quota for the duration of the migration: kubectl patch resourcequota -n {ns} {} --type merge -p '{{\"spec\":{{\"hard\":{{{}}}}}}}'",
                q.name,
                hard.join(",")
            ));
            let mut free: Vec<String> = Vec::new();
            for (r, _, _, short, _, _) in &shortfalls {
                match free
                    .iter_mut()
                    .find(|f| f.starts_with(&format!("{short} of ")))
                {
                    Some(f) => f.push_str(&format!(" and {r}")),
                    None => free.push(format!("{short} of {r}")),
                }
            }
            f.next_steps.push(format!(
                "Or free {} in namespace {ns} (stop or shrink another workload) while the migration runs",
                free.join(", ")
            ));
        }
    } else {
        f.next_steps
            .push(format!("kubectl describe resourcequota -n {ns}"));
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_messages_are_taken_apart() {
        let q = parse_quota_message("Error creating pod: pods \"virt-launcher-shop-web-01-\" is forbidden: exceeded quota: tenant-a-compute, requested: limits.memory=4356Mi,requests.memory=4356Mi, used: limits.memory=20512Mi,requests.memory=20512Mi, limited: limits.memory=24Gi,requests.memory=24Gi").unwrap();
        assert_eq!(q.name, "tenant-a-compute");
        assert_eq!(q.requested.len(), 2);
        assert_eq!(q.used[1], ("requests.memory".into(), "20512Mi".into()));
        assert_eq!(q.limited[0], ("limits.memory".into(), "24Gi".into()));
        assert_eq!(
            format_quantity("requests.memory", 24868 * (1 << 20) * 1000),
            "24868Mi"
        );
        assert_eq!(format_quantity("requests.cpu", 2500), "2500m");
    }
}
