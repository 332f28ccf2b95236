//! The SQLite journal: one file, bundled SQLite, WAL. (Being built: issue 28.)

use std::path::{Path, PathBuf};

use super::{Access, Committed};
use crate::error::{JournalFault, Result};
use crate::model::journal::{HistoryQuery, MigrationRecord, Pruned, Retention};

pub struct SqliteJournal {
    path: PathBuf,
}

impl SqliteJournal {
    pub fn open(path: &Path, _access: Access) -> Result<SqliteJournal> {
        Err(super::fault(
            &path.display().to_string(),
            JournalFault::Other,
            "not built yet",
        ))
    }

    pub fn describe(&self) -> String {
        self.path.display().to_string()
    }

    pub fn commit(
        &self,
        _records: &[MigrationRecord],
        _bookmarks: &[(String, String)],
    ) -> Result<Committed> {
        Ok(Committed::default())
    }

    pub fn bookmark(&self, _name: &str) -> Result<Option<String>> {
        Ok(None)
    }

    pub fn contains(&self, _id: &str) -> Result<bool> {
        Ok(false)
    }

    pub fn query(&self, _query: &HistoryQuery) -> Result<Vec<MigrationRecord>> {
        Ok(Vec::new())
    }

    pub fn prune(&self, _retention: &Retention, _now_ms: i64) -> Result<Pruned> {
        Ok(Pruned::default())
    }
}
