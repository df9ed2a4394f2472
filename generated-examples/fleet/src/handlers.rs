//! The behaviour of the `Fleet` server: one method per resolver, tool, prompt written in code and resource read in code.
//!
//! mcpgen wrote this file once and never overwrites it; `mcpgen generate` appends stubs for
//! tools and resolvers added to the spec. Each stub answers "not implemented" until you write it.
//!
//! The notes live in this replica's memory: a note written on one replica is read there. What
//! crosses replicas is the change notification (`resources/updated` for `notes://{id}`,
//! `resources/list_changed`), through the bus (`--bus`, see the README).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::generated::types;
use crate::generated::{Ask, Context, Resolvers, ResourceBody, Resources, ToolError, Tools};

/// Server-wide state, shared by every call: the notes written on this replica.
#[derive(Debug, Default)]
pub struct Fleet {
    notes: Mutex<HashMap<String, String>>,
}

impl Resolvers for Fleet {
    async fn ask_name(&self, _ctx: &Context, id: &str) -> Result<Ask<types::Signer>, ToolError> {
        Ok(Ask::elicit(format!("Who signs note '{id}'?")))
    }

    async fn ask_confirm(
        &self,
        _ctx: &Context,
        id: &str,
        name: &types::Signer,
    ) -> Result<Ask<types::Confirmation>, ToolError> {
        Ok(Ask::elicit(format!("Sign note '{id}' as {}?", name.name)))
    }
}

impl Tools for Fleet {
    async fn write_note(
        &self,
        ctx: &Context,
        args: types::WriteNoteArgs,
    ) -> Result<String, ToolError> {
        let length = args.text.chars().count();
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(args.id.clone(), args.text);
        let uri = format!("notes://{}", args.id);
        ctx.notifier().resource_updated(uri.clone()).await;
        Ok(format!("Wrote {uri} ({length} characters)."))
    }

    async fn touch_catalog(
        &self,
        ctx: &Context,
        _args: ::serde_json::Map<String, ::serde_json::Value>,
    ) -> Result<String, ToolError> {
        ctx.notifier().resources_list_changed().await;
        Ok("The resource list changed.".to_string())
    }

    async fn sign_note(
        &self,
        _ctx: &Context,
        args: types::SignNoteArgs,
        signer: types::Signer,
        confirmation: types::Confirmation,
    ) -> Result<String, ToolError> {
        Ok(if confirmation.confirm {
            format!("Note '{}' signed by {}.", args.id, signer.name)
        } else {
            format!("Note '{}' not signed.", args.id)
        })
    }
}

impl Resources for Fleet {
    async fn read_note(
        &self,
        _ctx: &Context,
        _uri: &str,
        vars: types::NoteVars,
    ) -> Result<ResourceBody, ToolError> {
        let notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        Ok(ResourceBody::text(
            notes.get(&vars.id).cloned().unwrap_or_default(),
        ))
    }
}
