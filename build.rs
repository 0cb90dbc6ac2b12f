//! Links the release binaries position-dependent on x86-64 Linux (SPEC §9 size budget).
//!
//! A PIE carries a dynamic relocation for every pointer in its read-only data (vtables, string
//! tables, static slices); a fixed-address executable needs none, which saves hundreds of KB.
//! Identical code folding merges the many byte-identical generic instances.
//! The flags are given here rather than as a target rustflag because Cargo would pass that to
//! proc-macro libraries too, and `-no-pie` cannot link a shared library.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target == "x86_64-unknown-linux-gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        // rustc links with its bundled rust-lld here: fold functions whose machine code is
        // identical (many generic instances compile to the same bytes).
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
}
