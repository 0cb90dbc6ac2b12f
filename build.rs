//! Link settings for the release binaries on x86-64 Linux (the binary size budget, docs/ARCHITECTURE.md §7).
//!
//! - `-no-pie`: a PIE carries a dynamic relocation for every pointer in its read-only data
//!   (vtables, string tables, static slices); a fixed-address executable needs none.
//! - `--icf=all`: rustc links this target with its bundled rust-lld, which folds functions whose
//!   machine code is identical (many generic instances compile to the same bytes).
//! - `-O2`: lld merges strings whose bytes are the tail of another string in `.rodata`
//!   (-960 B of mesh-mcp; lld's default `-O1` merges only identical strings).
//! - In a release build with `panic = "abort"` only (the shipped profile unwinds, so this is
//!   for experiments such as `CARGO_PROFILE_RELEASE_PANIC=abort`), the unwind tables
//!   `.eh_frame` and `.eh_frame_hdr` and the landing-pad data `.gcc_except_table` are
//!   discarded by a small linker script: nothing ever unwinds there, and they are about 390 KB
//!   of each binary.
//!
//! The flags go to this crate's binaries only: as target rustflags Cargo would also pass them to
//! proc-macro libraries, and `-no-pie` cannot link a shared library.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    println!("cargo:rustc-link-arg-bins=-Wl,-O2");
    if std::env::var("PROFILE").as_deref() == Ok("release")
        && std::env::var("CARGO_CFG_PANIC").as_deref() == Ok("abort")
    {
        let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let script = out_dir.join("discard-unwind-tables.ld");
        std::fs::write(
            &script,
            "SECTIONS\n{\n  /DISCARD/ : { *(.eh_frame) *(.eh_frame_hdr) *(.gcc_except_table*) }\n}\nINSERT AFTER .text;\n",
        )
        .expect("write the linker script into OUT_DIR");
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
}
