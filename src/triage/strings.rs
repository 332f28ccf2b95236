//! The exact strings KubeVirt writes, for both release lines (FACTS §3, §5.5, §6).
//!
//! Kept in one place so a reader can check every rule against the source it came from;
//! many production clusters still run v1.2–v1.8 while new ones write the v1.9+ forms, so
//! the matchers below accept both.

// --- migrationState.failureReason, written by virt-launcher (FACTS §5.3, §5.5) ---

/// v1.9+: every successful abort, by the user or by the migration monitor.
pub const ABORTED_V19: &str = "Live migration has been aborted";
/// ≤v1.8: a user abort (written with a trailing space).
pub const ABORTED_V18: &str = "Live migration aborted ";
/// ≤v1.8: `Live migration stuck for <N> seconds and has been aborted` (≤v0.52: `sec`).
pub const STUCK_V18_PREFIX: &str = "Live migration stuck for ";
/// ≤v1.8: `Live migration is not completed after <N> seconds and has been aborted`.
pub const NOT_COMPLETED_V18_PREFIX: &str = "Live migration is not completed after ";
pub const HAS_BEEN_ABORTED_SUFFIX: &str = "and has been aborted";
/// ≤v1.8 prefix before a raw libvirt error; v1.9+ writes the libvirt error alone.
pub const FAILED_V18_PREFIX: &str = "Live migration failed ";
/// libvirt's `VIR_ERR_OPERATION_ABORTED` text: an abort that won the race to failureReason.
pub const LIBVIRT_CANCELED_BY_CLIENT: &str = "canceled by client";
/// v1.9+ spelling.
pub const VOLUME_TOO_SMALL_V19: &str = "Volume migration cannot be performed because the destination volume is smaller than the source volume";
/// ≤v1.8 spelling (sic "then").
pub const VOLUME_TOO_SMALL_V18: &str = "Volume migration cannot be performed because the destination volume is smaller then the source volume";
pub const MONITOR_LOOKUP_FAILED: &str = "migration monitor failed to look up domain";
/// Written by the launcher when a backup holds the domain (FACTS §5.1).
pub const BACKUP_IN_PROGRESS_LAUNCHER: &str = "cannot migrate VMI until backup";

// --- written by virt-controller / virt-handler ---

/// failureReason when the target pod vanished before streaming started.
pub const TARGET_POD_DOWN: &str = "Target pod is down";
/// Synchronized=False message after a post-copy failure (virt-handler).
pub const POSTCOPY_IRRECOVERABLE: &str = "VMI is irrecoverable due to failed post-copy migration";

// --- VMIM FailedMigration event messages (FACTS §6.1) ---

pub const VMI_DOES_NOT_EXIST: &str = "Migration failed because vmi does not exist.";
pub const VMI_SHUTDOWN: &str = "Migration failed vmi shutdown during migration.";
pub const CANCELED: &str = "Migration failed due to being canceled";
pub const TARGET_POD_SHUTDOWN: &str =
    "Migration failed because target pod shutdown during migration";
pub const TARGET_POD_REMOVED: &str = "Migration target pod was removed during active migration.";
pub const ATTACHMENT_POD_SHUTDOWN: &str =
    "Migration failed because target attachment pod shutdown during migration";
pub const STATE_CLEARED: &str = "VMI's migration state was cleared during the active migration.";
pub const STATE_TAKEN_OVER: &str =
    "VMI's migration state was taken over by another migration job during active migration.";
pub const SOURCE_REPORTED_FAILED: &str = "source node reported migration failed";
pub const ANOTHER_IN_PROGRESS: &str =
    "VMI is not eligible for migration because another migration job is in progress.";
pub const UTILITY_VOLUMES_TIMEOUT_PREFIX: &str =
    "Migration timeout waiting for utility volumes to detach from VMI";

// --- other event messages ---

