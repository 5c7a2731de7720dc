//! The MCP server (`factory serve-mcp`): factory's project state, history, eval,
//! precheck, modes, compiler and runs as tools an agent calls over stdio, and its
//! records as resources (spec §11, §15).
//!
//! - [`params`]: the tools' arguments and their JSON schemas.
//! - [`tools`]: what each tool does, on the runtime's and compiler's functions.
//! - [`background`]: runs started in the background, their status and events.
//! - [`resources`]: results.tsv, the last eval, a run's events.
//!
//! Every failure a caller can cause is a tool error (`isError: true`) whose text says
//! why and what to do; the server never exits on one. Nothing but the protocol is
//! written to stdout.

mod background;
mod params;
mod resources;
mod tools;

use std::path::PathBuf;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_router};
use serde_json::Value;

use background::Started;
use params::*;

/// The server: the project calls default to, and the runs it started.
#[derive(Clone)]
pub struct FactoryMcp {
    project: PathBuf,
    started: Started,
    tool_router: ToolRouter<Self>,
}

/// Serves MCP over stdin/stdout until the client closes the connection.
pub async fn serve_stdio(project: PathBuf) -> Result<(), String> {
    let server = FactoryMcp::new(project)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP handshake failed: {e}"))?;
    server
        .waiting()
        .await
        .map_err(|e| format!("the MCP server stopped: {e}"))?;
    Ok(())
}

/// A tool's outcome as an MCP result: the JSON as text (and as structured content),
/// or the reason as a tool error.
fn result(outcome: Result<Value, String>) -> CallToolResult {
    match outcome {
        Ok(value) => {
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            // structuredContent must be an object.
            if value.is_object() {
                r.structured_content = Some(value);
            }
            r
        }
        Err(reason) => CallToolResult::error(vec![ContentBlock::text(reason)]),
    }
}

impl FactoryMcp {
    pub fn new(project: PathBuf) -> Self {
        Self {
            project,
            started: Started::default(),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs `work` on the blocking pool against the project `given` names (else the
    /// server's): eval, precheck and git must not stall the protocol.
    async fn on_project<F>(
        &self,
        given: Option<String>,
        work: F,
    ) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(PathBuf) -> Result<Value, String> + Send + 'static,
    {
        let project = match tools::project_of(&self.project, given.as_deref()) {
            Ok(p) => p,
            Err(reason) => return Ok(result(Err(reason))),
        };
        let outcome = tokio::task::spawn_blocking(move || work(project))
            .await
            .unwrap_or_else(|e| {
                Err(format!(
                    "factory hit an internal bug running this tool ({e}); this is never your input's fault"
                ))
            });
        Ok(result(outcome))
    }
}

#[tool_router]
impl FactoryMcp {
    #[tool(
        description = "The project's state: no_repo, incomplete, no_factory, evals_pending_review or has_factory (and why), its goal, how many experiments and runs it has, the last experiment's verdict and the last run's status. Call this first."
    )]
    async fn project_state(
        &self,
        Parameters(a): Parameters<ProjectArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project, |p| tools::project_state(&p))
            .await
    }

