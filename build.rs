//! Links the release binaries position-dependent on x86-64 Linux (SPEC §9 size budget).
//!
//! A PIE carries a dynamic relocation for every pointer in its read-only data (vtables, string
//! tables, static slices); a fixed-address executable needs none, which saves hundreds of KB.
//! The flag is given here rather than as a target rustflag because Cargo would pass that to
//! proc-macro libraries too, and `-no-pie` cannot link a shared library.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target == "x86_64-unknown-linux-gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
