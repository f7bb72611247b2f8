//! The web board's files, compiled into the binary: it works offline, with nothing
//! fetched from elsewhere.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// A file: its content type and text.
pub struct Asset {
    kind: &'static str,
    text: &'static str,
}

/// The page.
pub const INDEX: Asset = Asset {
    kind: "text/html; charset=utf-8",
    text: include_str!("assets/index.html"),
};

/// The board's script.
pub const SCRIPT: Asset = Asset {
    kind: "text/javascript; charset=utf-8",
    text: include_str!("assets/board.js"),
};

/// The style sheet.
pub const STYLE: Asset = Asset {
    kind: "text/css; charset=utf-8",
    text: include_str!("assets/board.css"),
};

/// The response serving `asset`.
pub fn page(asset: Asset) -> Response {
    (
        [
            (header::CONTENT_TYPE, asset.kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        asset.text,
    )
        .into_response()
}
