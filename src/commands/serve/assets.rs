//! The page, embedded in the binary: two HTML pages (the board and the run
//! dashboard) and their script and style files, served with their types.
//! Nothing is fetched from elsewhere, so the page works offline.

use super::error::ApiError;
use axum::extract::Path;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

const BOARD_HTML: &str = include_str!("page/board.html");
const DASHBOARD_HTML: &str = include_str!("page/dashboard.html");

/// `(name, content type, text)` of every file under `/assets/`.
const ASSETS: [(&str, &str, &str); 4] = [
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("page/style.css"),
    ),
    (
        "board.js",
        "text/javascript; charset=utf-8",
        include_str!("page/board.js"),
    ),
    (
        "dashboard.js",
        "text/javascript; charset=utf-8",
        include_str!("page/dashboard.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("page/api.js"),
    ),
];

/// `GET /`: the board.
pub async fn board_page() -> Html<&'static str> {
    Html(BOARD_HTML)
}

/// `GET /dashboard`: the run dashboard.
pub async fn dashboard_page() -> Html<&'static str> {
    Html(DASHBOARD_HTML)
}

/// `GET /assets/{file}`: one of the embedded files; nothing else is served.
pub async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, kind, text)) => ([(header::CONTENT_TYPE, *kind)], *text).into_response(),
        None => ApiError::not_found(format!("no asset {file}")).into_response(),
    }
}
