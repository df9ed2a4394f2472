//! The Files server's behaviour (user-owned: mcpgen adds stubs here when the spec grows).

use std::{collections::HashMap, sync::Mutex};

use crate::generated::types::{Confirm, DeleteFolderArgs, FileEntry, ListFolderArgs};
use crate::generated::{Ask, Context, Outcome, Resolvers, ToolError, Tools};

/// The folders and their files.
pub struct Files {
    folders: Mutex<HashMap<String, Vec<FileEntry>>>,
}

/// A file of the seed folders, modified at `modified` (RFC 3339).
fn entry(name: &str, modified: &str) -> FileEntry {
    FileEntry {
        name: name.to_string(),
        modified: modified.parse().expect("a valid RFC 3339 date-time"),
    }
}

impl Default for Files {
    fn default() -> Self {
        Files {
            folders: Mutex::new(HashMap::from([
                ("/tmp/empty".to_string(), vec![]),
                (
                    "/tmp/project".to_string(),
                    vec![
                        entry("main.py", "2026-03-01T09:30:00+09:00"),
                        entry("README.md", "2026-02-27T18:00:00-05:00"),
                    ],
                ),
            ])),
        }
    }
}

impl Files {
    fn file_count(&self, path: &str) -> usize {
        let folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        folders.get(path).map_or(0, Vec::len)
    }
}

impl Resolvers for Files {
    async fn confirm_delete(&self, _ctx: &Context, path: &str) -> Result<Ask<Confirm>, ToolError> {
        let file_count = self.file_count(path);
        if file_count == 0 {
            return Ok(Ask::value(Confirm { ok: true }));
        }
        Ok(Ask::elicit(format!(
            "{path} has {file_count} file(s). Delete anyway?"
        )))
    }
}

impl Tools for Files {
    async fn delete_folder(
        &self,
        _ctx: &Context,
        args: DeleteFolderArgs,
        confirm: Outcome<Confirm>,
    ) -> Result<String, ToolError> {
        Ok(match confirm {
            Outcome::Accepted(Confirm { ok: true }) => {
                let mut folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
                folders.remove(&args.path);
                format!("deleted {}", args.path)
            }
            Outcome::Accepted(_) => "kept the folder".to_string(),
            Outcome::Declined => "declined: folder not deleted".to_string(),
            Outcome::Cancelled => "cancelled: folder not deleted".to_string(),
        })
    }

    async fn list_folder(
        &self,
        _ctx: &Context,
        args: ListFolderArgs,
    ) -> Result<Vec<FileEntry>, ToolError> {
        let folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        let Some(files) = folders.get(&args.path) else {
            return Err(ToolError::new(format!("no folder {}", args.path)));
        };
        Ok(files
            .iter()
            .filter(|f| args.modified_since.is_none_or(|since| f.modified >= since))
            .cloned()
            .collect())
    }
}
