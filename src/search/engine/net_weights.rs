//! The network evaluation's parameters (`super::net`), read from
//! `net_weights.bin` beside this file (little-endian `f32`s, see
//! [`Net::to_le_bytes`]) when the program is compiled: generated with this file by
//! `tools/train-net.sh` (`examples/train_net.rs`); do not edit by hand. The fit:
//!
//! ```text
//! 2668286 positions (267207 held out), 12 epochs, seed 1, 16 s
//! held out                    MSE  accuracy      MSE  accuracy
//!                           tuned weights      network
//! all (267207)             0.0412     77.7%   0.0237     88.2%
//! from games (198059)      0.0420     77.6%   0.0243     88.0%
//! from sectors (69148)     0.0391     77.9%   0.0218     88.9%
//! games, placing (54714)   0.0528     72.8%   0.0353     82.1%
//!   plies 0-1 (1)          0.0071    100.0%   0.0001    100.0%
//!   plies 2-3 (669)        0.0127     95.8%   0.0075     95.8%
//!   plies 4-5 (6452)       0.0174     92.6%   0.0125     94.1%
//!   plies 6-7 (7939)       0.0338     83.0%   0.0244     88.3%
//!   plies 8-9 (8012)       0.0489     74.4%   0.0339     83.2%
//!   plies 10-11 (7901)     0.0598     68.5%   0.0398     79.1%
//!   plies 12-13 (7955)     0.0645     66.3%   0.0425     77.9%
//!   plies 14-15 (7891)     0.0667     64.6%   0.0437     77.0%
//!   plies 16-17 (7894)     0.0751     61.9%   0.0486     75.9%
//! games, moving (143345)   0.0379     79.4%   0.0201     90.3%
//! draw band (logits): tuned +-1.08, network +-1.14; scale 114.3 centi-stones per logit
//! ```

use super::net::Net;

/// The trained network. Its file's length is checked when the program is
/// compiled: a file that is not [`super::net::NET_BYTES`] long fails the build.
pub const NET: Net = match Net::from_le_bytes(include_bytes!("net_weights.bin")) {
    Some(net) => net,
    None => panic!(
        "src/search/engine/net_weights.bin is not NET_BYTES long: not a network of this shape"
    ),
};

#[cfg(test)]
mod tests {
    use super::NET;
    use crate::rules::Rules;
    use crate::rules::game::Game;
    use crate::search::engine::net::inputs;

    /// FNV-1a of `bytes`.
    fn fnv(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    /// The network read from the file is, bit for bit, the one the weights held
    /// when they were Rust source: the hash of its parameters and its logits of a
    /// few positions, taken from that source. (A new training changes them: then
    /// this test is updated with the new network's.)
    #[test]
    fn the_network_read_is_the_trained_one() {
        assert_eq!(fnv(&NET.to_le_bytes()), 0xcc01_33fe_c7e8_b2fc);
        let rules = Rules::standard();
        for (moves, logit, eval) in [
            ("startpos", 0xbc74_a888, -2),
            ("startpos moves a7 d6 d7 f4 g7 xf4", 0xbef6_92f3, -55),
            ("startpos moves d2 f4 b4 d6 f2 b6", 0x3e8f_5a05, 32),
        ] {
            let pos = *Game::parse(rules, moves).unwrap().position();
            assert_eq!(NET.logit(&inputs(rules, &pos)).to_bits(), logit, "{moves}");
            assert_eq!(NET.evaluate(rules, &pos), eval, "{moves}");
        }
    }
}
