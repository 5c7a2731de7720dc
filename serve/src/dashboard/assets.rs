//! The stylesheet and the script, compiled into the binary: the dashboard works
//! offline and loads nothing from elsewhere.

use axum::http::header;
use axum::response::IntoResponse;

pub const CSS: &str = include_str!("assets/app.css");
pub const JS: &str = include_str!("assets/app.js");

pub async fn css() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], CSS)
}

pub async fn js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        JS,
    )
}
