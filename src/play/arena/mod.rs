//! The arena: many games between two players, with a report of the results.
//!
//! Players ([`PlayerSpec`]): `perfect`, `perfect:strict`, `perfect:trap` (the
//! databases' oracle; [`Choice`] says how it picks among equally good plies),
//! `engine:depth=D` / `engine:movetime=MS` (the crate's engine), `random`, and
//! `uci:[PARAMS:]COMMAND` (an external engine speaking the protocol of
//! `docs/PROTOCOL.md`, started as a subprocess and driven by
//! [`crate::play::protocol::client`]).
//!
//! Games come in pairs: A plays White in even-numbered games and Black in odd ones,
//! and both games of a pair start from the same position ([`Openings`]: the start
//! position, then K random plies drawn for the pair, or each first ply of the start
//! in turn). A game ends when a side has lost (fewer than three stones, or no legal
//! move), or as a draw on the third occurrence of a moving-phase position (counted
//! from the end of the opening), after `max_quiet` plies without a removal, or after
//! `max_plies` plies in all; or when an external engine ends it ([`Reason`]: its
//! `bestmove draw`, or a forfeit by `bestmove none`, an error line, an illegal ply,
//! an exit or silence). The quiet-ply limit (default 100, as in Sanmill) is not part
//! of the rules the databases solve: a long database win can cross it, so raise it
//! (or set 0) when perfect wins must be played out.
//!
//! With a database, every ply of a position it covers (moving phase, or placement
//! where the placement sectors are built) is checked against perfect play: a ply
//! whose value for its mover is worse in win/draw/loss than the position's value is a
//! *blunder*; a ply that keeps the result but wins slower (or loses faster) is
//! *inaccurate*. The report ([`Summary`]) gives rates with Wilson intervals, per
//! colour, blunders per game and the first blunder of each lost game.
//!
//! Everything is deterministic for a given seed (time-limited searches aside): each
//! game has its own players and seeds derived from the arena seed and the game number,
//! so games may run in parallel and are reported in game order.

mod config;
mod error;
pub mod exam;
mod game;
mod players;
mod record;
mod runner;
mod seeds;
mod spec;
mod stats;

