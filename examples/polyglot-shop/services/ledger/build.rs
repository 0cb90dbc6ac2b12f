//! Generates the tonic server and client code from the shared contract at build time.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tonic_build::configure()
        .build_client(false)
        .compile(&["../../contracts/ledger/v1/ledger.proto"], &["../../contracts"])?;
    Ok(())
}
