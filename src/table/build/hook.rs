//! The build's test hook: stopping the process at a named point, as a kill would.

/// A test hook: `MILLBASE_TEST_ABORT_AFTER=STAGE` aborts the process (like a kill:
/// no clean-up) when the build reaches `STAGE`: `solved:K-L` after solving the pair
/// K-L, before anything is written; `written:K-L` right after the file of subspace
/// K-L got its final name (for `K != L` that is mid-pair, before its twin);
/// `recoded:SECTOR` right after the file of SECTOR got its small form
/// ([`super::Form::Small`]).
pub(crate) fn test_abort(stage: &str) {
    if std::env::var_os("MILLBASE_TEST_ABORT_AFTER").is_some_and(|v| v == stage) {
        eprintln!("MILLBASE_TEST_ABORT_AFTER: aborting after {stage}");
        std::process::abort();
    }
}
