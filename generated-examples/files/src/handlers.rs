//! The Files server's behaviour (user-owned: mcpgen adds stubs here when the spec grows).

use std::{collections::HashMap, sync::Mutex};

use crate::generated::types::{Confirm, DeleteFolderArgs};
use crate::generated::{Ask, Context, Outcome, Resolvers, ToolError, Tools};

/// The folders and their files.
pub struct Files {
    folders: Mutex<HashMap<String, Vec<String>>>,
}

impl Default for Files {
    fn default() -> Self {
        Files {
            folders: Mutex::new(HashMap::from([
                ("/tmp/empty".to_string(), vec![]),
                (
                    "/tmp/project".to_string(),
                    vec!["main.py".to_string(), "README.md".to_string()],
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
}
