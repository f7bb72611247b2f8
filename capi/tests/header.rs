//! `capi/millbase.h` is what cbindgen generates from the crate today: regenerate it
//! and compare. `MILLBASE_BLESS=1` rewrites the file instead of failing.

use std::path::Path;

#[test]
fn the_header_matches_the_rust_side() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = dir.join("millbase.h");
    if std::env::var_os("MILLBASE_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write millbase.h");
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == generated,
        "capi/millbase.h is not what cbindgen generates from capi/src: run \
         `MILLBASE_BLESS=1 cargo test -p millbase-capi --test header` and commit it\n\
         first difference at line {}",
        kept.lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or(kept.lines().count().min(generated.lines().count()), |i| i)
            + 1
    );
}
