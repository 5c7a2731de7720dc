//! The access token a dashboard bound beyond 127.0.0.1 requires. A browser brings it
//! once as `?token=` (answered with a cookie, so links and the event stream work), or
//! any client sends it as `Authorization: Bearer TOKEN`.

use std::io::Read;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::server::AppState;

const COOKIE: &str = "factory_dashboard";

/// 32 random hex digits from the kernel's generator.
pub fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Lets a request through when no token is needed or it carries the right one.
pub async fn require_token(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = state.token.as_deref() else {
        return next.run(request).await;
    };
    let from_query = query_token(request.uri().query());
    if presented(request.headers()).is_some_and(|t| same(&t, token)) {
        return next.run(request).await;
    }
    if from_query.as_deref().is_some_and(|t| same(t, token)) {
        let mut response = next.run(request).await;
        let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
        return response;
    }
    (
        StatusCode::UNAUTHORIZED,
        "this dashboard needs the access token `factory dashboard` printed when it started: \
         open the URL it printed (…/?token=…) or send `Authorization: Bearer TOKEN`\n",
    )
        .into_response()
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_string)
}

/// The token from the Authorization header or the cookie.
fn presented(headers: &HeaderMap) -> Option<String> {
    if let Some(bearer) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Some(bearer.trim().to_string());
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            c.trim()
                .strip_prefix(&format!("{COOKIE}="))
                .map(str::to_string)
        })
}

/// Compares without stopping at the first difference, so timing says nothing.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
