//! `vmctl explain DOMAIN --connect URI` as text: the domain's last migration job, its
//! diagnosis and the recorded progress.

use crate::render::{Style, Tone, explain};
use crate::triage::Outcome;
use crate::triage::report::LibvirtDiagnosis;

/// The diagnosis as text. The domain's name, the host's name and libvirt's messages are
/// foreign text: escaped.
pub fn render(r: &LibvirtDiagnosis, style: Style) -> String {
    use crate::text::printable as p;
    // A job that is running, or none at all, is neither good nor bad and shows no outcome.
    let (tone, outcome) = match r.diagnosis.outcome {
        Outcome::Succeeded => (Tone::Good, Outcome::Succeeded.as_str()),
        Outcome::InProgress | Outcome::NoMigration => (Tone::Plain, ""),
        o => (Tone::Bad, o.as_str()),
    };
    let mut out = format!(
        "domain {} on {} ({}): last migration job\n",
        p(&r.domain),
        p(&r.host),
        p(&r.uri)
    );
    out.push_str(&format!(
        "  cause:     {} {}\n",
        style.paint(r.diagnosis.cause.id, tone),
        if outcome.is_empty() {
            String::new()
        } else {
            format!("({outcome})")
        }
    ));
    out.push_str(&format!("  summary:   {}\n", p(&r.diagnosis.summary)));
    out.push_str("  evidence:\n");
    for fact in &r.diagnosis.evidence {
        out.push_str(&format!("    - {}\n", p(&fact.value)));
    }
    out.push_str(&format!("  next:      {}\n", p(r.diagnosis.rule.advice)));
    out.push_str(&explain::progress_section(r.progress_series.as_ref()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::classify::{CompletedJob, DomainStatus, JobEnd, classify};

    fn report(job: CompletedJob, state: DomainStatus) -> LibvirtDiagnosis {
        LibvirtDiagnosis {
            api_version: crate::model::VMCTL_API_VERSION,
            kind: "LibvirtJobDiagnosis",
            domain: "web-01".into(),
            uri: "qemu+ssh://src/system".into(),
            host: "src".into(),
            domain_state: state,
            diagnosis: classify(&job, state).diagnosis("web-01", "src", state),
            job,
            progress_series: None,
        }
    }

    /// The text is what it was when the classifier had its own result type.
    #[test]
    fn the_text_is_unchanged_by_the_shared_diagnosis() {
        let job = CompletedJob {
            end: JobEnd::Failed,
            error_message: Some("operation failed: Lost connection to destination host".into()),
            elapsed_ms: Some(15_600),
            memory_total: Some(256 << 20),
            data_processed: Some(400 << 20),
            memory_bps: Some(32 << 20),
            dirty_rate_bps: Some(4 << 20),
            iteration: Some(5),
            ..Default::default()
        };
        let text = render(&report(job, DomainStatus::Running), Style { color: false });
        assert_eq!(
            text,
            "domain web-01 on src (qemu+ssh://src/system): last migration job\n\
             \x20 cause:     connection-failure (failed)\n\
             \x20 summary:   the connection between the hosts broke: operation failed: Lost connection to destination host\n\
             \x20 evidence:\n\
             \x20   - job: failed\n\
             \x20   - time elapsed: 15.6 s\n\
             \x20   - error: operation failed: Lost connection to destination host\n\
             \x20   - data processed: 400.0 MiB (guest memory 256.0 MiB)\n\
             \x20   - passes: 5\n\
             \x20   - last transfer rate 32.0 MiB/s, dirty rate 4.0 MiB/s\n\
             \x20   - domain now: running\n\
             \x20 next:      Check the destination daemon and the network between the hosts; the guest is still on the source if it was in pre-copy.\n"
        );
        // Nothing on record: no outcome in brackets (the line keeps its trailing space).
        let text = render(
            &report(CompletedJob::default(), DomainStatus::ShutOff),
            Style { color: false },
        );
        assert!(text.contains("\n  cause:     no-migration \n"), "{text}");
    }

    #[test]
    fn the_json_document_keeps_cause_and_gains_the_diagnosis_fields() {
        let r = report(CompletedJob::default(), DomainStatus::ShutOff);
        let json: serde_json::Value = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(json["cause"], "no-migration");
        assert_eq!(json["outcome"], "no-migration");
        assert_eq!(json["plane"], "none");
        assert_eq!(json["rule"]["id"], "no-migration");
        assert_eq!(json["vmi"]["name"], "web-01");
        assert_eq!(json["domainState"], "shut-off");
        assert_eq!(json["evidence"][0]["field"], "jobStats.type");
        assert_eq!(json["evidence"][0]["value"], "job: none");
    }

    #[test]
    fn foreign_text_reaches_the_terminal_escaped() {
        let job = CompletedJob {
            end: JobEnd::Failed,
            error_message: Some("operation failed: \u{1b}]0;owned\u{7}".into()),
            ..Default::default()
        };
        let mut r = report(job, DomainStatus::Running);
        r.domain = "web\u{1b}[2J".into();
        r.host = "src\u{9b}31m".into();
        let text = render(&r, Style { color: false });
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.contains("domain web\\u{1b}[2J on src\\u{9b}31m"),
            "{text}"
        );
        assert!(text.contains("\\u{1b}]0;owned\\u{7}"), "{text}");
    }
}
