//! The URL map. Handlers only pick the project and call a view off the async threads
//! (views read files); a view that fails is a 500 page saying so, never a crash.
//!
//! `/` projects · `/p/N/` a project · `/p/N/exp/ID` an experiment · `/p/N/run/ID` a run
//! live, `/p/N/run/ID/events` its event stream · `/insights` · `/assets/…`.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use factory_runtime::project::layout::FactoryPaths;

use super::layout::{degraded, page};
use super::live::Follower;
use super::server::AppState;
use super::{assets, auth, sse, views};

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(projects))
        .route("/insights", get(insights))
        .route("/p/{index}/", get(project))
        .route("/p/{index}", get(project))
        .route("/p/{index}/exp/{id}", get(experiment))
        .route("/p/{index}/run/{run}", get(run))
        .route("/p/{index}/run/{run}/events", get(run_events))
        .route("/assets/app.css", get(assets::css))
        .route("/assets/app.js", get(assets::js))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .with_state(state)
}

/// Runs `view` on the blocking pool: a panic or a cancelled task becomes a 500 page.
async fn blocking(view: impl FnOnce() -> String + Send + 'static) -> Response {
    match tokio::task::spawn_blocking(view).await {
        Ok(html) => Html(html).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Html(page(
                "Error",
                &[],
                &degraded("this page failed", &e.to_string()),
            )),
        )
            .into_response(),
    }
}

fn missing(what: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Html(page("Not found", &[], &degraded("not found", what))),
    )
        .into_response()
}

async fn not_found() -> Response {
    missing("no such page; start from the projects list")
}

fn project_at(state: &AppState, index: usize) -> Option<PathBuf> {
    state.projects().into_iter().nth(index)
}

async fn projects(State(state): State<Arc<AppState>>) -> Response {
    blocking(move || views::projects::page(&state.projects())).await
}

async fn insights(State(state): State<Arc<AppState>>) -> Response {
    blocking(move || views::insights::page(&state.projects())).await
}

async fn project(State(state): State<Arc<AppState>>, UrlPath(index): UrlPath<usize>) -> Response {
    let Some(path) = project_at(&state, index) else {
        return missing(&format!("there is no project {index}"));
    };
    blocking(move || views::experiments::page(index, &path)).await
}

async fn experiment(
    State(state): State<Arc<AppState>>,
    UrlPath((index, id)): UrlPath<(usize, u32)>,
) -> Response {
    let Some(path) = project_at(&state, index) else {
        return missing(&format!("there is no project {index}"));
    };
    blocking(move || views::experiment::page(index, &path, id)).await
}

async fn run(
    State(state): State<Arc<AppState>>,
    UrlPath((index, run)): UrlPath<(usize, String)>,
) -> Response {
    let Some(path) = project_at(&state, index) else {
        return missing(&format!("there is no project {index}"));
    };
    if !views::run::valid_run_id(&run) {
        return missing("a run id is letters, digits, `-`, `_` and `.`");
    }
    blocking(move || views::run::page(index, &path, &run)).await
}

#[derive(serde::Deserialize)]
struct From {
    from: Option<u64>,
}

async fn run_events(
    State(state): State<Arc<AppState>>,
    UrlPath((index, run)): UrlPath<(usize, String)>,
    Query(query): Query<From>,
    headers: HeaderMap,
) -> Response {
    let Some(path) = project_at(&state, index) else {
        return missing(&format!("there is no project {index}"));
    };
    if !views::run::valid_run_id(&run) {
        return missing("a run id is letters, digits, `-`, `_` and `.`");
    }
    // A reconnecting EventSource says where it got to.
    let from = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .or(query.from)
        .unwrap_or(0);
    let paths = FactoryPaths::new(&path);
    let (changes, watch_error) = match state.hub.subscribe(paths.dir()) {
        Ok(rx) => (Some(rx), None),
        Err(e) => (None, Some(e)),
    };
    let ir = views::run::run_ir(&path, &run).ok();
    let follower = Follower::new(&paths.events_jsonl(), &run, ir);
    let mut response = Sse::new(sse::stream(follower, changes, from, watch_error))
        .keep_alive(KeepAlive::default())
        .into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}
