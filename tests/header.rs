//! The committed C header must equal what cbindgen generates from the current sources.
//! Regenerate with `FARFIELD_BLESS_HEADER=1 cargo test --test header`.

#[test]
fn header_is_fresh() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let cfg = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(cfg)
        .generate()
        .expect("cbindgen could not generate the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    let generated = String::from_utf8(out).unwrap();
    let path = format!("{dir}/include/farfield.h");
    if std::env::var_os("FARFIELD_BLESS_HEADER").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    // every macro is the library's (FARFIELD_ prefix; the include guard is FARFIELD_H): no
    // crate-internal constant leaks into the C namespace (add it to cbindgen.toml's exclude)
    let leaked: Vec<&str> = generated
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| !name.starts_with("FARFIELD_"))
        .collect();
    assert!(leaked.is_empty(), "macros without the FARFIELD_ prefix in the header: {leaked:?} (exclude them in cbindgen.toml)");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/farfield.h is stale: run `FARFIELD_BLESS_HEADER=1 cargo test --test header` and commit it"
    );
}