pub use config::ArenaConfig;
pub use error::ArenaError;
pub use game::{first_placement_round, first_plies, opening, play_game};
pub use record::{Blunder, GameRecord, Reason, Side};
pub use runner::{run, run_except};
pub use spec::{Choice, Openings, PlayerSpec, SearchLimit, UciDefaults, option_pair};
pub use stats::{Accuracy, ByStart, ColourResults, LostGame, Rate, Summary, summarize};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::protocol::client::GoLimits;

    #[test]
    fn specs_parse() {
        assert_eq!(
            "perfect".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Perfect(Choice::Random)
        );
        assert_eq!(
            "perfect:strict".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Perfect(Choice::Strict)
        );
        assert_eq!(
            "perfect:trap".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Perfect(Choice::Trap)
        );
        assert_eq!(
            "engine:depth=3,db=no".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Engine {
                limit: SearchLimit::Depth(3),
                hash_mb: 16,
                use_db: false,
                shuffle: true,
                eval: crate::search::engine::eval::DEFAULT_EVAL,
                quiescence: crate::search::engine::QUIESCENCE,
                threat_extension: crate::search::engine::THREAT_EXTENSION,
                quiet_damping: crate::search::engine::QUIET_DAMPING,
                reductions: crate::search::engine::REDUCTIONS,
                threads: 1,
            }
        );
        assert_eq!(
            "engine:movetime=100,eval=tuned"
                .parse::<PlayerSpec>()
                .unwrap(),
            PlayerSpec::Engine {
                limit: SearchLimit::MoveTime(100),
                hash_mb: 16,
                use_db: true,
                shuffle: true,
                eval: "tuned",
                quiescence: crate::search::engine::QUIESCENCE,
                threat_extension: crate::search::engine::THREAT_EXTENSION,
                quiet_damping: crate::search::engine::QUIET_DAMPING,
                reductions: crate::search::engine::REDUCTIONS,
                threads: 1,
            }
        );
        match "engine:depth=2,qs=4".parse::<PlayerSpec>().unwrap() {
            PlayerSpec::Engine { quiescence, .. } => assert_eq!(quiescence, 4),
            other => panic!("{other:?}"),
        }
        match "engine:depth=2,damp=yes".parse::<PlayerSpec>().unwrap() {
            PlayerSpec::Engine { quiet_damping, .. } => assert!(quiet_damping),
            other => panic!("{other:?}"),
        }
        match "engine:nodes=5000,lmr=no".parse::<PlayerSpec>().unwrap() {
            PlayerSpec::Engine {
                limit, reductions, ..
            } => assert_eq!((limit, reductions), (SearchLimit::Nodes(5000), false)),
            other => panic!("{other:?}"),
        }
        assert!("engine:nodes=0".parse::<PlayerSpec>().is_err());
        match "engine:movetime=100,threads=2"
            .parse::<PlayerSpec>()
            .unwrap()
        {
            PlayerSpec::Engine { threads, .. } => assert_eq!(threads, 2),
            other => panic!("{other:?}"),
        }
        assert!("engine:depth=2,threads=0".parse::<PlayerSpec>().is_err());
        match "engine:depth=2,ext=yes".parse::<PlayerSpec>().unwrap() {
            PlayerSpec::Engine {
                threat_extension, ..
            } => assert!(threat_extension),
            other => panic!("{other:?}"),
        }
        assert!(
            "engine:depth=2,eval=best"
                .parse::<PlayerSpec>()
                .unwrap_err()
                .to_string()
                .contains("the evaluations are shipped, tuned or net")
        );
        match "engine:depth=2,eval=net".parse::<PlayerSpec>().unwrap() {
            PlayerSpec::Engine { eval, .. } => assert_eq!(eval, "net"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            "uci:movetime=50:/bin/x uci".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Uci {
                command: vec!["/bin/x".into(), "uci".into()],
                go: GoLimits {
                    movetime: Some(50),
                    ..GoLimits::default()
                },
                options: vec![],
                use_db: false,
                timeout: None,
            }
        );
        let sanmill = "uci:depth=0,movetime=1000,nodes=9,timeout=5,option.SkillLevel=30,option.Skill Level=2:tgf uci"
            .parse::<PlayerSpec>()
            .unwrap();
        assert_eq!(
            sanmill,
            PlayerSpec::Uci {
                command: vec!["tgf".into(), "uci".into()],
                go: GoLimits {
                    depth: Some(0),
                    movetime: Some(1000),
                    nodes: Some(9),
                },
                options: vec![
                    ("SkillLevel".into(), "30".into()),
                    ("Skill Level".into(), "2".into())
                ],
                use_db: false,
                timeout: Some(5),
            }
        );
        // The arena's flags fill in what a spec leaves out, its options first.
        let defaults = UciDefaults {
            go: GoLimits {
                depth: Some(7),
                ..GoLimits::default()
            },
            options: vec![("Hash".into(), "8".into())],
            timeout: Some(3),
        };
        let PlayerSpec::Uci {
            go,
            options,
            timeout,
            ..
        } = "uci:option.SkillLevel=3:x"
            .parse::<PlayerSpec>()
            .unwrap()
            .with_uci_defaults(&defaults)
        else {
            unreachable!()
        };
        assert_eq!((go.depth, timeout), (Some(7), Some(3)));
        assert_eq!(options[0].0, "Hash");
        assert_eq!(options[1].0, "SkillLevel");
        let PlayerSpec::Uci { go, timeout, .. } = sanmill.with_uci_defaults(&defaults) else {
            unreachable!()
        };
        assert_eq!((go.depth, timeout), (Some(0), Some(5)));
        assert_eq!(go.command(), "go depth 0 movetime 1000 nodes 9");
        assert_eq!(GoLimits::default().command(), "go depth 4");
        assert_eq!(
            "uci:C:/x.exe".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Uci {
                command: vec!["C:/x.exe".into()],
                go: GoLimits::default(),
                options: vec![],
                use_db: false,
                timeout: None,
            }
        );
        for bad in [
            "engine",
            "engine:depth=0",
            "engine:speed=3",
            "engine:depth=3,qs=17",
            "engine:depth=3,qs=-1",
            "perfect:x",
            "uci:timeout=0:x",
            "uci:nodes=-1:x",
            "uci:",
            "bogus",
        ] {
            assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn wilson_intervals() {
        let r = Rate::new(50, 100);
        assert!((r.low - 0.4038).abs() < 1e-3 && (r.high - 0.5962).abs() < 1e-3);
        let z = Rate::new(0, 10);
        assert_eq!(z.low, 0.0);
        assert!((z.high - 0.2775).abs() < 1e-3);
    }

    #[test]
    fn random_games_end() {
        let mut c = ArenaConfig::new(PlayerSpec::Random, PlayerSpec::Random, 4);
        c.threads = 2;
        let recs = run(&c, &|_| {}).unwrap();
        assert_eq!(recs.len(), 4);
        assert_eq!(recs[0].white, Side::A);
        assert_eq!(recs[1].white, Side::B);
        let again = run(&c, &|_| {}).unwrap();
        assert_eq!(recs[3].moves, again[3].moves);
    }

    #[test]
    fn one_game_of_a_run_is_that_game() {
        let mut c = ArenaConfig::new(PlayerSpec::Random, PlayerSpec::Random, 6);
        c.openings = Openings::Random(3);
        let all = run(&c, &|_| {}).unwrap();
        for g in [0, 3, 5] {
            c.only_game = Some(g);
            let one = run(&c, &|_| {}).unwrap();
            assert_eq!(one.len(), 1);
            assert_eq!(one[0].game, g);
            assert_eq!(one[0].white, all[g].white);
            assert_eq!(one[0].opening, all[g].opening);
            assert_eq!(one[0].moves, all[g].moves);
        }
        c.only_game = Some(6);
        let err = run(&c, &|_| {}).unwrap_err().to_string();
        assert!(err.contains("game 6 is not in a run of 6 games"), "{err}");
    }
}