/// `SuccessfulDelete` after the 300 s unschedulable timeout: `unschedulable pod <ns>/<pod> timeout period exceeded`.
pub const UNSCHEDULABLE_DELETE_PREFIX: &str = "unschedulable pod ";
/// `SuccessfulDelete` after the 900 s pending timeout: `pending pod <ns>/<pod> timeout period exceeded`.
pub const PENDING_DELETE_PREFIX: &str = "pending pod ";
pub const TIMEOUT_EXCEEDED_SUFFIX: &str = " timeout period exceeded";
/// `SuccessfulDelete` when a migration is cancelled before hand-off.
pub const CANCELED_DELETE_PREFIX: &str = "migration canceled and pod ";
/// `SuccessfulCreate` on the VMIM.
pub const CREATED_TARGET_POD_PREFIX: &str = "Created migration target pod ";
pub const DOMAIN_NEVER_OBSERVED: &str = "The VirtualMachineInstance's domain was never observed on the target after the migration completed within the timeout period.";
pub const MIGRATED_UNKNOWN_HOST: &str = "The VirtualMachineInstance migrated to unknown host.";
pub const EXCEEDED_QUOTA: &str = "exceeded quota";
pub const ERROR_CREATING_POD: &str = "Error creating pod";

// --- event reasons ---

pub const REASON_FAILED_MIGRATION: &str = "FailedMigration";
pub const REASON_TARGET_UNSCHEDULABLE: &str = "migrationTargetPodUnschedulable";
pub const REASON_FAILED_SCHEDULING: &str = "FailedScheduling";
pub const REASON_SUCCESSFUL_DELETE: &str = "SuccessfulDelete";
pub const REASON_SUCCESSFUL_CREATE: &str = "SuccessfulCreate";
pub const REASON_FAILED_CREATE: &str = "FailedCreate";
pub const REASON_NO_NODE_FOR_CPU_MODEL: &str = "NoSuitableNodesForHostModelMigration";
pub const REASON_UTILITY_VOLUMES: &str = "UtilityVolumeMigrationPending";
pub const REASON_BACKUP_ABORTED: &str = "BackupAbortedForMigration";
pub const REASON_BACKUP_ABORT_FAILED: &str = "BackupAbortFailed";
pub const REASON_BACKOFF: &str = "MigrationBackoff";
pub const REASON_MIGRATED: &str = "Migrated";
pub const REASON_SYNC_FAILED: &str = "SyncFailed";

// --- VMIM condition types (FACTS §3.2) ---

pub const COND_ABORT_REQUESTED: &str = "migrationAbortRequested";
pub const COND_QUOTA: &str = "migrationRejectedByResourceQuota";
pub const COND_UTILITY_VOLUMES: &str = "migrationBlockedByUtilityVolumes";
pub const COND_BACKUP: &str = "migrationBlockedByBackup";

// --- annotations ---

pub const UNSCHEDULABLE_TIMEOUT_ANNOTATION: &str =
    "kubevirt.io/migrationUnschedulablePodTimeoutSeconds";
pub const PENDING_TIMEOUT_ANNOTATION: &str = "kubevirt.io/migrationPendingPodTimeoutSeconds";
pub const DOMAIN_ANNOTATION: &str = "kubevirt.io/domain";

// --- numbers (FACTS §5.7) ---

pub const UNSCHEDULABLE_TIMEOUT_SECONDS: i64 =
    crate::model::kubevirt::UNSCHEDULABLE_POD_TIMEOUT_SECONDS as i64;
pub const PENDING_TIMEOUT_SECONDS: i64 = crate::model::kubevirt::PENDING_POD_TIMEOUT_SECONDS as i64;
pub const BACKOFF_INITIAL_SECONDS: i64 = 20;

