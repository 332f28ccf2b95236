//! The PostgreSQL journal: the same schema on a server. (Being built: issue 28.)

use super::{Access, Committed};
use crate::error::{JournalFault, Result};
use crate::model::journal::{HistoryQuery, MigrationRecord, Pruned, Retention};

pub struct PostgresJournal {
    url: String,
}

/// The URL without its password.
pub fn redact(url: &str) -> String {
    url.to_string()
}

impl PostgresJournal {
    pub async fn open(url: &str, _access: Access) -> Result<PostgresJournal> {
        Err(super::fault(
            &redact(url),
            JournalFault::Other,
            "not built yet",
        ))
    }

    pub fn describe(&self) -> String {
        redact(&self.url)
    }

    pub async fn commit(
        &self,
        _records: &[MigrationRecord],
        _bookmarks: &[(String, String)],
    ) -> Result<Committed> {
        Ok(Committed::default())
    }

    pub async fn bookmark(&self, _name: &str) -> Result<Option<String>> {
        Ok(None)
    }

    pub async fn contains(&self, _id: &str) -> Result<bool> {
        Ok(false)
    }

    pub async fn query(&self, _query: &HistoryQuery) -> Result<Vec<MigrationRecord>> {
        Ok(Vec::new())
    }

    pub async fn prune(&self, _retention: &Retention, _now_ms: i64) -> Result<Pruned> {
        Ok(Pruned::default())
    }
}
