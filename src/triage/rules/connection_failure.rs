//! The `connection-failure` rule: its cause, what it reads, its advice and its check.

use super::*;

pub(crate) const CONNECTION_FAILURE: Rule = Rule {
    cause: Cause {
        id: "connection-failure",
        plane: Plane::DataPlane,
    },
    reads: &["status.migrationState.failureReason"],
    advice: "The connection between source and target broke (libvirt, migration proxy, socket): check the network between the nodes and virt-handler on both.",
    blocks: true,
    check: connection_failure,
};

pub(super) fn connection_failure(v: &View) -> Option<Finding> {
    let r = v.failure_reason()?;
    if !s::is_connection_error(r) {
        return None;
    }
    let detail = s::libvirt_error(r)
        .map(|(_, m)| m)
        .unwrap_or_else(|| r.to_string());
    Some(Finding {
        summary: format!(
            "The connection between the source ({}) and the target ({}) broke during the migration: {detail}",
            src_node(v),
            tgt_node(v)
        ),
        evidence: failure_fact(v).into_iter().collect(),
        next_steps: vec![
            format!(
                "Check the network between {} and {} (node-to-node reachability, MTU, firewalls on the migration ports 49152/49153), and virt-handler's log on both nodes (it runs the migration proxy)",
                src_node(v),
                tgt_node(v)
            ),
            retry_step(v),
        ],
        ..Default::default()
    })
}
