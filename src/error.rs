//! One typed error for the whole tool. The kind decides the exit code; hints say what to do.

use std::fmt;

/// Exit codes, documented in `--help` and the man page.
pub mod exit {
    /// Success, and nothing alarming to report.
    pub const OK: i32 = 0;
    /// The command worked and reports a negative finding (a drain that will block, a failed
    /// migration, nothing to abort).
    pub const FINDING: i32 = 1;
    /// The command line is wrong (unknown flag, bad selector, bad value).
    pub const USAGE: i32 = 2;
    /// A named object (VM, VMI, migration, node) does not exist.
    pub const NOT_FOUND: i32 = 3;
    /// An input file or object is malformed (bad YAML/JSON, wrong kind, empty directory).
    pub const BAD_INPUT: i32 = 4;
    /// The cluster could not be reached or refused the request (401/403/5xx, timeouts).
    pub const CLUSTER: i32 = 5;
    /// A wait ran out of time (`--timeout`).
    pub const TIMEOUT: i32 = 6;
    /// The journal (`--journal`) cannot be used: written by a newer vmctl, corrupted,
    /// unwritable (full disk, read-only), locked for too long, or its server unreachable.
    pub const JOURNAL: i32 = 7;
    /// Interrupted by the operator (Ctrl-C).
    pub const INTERRUPTED: i32 = 130;
    /// A bug in vmctl.
    pub const INTERNAL: i32 = 70;

    /// The table printed in `--help` and the man page.
    pub const TABLE: &str = "\
EXIT CODES:
    0    success
    1    the command worked and reports a negative finding (drain will block,
         migration failed, nothing to abort)
    2    usage error (bad flag, selector or value)
    3    a named object was not found
    4    bad input (malformed or unreadable file, wrong kind, empty directory)
    5    cluster error (unreachable, unauthorised, forbidden, server error)
    6    timed out waiting
    7    journal error (newer schema, corrupted, disk full, unreachable)
    70   internal error (a bug in vmctl)
    130  interrupted";
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{message}")]
    Usage { message: String },

    #[error("{what} not found")]
    NotFound { what: String, hints: Vec<String> },

    #[error("{origin}: {message}")]
    BadInput { origin: String, message: String },

    #[error("{verb} {resource}: {message}")]
    Api {
        verb: String,
        resource: String,
        status: Option<u16>,
        message: String,
        hints: Vec<String>,
    },

    #[error("{message}")]
    Timeout { message: String },

    /// The journal: `journal` names it (a file path, or a PostgreSQL URL without password).
    #[error("journal {journal}: {message}")]
    Journal {
        journal: String,
        fault: JournalFault,
        message: String,
    },

    #[error("interrupted")]
    Interrupted,

    #[error("internal error: {0}")]
    Internal(String),
}

/// What is wrong with a journal, for callers that react differently (the recorder keeps
/// watching when the disk is full; `explain` ignores a journal that does not exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalFault {
    /// Written by a newer vmctl: its schema version is above the one this build knows.
    NewerSchema,
    /// Not a journal, or damaged: reported, never truncated or rewritten.
    Corrupt,
    /// The disk (or the database's quota) is full: nothing more can be written.
    Full,
    /// The file does not exist (read-only commands do not create it).
    Missing,
    /// Another writer held the lock longer than the busy timeout.
    Busy,
    /// The server could not be reached or refused us (PostgreSQL).
    Unreachable,
    /// Anything else the database said.
    Other,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Error::NotFound {
            what: what.into(),
            hints: Vec::new(),
        }
    }

    pub fn bad_input(origin: impl fmt::Display, message: impl Into<String>) -> Self {
        Error::BadInput {
            origin: origin.to_string(),
            message: message.into(),
        }
    }

    pub fn journal(
        journal: impl fmt::Display,
        fault: JournalFault,
        message: impl Into<String>,
    ) -> Self {
        Error::Journal {
            journal: journal.to_string(),
            fault,
            message: message.into(),
        }
    }

    /// The journal fault, when this is a journal error.
    pub fn journal_fault(&self) -> Option<JournalFault> {
        match self {
            Error::Journal { fault, .. } => Some(*fault),
            _ => None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        match &mut self {
            Error::NotFound { hints, .. } | Error::Api { hints, .. } => hints.push(hint.into()),
            _ => {}
        }
        self
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => exit::USAGE,
            Error::NotFound { .. } => exit::NOT_FOUND,
            Error::BadInput { .. } => exit::BAD_INPUT,
            Error::Api { .. } => exit::CLUSTER,
            Error::Timeout { .. } => exit::TIMEOUT,
            Error::Journal { .. } => exit::JOURNAL,
            Error::Interrupted => exit::INTERRUPTED,
            Error::Internal(_) => exit::INTERNAL,
        }
    }

    pub fn hints(&self) -> &[String] {
        match self {
            Error::NotFound { hints, .. } | Error::Api { hints, .. } => hints,
            _ => &[],
        }
    }
}