    #[tool(
        description = "The project's finalized experiments (id, hypothesis, verdict keep/revert/error/..., score_before, score_after, delta, notes) oldest first, and the ones begun but not finalized."
    )]
    async fn history(
        &self,
        Parameters(a): Parameters<HistoryArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project.clone(), move |p| tools::history(&p, &a))
            .await
    }

    #[tool(
        description = "Score the project as `factory eval` does: hygiene (build, tests, lint, format, type check), growth against the last kept baseline and factory.md's project dimensions, merged into a composite with pass/fail against eval_threshold. Runs the project's commands: may take minutes. Writes .factory/last_eval.json."
    )]
    async fn eval(&self, Parameters(a): Parameters<EvalArgs>) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project.clone(), move |p| tools::eval(&p, &a))
            .await
    }

    #[tool(
        description = "Check everything a keep verdict requires, as `factory precheck` does: threshold, score direction, the guards, anti-patterns and hard constraints; `passed` is false when any check fails, and `failures` names them. With `exp`, judges that experiment's worktree and records the result (needed before finalizing it as keep)."
    )]
    async fn precheck(
        &self,
        Parameters(a): Parameters<PrecheckArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project.clone(), move |p| tools::precheck(&p, a))
            .await
    }

    #[tool(
        description = "The modes (workflows) available in the project: built-in ones and the project's .factory/workflows/*.fwf overrides, each with its one-line description. Pass a name to compile_mode or start_run."
    )]
    async fn list_modes(
        &self,
        Parameters(a): Parameters<ProjectArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project, |p| tools::list_modes(&p)).await
    }

    #[tool(
        description = "Compile a mode or .fwf/.fwir file and return it as IR text (default), IR JSON, a mermaid flowchart, graphviz dot, or the SKILL.md an interactive agent follows. A workflow with errors is a tool error listing each error's file:line:column, message and fix."
    )]
    async fn compile_mode(
        &self,
        Parameters(a): Parameters<CompileArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project.clone(), move |p| tools::compile(&p, &a))
            .await
    }

    #[tool(
        description = "Check unsaved .fwf workflow text (or IR text) and return its diagnostics as data: code, severity, message, line/column (1-based), end, help and labels. `ok` is false when any diagnostic is an error. Fix them and check again before saving the file."
    )]
    async fn check_fwf(
        &self,
        Parameters(a): Parameters<CheckArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project.clone(), move |p| tools::check(&p, &a))
            .await
    }

    #[tool(
        description = "Start `factory run MODE` on the project in the background and return its run_id at once. The run keeps going if this server stops. Poll run_status with the run_id for its status and, when finished, the experiment's verdict; run_events streams its progress."
    )]
    async fn start_run(
        &self,
        Parameters(a): Parameters<StartRunArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let started = self.started.clone();
        self.on_project(a.project.clone(), move |p| {
            background::start_run(&p, a, &started)
        })
        .await
    }

    #[tool(
        description = "A run's status (starting, running, completed, halted, failed, interrupted, or exited when its process died), its outcome, the experiment it ran and that experiment's verdict and scores, and the tail of its output. `finished` says whether to poll again."
    )]
    async fn run_status(
        &self,
        Parameters(a): Parameters<RunArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let started = self.started.clone();
        self.on_project(a.project.clone(), move |p| {
            background::run_status(&p, a, &started)
        })
        .await
    }

    #[tool(
        description = "A run's events from .factory/events.jsonl, oldest first: run.started, node.started, node.verdict, node.finished, run.finished... Pass the returned `next` as `after` to read only newer ones."
    )]
    async fn run_events(
        &self,
        Parameters(a): Parameters<EventsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.on_project(a.project.clone(), move |p| background::run_events(&p, a))
            .await
    }
}

impl ServerHandler for FactoryMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("factory", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "factory runs coding agents through measured experiments on a git project. \
             Tools default to the project {}; pass `project` for another. Start with \
             project_state; list_modes, then start_run and run_status to improve it; \
             check_fwf before saving a workflow.",
            self.project.display()
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        let call = ToolCallContext::new(self, request, context);
        match self.tool_router.call(call).await {
            // Arguments that do not fit the schema are the caller's to fix: a tool
            // error it can read, not a protocol failure.
            Err(e) if e.code == ErrorCode::INVALID_PARAMS => Ok(result(Err(format!(
                "{name}: {}; the tool's input schema lists the arguments",
                e.message
            )))
            .into()),
            other => other,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(
            self.tool_router.list_all(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let project = self.project.clone();
        let uri = request.uri.clone();
        let read = tokio::task::spawn_blocking(move || resources::read(&project, &uri))
            .await
            .unwrap_or_else(|e| Err(format!("internal bug reading the resource: {e}")));
        match read {
            Ok(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            Err(reason) => Err(ErrorData::resource_not_found(reason, None)),
        }
    }
}
