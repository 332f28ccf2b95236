//! The completion budget KubeVirt's migration monitor allows (FACTS §5.2).

use crate::model::VirtualMachineInstance;

/// `completionTimeoutPerGiB × ceil(guest memory in decimal GB)`; None when the memory is
/// unknown, 0 when the timeout is disabled. Block migrations add disk sizes vmctl cannot
/// see from the API, so this is a lower bound for them.
pub fn completion_budget_seconds(vmi: &VirtualMachineInstance, per_gib: u64) -> Option<u64> {
    Some(budget_for_bytes(per_gib, vmi.guest_memory()?.bytes()))
}

/// The one formula, for any data size: `per_gib × ceil(bytes / 10^9)` (decimal GB, rounded
/// up, as `Quantity.ScaledValue(Giga)` does); 0 disables the timeout.
pub fn budget_for_bytes(per_gib: u64, bytes: u64) -> u64 {
    per_gib.saturating_mul(bytes.div_ceil(1_000_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_gib_guest_gets_450_seconds_by_default() {
        let vmi: VirtualMachineInstance = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "a"}, "spec": {"domain": {"memory": {"guest": "2Gi"}}}
        }))
        .unwrap();
        assert_eq!(completion_budget_seconds(&vmi, 150), Some(450));
        assert_eq!(completion_budget_seconds(&vmi, 0), Some(0));
        assert_eq!(
            completion_budget_seconds(&VirtualMachineInstance::default(), 150),
            None
        );
    }

    #[test]
    fn the_budget_counts_decimal_gigabytes_rounded_up() {
        const MIB: u64 = 1 << 20;
        assert_eq!(budget_for_bytes(150, 256 * MIB), 150);
        // 2 GiB = 2.147 GB -> ceil 3 -> 450 s (FACTS §5.2).
        assert_eq!(budget_for_bytes(150, 2 << 30), 450);
        assert_eq!(budget_for_bytes(150, 1_000_000_000), 150);
        assert_eq!(budget_for_bytes(150, 1_000_000_001), 300);
        assert_eq!(budget_for_bytes(0, 2 << 30), 0);
        assert_eq!(budget_for_bytes(150, 0), 0);
    }
}
