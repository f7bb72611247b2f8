//! Error messages on one line, as the `millbase` program prints them. Shared with
//! the Python package (`python/src/lib.rs` includes this file), so that the C
//! library, the Python package and the program word their errors alike.

/// An error and its causes on one line, each cause once (a message that already
/// quotes its cause is not followed by it again): the `millbase` program's
/// `error: ...` line without its prefix.
pub(crate) fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let part = c.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
        cause = c.source();
    }
    text.replace('\n', " ")
}