/// How a source-reported failure reads, normalised across releases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureText<'a> {
    /// A successful abort without saying why: v1.9+ `Live migration has been aborted`, or a
    /// libvirt "canceled by client" error that won the race (any release).
    GenericAbort,
    /// ≤v1.8 `Live migration aborted ` (user abort).
    UserAbortV18,
    /// ≤v1.8 `Live migration stuck for <N> seconds and has been aborted`.
    StuckV18 {
        seconds: Option<u64>,
    },
    /// ≤v1.8 `Live migration is not completed after <N> seconds and has been aborted`.
    NotCompletedV18 {
        seconds: Option<u64>,
    },
    VolumeTooSmall,
    /// Anything else: usually a raw libvirt error, quoted.
    Other(&'a str),
}

/// `150 seconds and has been aborted` → 150.
fn leading_number(text: &str) -> Option<u64> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Classifies a `failureReason` as written by any release.
pub fn classify_failure(reason: &str) -> FailureText<'_> {
    let trimmed = reason.trim();
    if trimmed == ABORTED_V19 {
        return FailureText::GenericAbort;
    }
    if trimmed == ABORTED_V18.trim_end() {
        return FailureText::UserAbortV18;
    }
    if let Some(rest) = trimmed.strip_prefix(STUCK_V18_PREFIX)
        && rest.ends_with(HAS_BEEN_ABORTED_SUFFIX)
    {
        return FailureText::StuckV18 {
            seconds: leading_number(rest),
        };
    }
    if let Some(rest) = trimmed.strip_prefix(NOT_COMPLETED_V18_PREFIX)
        && rest.ends_with(HAS_BEEN_ABORTED_SUFFIX)
    {
        return FailureText::NotCompletedV18 {
            seconds: leading_number(rest),
        };
    }
    if trimmed.starts_with(VOLUME_TOO_SMALL_V19) || trimmed.starts_with(VOLUME_TOO_SMALL_V18) {
        return FailureText::VolumeTooSmall;
    }
    if is_canceled_by_client(trimmed) {
        return FailureText::GenericAbort;
    }
    FailureText::Other(trimmed)
}

/// Substrings (lower case) of libvirt, QEMU and migration-proxy errors that mean the
/// connection between source and target broke or never came up. The one list: KubeVirt's
/// `failureReason` (`rules/connection_failure.rs`) and the error of a libvirt migrate call
/// (`migration::classify`) are matched against it, so the same libvirt text is the same
/// cause on both paths.
pub const CONNECTION_ERRORS: &[&str] = &[
    // The link broke.
    "lost connection",
    "connection reset",
    "connection closed",
    "connection timed out",
    "broken pipe",
    "end of file while reading",
    "socket is closed",
    "keepalive timeout",
    "cannot recv data",
    "cannot write data",
    "unable to write to socket",
    "unable to read from socket",
    "i/o timeout",
    // libvirt's words when the source QEMU's monitor socket went away during the migration
    // (QEMU's own crash reads "qemu unexpectedly closed the monitor" and is not matched).
    "unable to read from monitor",
    // It never came up.
    "connection refused",
    "unable to connect",
    "failed to connect",
    "no connection",
    "no route to host",
    "network is unreachable",
    "tls handshake",
    // KubeVirt's migration proxy (virt-handler) dials unix and tcp sockets.
    "dial unix",
    "dial tcp",
    "migration proxy",
];

/// True when a failure text names a broken connection.
pub fn is_connection_error(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    CONNECTION_ERRORS
        .iter()
        .any(|needle| lower.contains(needle))
}

/// True when libvirt says the job was cancelled on request (`VIR_ERR_OPERATION_ABORTED`,
/// either spelling): KubeVirt's `failureReason` and a libvirt migrate call's error alike.
pub fn is_canceled_by_client(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains(LIBVIRT_CANCELED_BY_CLIENT) || lower.contains("cancelled by client")
}

