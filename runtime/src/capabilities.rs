//! [`Capabilities`]: what a server declares it serves and sends besides tools, from the spec.
//! Every transport reads it (a method whose capability is not declared answers -32601), and so
//! does the notifier (a kind of notification not declared is never sent).

use rmcp::model::{
    JsonObject, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};

/// The capabilities a server declares besides `tools` (always declared), from the spec.
///
/// Exactly these are advertised; a method whose capability is not declared answers -32601.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// `prompts` (the spec has prompts).
    pub prompts: bool,
    /// `resources` (the spec has resources or resource templates).
    pub resources: bool,
    /// `completions` (some prompt argument or template variable declares `complete`).
    pub completions: bool,
    /// `logging` (`"logging": true`).
    pub logging: bool,
    /// `tools.listChanged` (`notifications.toolsListChanged`).
    pub tools_list_changed: bool,
    /// `prompts.listChanged` (`notifications.promptsListChanged`; needs `prompts`).
    pub prompts_list_changed: bool,
    /// `resources.listChanged` (`notifications.resourcesListChanged`; needs `resources`).
    pub resources_list_changed: bool,
    /// `resources.subscribe` (`notifications.resourceSubscriptions`; needs `resources`).
    pub resource_subscriptions: bool,
}

impl Capabilities {
    /// rmcp's `ServerCapabilities` for these (tools always; flags only when `true`).
    pub fn to_server(self) -> ServerCapabilities {
        let mut caps = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        tools.list_changed = self.tools_list_changed.then_some(true);
        caps.tools = Some(tools);
        if self.prompts {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = self.prompts_list_changed.then_some(true);
            caps.prompts = Some(prompts);
        }
        if self.resources {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = self.resource_subscriptions.then_some(true);
            resources.list_changed = self.resources_list_changed.then_some(true);
            caps.resources = Some(resources);
        }
        if self.completions {
            caps.completions = Some(JsonObject::new());
        }
        if self.logging {
            caps.logging = Some(JsonObject::new());
        }
        caps
    }

    /// What `caps` declares (the inverse of [`Capabilities::to_server`]).
    pub fn from_server(caps: &ServerCapabilities) -> Self {
        Capabilities {
            prompts: caps.prompts.is_some(),
            resources: caps.resources.is_some(),
            completions: caps.completions.is_some(),
            logging: caps.logging.is_some(),
            tools_list_changed: caps
                .tools
                .as_ref()
                .is_some_and(|t| t.list_changed == Some(true)),
            prompts_list_changed: caps
                .prompts
                .as_ref()
                .is_some_and(|p| p.list_changed == Some(true)),
            resources_list_changed: caps
                .resources
                .as_ref()
                .is_some_and(|r| r.list_changed == Some(true)),
            resource_subscriptions: caps
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true)),
        }
    }
}
