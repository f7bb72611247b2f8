//! Why the arena could not play: [`ArenaError`].

/// Why the arena could not play.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// A player description could not be read.
    #[error("player '{text}': {why}")]
    Spec {
        /// The description.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A player needs a database that is not there (a missing subspace, no `--db`).
    #[error("game {game}: player {player} cannot play {fen}: {why}")]
    Uncovered {
        /// Game number.
        game: usize,
        /// The player.
        player: String,
        /// The position, as a FEN.
        fen: String,
        /// Why (naming the missing subspace).
        why: String,
    },
    /// A player failed or answered with an illegal ply.
    #[error("game {game}: player {player}: {why}")]
    Player {
        /// Game number.
        game: usize,
        /// The player.
        player: String,
        /// What happened.
        why: String,
    },
    /// No usable opening or start position.
    #[error("{0}")]
    Start(String),
}