/// `virError(Code=9, Domain=10, Message='…')` → (9, "…").
pub fn libvirt_error(text: &str) -> Option<(Option<i64>, String)> {
    let start = text.find("virError(")?;
    let inner = &text[start + "virError(".len()..];
    let code = inner
        .strip_prefix("Code=")
        .and_then(|r| r.split(',').next())
        .and_then(|c| c.trim().parse().ok());
    let message = match vir_error_message(inner) {
        Some(m) => m.to_string(),
        None => inner.trim_end_matches(')').to_string(),
    };
    Some((code, message))
}

/// The `Message='…'` of what follows `virError(`.
fn vir_error_message(inner: &str) -> Option<&str> {
    let i = inner.find("Message='")?;
    let m = &inner[i + "Message='".len()..];
    Some(m.strip_suffix("')").unwrap_or(m))
}

// --- the stall detector's log lines (source launcher, v1.9+; read by nobody but the operator) ---
// `pkg/virt-launcher/virtwrap/live-migration-source.go` (main 2026-08): `triggerConvergenceAction`,
// `processCompletionTimeouts`, `startMonitor`.

/// `aborting migration: <reason>` and `aborting migration due to completion timeout: …`.
pub const STALL_LOG_ABORT: &str = "aborting migration";
pub const STALL_LOG_POSTCOPY: &str = "starting post copy mode";
pub const STALL_LOG_HARD_SWITCHOVER: &str = "forcing switchover";
pub const STALL_LOG_SOFT_SWITCHOVER: &str = "max downtime set to";
/// The stall detector could not register libvirt's iteration callback and is off for this
/// migration: the legacy checks apply.
pub const STALL_LOG_FALLBACK: &str = "falling back to legacy stall handling";

// --- libvirt and QEMU failure signatures (issue 25 §2) ---
//
// Matched case-sensitively against the libvirt message (the `Message='…'` of a `virError(…)`,
// or the text itself without KubeVirt's ≤v1.8 prefix): these strings are printf formats in
// libvirt and QEMU, so a variant in another case or without its anchor is not the signature
// and stays `libvirt-error` (quoted). `migration::classify` matches a libvirt migrate call's
// error with the same function, so both paths give the same cause.

/// libvirt `src/cpu/cpu_x86.c` `virCPUx86UpdateLive` (VIR_ERR_OPERATION_FAILED): the target's
/// QEMU started the incoming guest with a CPU that differs from the one the domain XML asks
/// for. Followed by `: extra features: A,B`, `: missing features: C`, both
/// (`extra features: A, missing features: C`) or nothing. Seen after upgrades:
/// kubevirt#12519, harvester#11358 (`missing features: pdcm`, QEMU 10.1), harvester#11615
/// (`extra features: ht`, QEMU 10.0 and libvirt before the fix), harvester#5755.
pub const CPU_MISMATCH: &str = "operation failed: guest CPU doesn't match specification";
/// libvirt `src/qemu/qemu_migration.c` `qemuMigrationJobCheckStatus`: `job '%1$s' failed: %2$s`
/// with QEMU's error; the target's QEMU refused a device's state with
/// `load of migration failed: Operation not permitted` (a device loader returned -1, i.e.
/// EPERM: virtio's `Features 0x… unsupported`, kubevirt#16386:
/// `operation failed: job 'migration in' failed: load of migration failed: Operation not permitted`).
pub const LOAD_REFUSED: &str = "operation failed: job 'migration in' failed: load of migration failed: Operation not permitted";
/// QEMU `hw/virtio/virtio.c` `virtio_load`: `Features 0x%x unsupported. Allowed features: 0x%x`,
/// then `migration/vmstate.c`: `Failed to load %s:%s` and `migration/savevm.c`:
/// `error while loading state for instance 0x%x of device '%s'` (kubevirt#16386; qemu-devel
/// "virtio-net: USO" threads). Read only inside a QEMU message libvirt passed on.
pub const QEMU_FEATURES_PREFIX: &str = "Features 0x";
pub const QEMU_FEATURES_MIDDLE: &str = " unsupported. Allowed features: 0x";
pub const QEMU_FAILED_TO_LOAD: &str = "Failed to load ";
pub const QEMU_LOADING_STATE: &str = "error while loading state for instance 0x";
/// libvirt's wrapper of a QEMU that died on the target (both spellings across releases).
pub const QEMU_CLOSED_MONITOR: [&str; 2] = [
    "QEMU unexpectedly closed the monitor",
    "qemu unexpectedly closed the monitor",
];
/// libvirt `VIR_ERR_MIGRATE_UNSAFE` (code 81), `src/util/virerror.c` `Unsafe migration: %s`;
/// `qemuMigrationSrcIsSafe` refuses before anything is sent, e.g. kubevirt#10094
/// `Unsafe migration: Migration without shared storage is unsafe`.
pub const UNSAFE_MIGRATION: &str = "Unsafe migration: ";
/// libvirt `qemuMigrationAnyCompleted`: the guest paused on a disk I/O error
/// (VIR_DOMAIN_PAUSED_IOERROR) while `VIR_MIGRATE_ABORT_ON_ERROR` was set: `job '%1$s' failed
/// due to I/O error`.
pub const IO_ERROR_SUFFIX: &str = "' failed due to I/O error";
/// libvirt `qemuMigrationJobCheckStatus`: QEMU paused a post-copy migration
/// (VIR_DOMAIN_JOB_STATUS_POSTCOPY_PAUSED): `job '%1$s' failed in post-copy phase`.
pub const POSTCOPY_PHASE_SUFFIX: &str = "' failed in post-copy phase";
/// QEMU `migration/migration.c` `postcopy_pause`: `Detected IO failure for postcopy. Migration
/// paused.` (in the QEMU log; libvirt may pass it on).
pub const QEMU_POSTCOPY_IO: &str = "Detected IO failure for postcopy. Migration paused.";
/// The start of a libvirt job error: `operation failed: job '`.
const JOB_PREFIX: &str = "operation failed: job '";

