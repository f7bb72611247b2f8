//! Argument values several subcommands share.

/// Sectors named `K-L` or `K-L-HK-HL` (an `--only` list).
pub fn parse_sectors(names: &[String]) -> anyhow::Result<Vec<millbase::table::sector::Sector>> {
    names
        .iter()
        .map(|s| {
            millbase::table::sector::Sector::parse(s)
                .ok_or_else(|| anyhow::anyhow!("'{s}' is not a sector (K-L or K-L-HK-HL)"))
        })
        .collect()
}

/// A count that must be at least 1 (`--games`, `--threads`).
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number".into()),
    }
}