/// A libvirt or QEMU failure that names its cause, read from a failure text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature<'a> {
    /// The target's CPU differs from the guest's: the features libvirt lists.
    CpuMismatch {
        missing: Vec<&'a str>,
        extra: Vec<&'a str>,
    },
    /// The target's QEMU refused a device's migrated state.
    DeviceState {
        /// `virtio-net:virtio` from `Failed to load virtio-net:virtio`.
        device: Option<&'a str>,
        /// (offered, allowed) from `Features 0x… unsupported. Allowed features: 0x…`.
        features: Option<(&'a str, &'a str)>,
    },
    /// libvirt refused to start an unsafe migration: its reason.
    Unsafe { why: &'a str },
    /// The guest paused on a disk I/O error during the migration: the job name.
    StorageIo { job: &'a str },
    /// QEMU paused a post-copy migration on an I/O failure (the link broke).
    PostcopyIo,
}

/// The libvirt message inside a failure text: `virError(…, Message='…')`'s message, else the
/// text without KubeVirt's ≤v1.8 `Live migration failed ` prefix.
pub fn libvirt_message(text: &str) -> &str {
    let trimmed = text.trim();
    if let Some(start) = trimmed.find("virError(")
        && let Some(m) = vir_error_message(&trimmed[start + "virError(".len()..])
    {
        return m;
    }
    trimmed.strip_prefix(FAILED_V18_PREFIX).unwrap_or(trimmed)
}

/// A comma-separated feature list as libvirt prints it (`pdcm,arch-capabilities`): only
/// names made of letters, digits, `-`, `_` and `.`; None when anything else is in it.
fn feature_list(text: &str) -> Option<Vec<&str>> {
    let names: Vec<&str> = text.split(',').map(str::trim).collect();
    let ok = names.iter().all(|n| {
        !n.is_empty()
            && n.len() <= 64
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    });
    ok.then_some(names)
}

/// The job name of `operation failed: job '<name>'<suffix>` when the message is exactly that.
fn job_with_suffix<'a>(message: &'a str, suffix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(JOB_PREFIX)?.strip_suffix(suffix)?;
    (!rest.is_empty() && rest.len() <= 32 && !rest.contains('\'')).then_some(rest)
}

/// `0x1c0010130afffaf` → the hex digits after `0x`, when there are some.
fn hex_after(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !c.is_ascii_hexdigit())
        .unwrap_or(text.len());
    (end > 0 && end <= 32).then(|| &text[..end])
}

fn cpu_mismatch(message: &str) -> Option<Signature<'_>> {
    let rest = message.strip_prefix(CPU_MISMATCH)?;
    if rest.is_empty() {
        return Some(Signature::CpuMismatch {
            missing: Vec::new(),
            extra: Vec::new(),
        });
    }
    let rest = rest.strip_prefix(": ")?;
    let (extra, missing) = if let Some(both) = rest.strip_prefix("extra features: ") {
        match both.split_once(", missing features: ") {
            Some((e, m)) => (feature_list(e)?, feature_list(m)?),
            None => (feature_list(both)?, Vec::new()),
        }
    } else if let Some(m) = rest.strip_prefix("missing features: ") {
        (Vec::new(), feature_list(m)?)
    } else {
        return None;
    };
    Some(Signature::CpuMismatch { missing, extra })
}

fn device_state(message: &str) -> Option<Signature<'_>> {
    let from_qemu =
        QEMU_CLOSED_MONITOR.iter().any(|q| message.contains(q)) || message.starts_with(JOB_PREFIX);
    if !from_qemu {
        return None;
    }
    let device = message.find(QEMU_FAILED_TO_LOAD).and_then(|i| {
        let d = &message[i + QEMU_FAILED_TO_LOAD.len()..];
        let d = &d[..d
            .find(|c: char| c.is_whitespace() || c == '\'')
            .unwrap_or(d.len())];
        (d.contains(':') && d.len() <= 64).then_some(d)
    });
    let features = message.find(QEMU_FEATURES_PREFIX).and_then(|i| {
        let rest = &message[i + QEMU_FEATURES_PREFIX.len()..];
        let offered = hex_after(rest)?;
        let allowed = rest[offered.len()..].strip_prefix(QEMU_FEATURES_MIDDLE)?;
        Some((offered, hex_after(allowed)?))
    });
    let loading = message.contains(QEMU_LOADING_STATE);
    if message.starts_with(LOAD_REFUSED) || device.is_some() || features.is_some() || loading {
        Some(Signature::DeviceState { device, features })
    } else {
        None
    }
}

/// The signature in a failure text (KubeVirt's `failureReason`, a libvirt error), if it has
/// one of those above; None for anything else, garbled or truncated text included.
pub fn signature(text: &str) -> Option<Signature<'_>> {
    let message = libvirt_message(text);
    if message.chars().any(|c| c.is_control() && c != '\n') {
        return None;
    }
    if let Some(sig) = cpu_mismatch(message) {
        return Some(sig);
    }
    if let Some(why) = message.strip_prefix(UNSAFE_MIGRATION)
        && !why.trim().is_empty()
    {
        return Some(Signature::Unsafe { why: why.trim() });
    }
    if let Some(job) = job_with_suffix(message, IO_ERROR_SUFFIX) {
        return Some(Signature::StorageIo { job });
    }
    if job_with_suffix(message, POSTCOPY_PHASE_SUFFIX).is_some()
        || message.contains(QEMU_POSTCOPY_IO)
    {
        return Some(Signature::PostcopyIo);
    }
    device_state(message)
}

/// The pod name in `unschedulable pod <ns>/<pod> timeout period exceeded` and the
/// like; `prefix` is one of the `*_DELETE_PREFIX` constants.
pub fn pod_in_delete_message<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(prefix)?;
    let qualified = rest.split_whitespace().next()?;
    Some(qualified.rsplit('/').next().unwrap_or(qualified))
}

/// The scheduler's verdict (a `FailedScheduling` message, a `PodScheduled=False` condition)
/// without the preemption epilogue and without its closing full stop, to quote inside a
/// sentence or a table cell: `0/4 nodes are available: 3 Insufficient memory. preemption: …`
/// → `0/4 nodes are available: 3 Insufficient memory`. `explain` and `status` both use it.
pub fn scheduler_summary(message: &str) -> &str {
    message
        .split(" preemption:")
        .next()
        .unwrap_or(message)
        .trim_end()
        .trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_release_lines_are_recognised() {
        assert_eq!(
            classify_failure("Live migration has been aborted"),
            FailureText::GenericAbort
        );
        assert_eq!(
            classify_failure("Live migration aborted "),
            FailureText::UserAbortV18
        );
        assert_eq!(
            classify_failure("Live migration stuck for 150 seconds and has been aborted"),
            FailureText::StuckV18 { seconds: Some(150) }
        );
        assert_eq!(
            classify_failure("Live migration stuck for 150 sec and has been aborted"),
            FailureText::StuckV18 { seconds: Some(150) }
        );
        assert_eq!(
            classify_failure(
                "Live migration is not completed after 450 seconds and has been aborted"
            ),
            FailureText::NotCompletedV18 { seconds: Some(450) }
        );
        assert_eq!(
            classify_failure(
                "Volume migration cannot be performed because the destination volume is smaller then the source volume: x"
            ),
            FailureText::VolumeTooSmall
        );
        assert_eq!(
            classify_failure(
                "Volume migration cannot be performed because the destination volume is smaller than the source volume: x"
            ),
            FailureText::VolumeTooSmall
        );
        assert_eq!(
            classify_failure(
                "Live migration failed virError(Code=78, Domain=10, Message='operation aborted: job 'migration out' canceled by client')"
            ),
            FailureText::GenericAbort
        );
    }

    #[test]
    fn libvirt_errors_are_taken_apart() {
        let (code, msg) = libvirt_error("Live migration failed virError(Code=9, Domain=10, Message='operation failed: job 'migration out' failed: Unable to write to socket: Connection reset by peer')").unwrap();
        assert_eq!(code, Some(9));
        assert!(msg.ends_with("Connection reset by peer"), "{msg}");
        assert!(is_connection_error(&msg));
        assert!(!is_connection_error(
            "internal error: qemu unexpectedly closed the monitor"
        ));
    }

    #[test]
    fn pod_names_in_delete_messages() {
        assert_eq!(
            pod_in_delete_message(
                "unschedulable pod prod/virt-launcher-a-625jp timeout period exceeded",
                UNSCHEDULABLE_DELETE_PREFIX
            ),
            Some("virt-launcher-a-625jp")
        );
        assert_eq!(
            pod_in_delete_message("something else", PENDING_DELETE_PREFIX),
            None
        );
    }

    #[test]
    fn the_scheduler_verdict_loses_the_preemption_epilogue_and_the_full_stop() {
        assert_eq!(
            scheduler_summary(
                "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient memory. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
            ),
            "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient memory"
        );
        assert_eq!(
            scheduler_summary("0/2 nodes are available: 2 Insufficient cpu."),
            "0/2 nodes are available: 2 Insufficient cpu"
        );
        assert_eq!(scheduler_summary("unschedulable"), "unschedulable");
    }

    #[test]
    fn a_cancel_on_request_reads_the_same_in_either_spelling() {
        assert!(is_canceled_by_client(
            "operation aborted: job 'migration out' canceled by client"
        ));
        assert!(is_canceled_by_client("Job Cancelled By Client"));
        assert!(!is_canceled_by_client(
            "operation aborted: migration job: failed"
        ));
        assert_eq!(
            classify_failure("operation aborted: job 'migration out' cancelled by client"),
            FailureText::GenericAbort
        );
    }
}
