//! The network sandbox of `meshd`: a seccomp filter, hand-written in classic BPF, that makes
//! `socket(AF_INET | AF_INET6, …)` and `io_uring_setup` (whose `IORING_OP_SOCKET` would bypass
//! `socket()`) fail with `EPERM`. `meshd` only ever needs its Unix socket; with the filter a
//! bug or a hostile input cannot make it talk to the network. Everything else, including
//! `AF_UNIX` and `AF_NETLINK`, is allowed. System calls made through a foreign ABI (a 32-bit
//! `int 0x80` from a 64-bit process, which could reach `socketcall`) are refused outright.
//!
//! Installed right after the bind with `TSYNC`, so the threads that already exist are covered
//! and later threads and child processes inherit it. Policy `MESH_DAEMON_SANDBOX`: unset or
//! empty is best effort (a warning when the kernel refuses), `off` skips it, `required` makes a
//! failure fatal, and any other value is treated as `required` (a typo fails closed).

use crate::sys::BpfInstruction;

/// The policy variable.
pub const POLICY_ENV: &str = "MESH_DAEMON_SANDBOX";

/// What to do when the filter cannot be installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Warn and keep serving (the default).
    BestEffort,
    /// Do not install it.
    Off,
    /// Refuse to serve without it.
    Required,
}

impl Policy {
    /// Reads the policy from a variable's value; an unknown non-empty value is `Required`.
    pub fn parse(value: Option<&str>) -> Policy {
        match value.map(str::trim) {
            None | Some("") => Policy::BestEffort,
            Some(v) if v.eq_ignore_ascii_case("off") => Policy::Off,
            Some(_) => Policy::Required,
        }
    }

    /// The policy of this process.
    pub fn from_env() -> Policy {
        Policy::parse(std::env::var(POLICY_ENV).ok().as_deref())
    }
}

// Classic BPF opcodes (linux/filter.h).
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const AND_K: u16 = 0x54;
const RET_K: u16 = 0x06;

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_EPERM: u32 = 0x0005_0000 | 1;

// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Low 32 bits of `args[0]` (little-endian targets only, which all supported ones are).
const OFF_ARG0_LO: u32 = 16;

const AF_INET: u32 = 2;
const AF_INET6: u32 = 10;
/// The x32 ABI marks its syscall numbers with this bit (x86_64 only; harmless elsewhere).
const X32_BIT: u32 = 0x4000_0000;
const NR_IO_URING_SETUP: u32 = 425;

/// The native audit architecture and `socket` number of the target, `None` where the sandbox
/// is not supported.
pub fn native() -> Option<(u32, u32)> {
    if cfg!(not(target_os = "linux")) {
        None
    } else if cfg!(target_arch = "x86_64") {
        Some((0xC000_003E, 41))
    } else if cfg!(target_arch = "aarch64") {
        Some((0xC000_00B7, 198))
    } else if cfg!(target_arch = "riscv64") {
        Some((0xC000_00F3, 198))
    } else {
        None
    }
}

/// The filter program for an architecture (`AUDIT_ARCH_*`) and its `socket` syscall number.
pub fn program(arch: u32, nr_socket: u32) -> Vec<BpfInstruction> {
    let ins = |code, jt, jf, k| BpfInstruction { code, jt, jf, k };
    vec![
        /* 0 */ ins(LD_W_ABS, 0, 0, OFF_ARCH),
        /* 1 */ ins(JEQ_K, 0, 8, arch), // foreign ABI → 10 (deny)
        /* 2 */ ins(LD_W_ABS, 0, 0, OFF_NR),
        /* 3 */ ins(AND_K, 0, 0, !X32_BIT),
        /* 4 */ ins(JEQ_K, 1, 0, nr_socket), // socket → 6
        /* 5 */ ins(JEQ_K, 4, 3, NR_IO_URING_SETUP), // io_uring_setup → 10, else 9
        /* 6 */ ins(LD_W_ABS, 0, 0, OFF_ARG0_LO),
        /* 7 */ ins(JEQ_K, 2, 0, AF_INET), // → 10
        /* 8 */ ins(JEQ_K, 1, 0, AF_INET6), // → 10
        /* 9 */ ins(RET_K, 0, 0, RET_ALLOW),
        /* 10 */ ins(RET_K, 0, 0, RET_EPERM),
    ]
}

/// Installs the filter according to `policy`. `Ok(true)` when it is in place, `Ok(false)` when
/// it was skipped or failed under best effort (logged), `Err` with a message when the policy
/// requires it and it could not be installed.
pub fn apply(policy: Policy) -> Result<bool, String> {
    if policy == Policy::Off {
        tracing::warn!(target: "mesh::daemon", "{POLICY_ENV}=off: the network sandbox is not installed");
        return Ok(false);
    }
    let result = match native() {
        Some((arch, nr_socket)) => crate::sys::install_seccomp_filter(&program(arch, nr_socket))
            .map_err(|e| format!("the kernel refused the seccomp filter: {e}")),
        None => {
            Err("seccomp sandboxing is supported on Linux x86_64, aarch64 and riscv64 only".into())
        }
    };
    match result {
        Ok(()) => {
            tracing::info!(target: "mesh::daemon", "network sandbox installed: IP sockets and io_uring are refused");
            Ok(true)
        }
        Err(e) if policy == Policy::Required => Err(format!(
            "{e}; {POLICY_ENV} requires the sandbox, so meshd will not serve. Unset {POLICY_ENV} to run without it"
        )),
        Err(e) => {
            tracing::warn!(target: "mesh::daemon", "network sandbox not installed ({e}); serving without it");
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal classic-BPF interpreter for the opcodes the program uses, over a
    /// `seccomp_data` of (nr, arch, args[0]).
    fn run(prog: &[BpfInstruction], nr: u32, arch: u32, arg0: u64) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        data[16..24].copy_from_slice(&arg0.to_le_bytes());
        let mut acc: u32 = 0;
        let mut pc = 0usize;
        loop {
            let i = prog[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => {
                    let k = i.k as usize;
                    acc = u32::from_le_bytes([data[k], data[k + 1], data[k + 2], data[k + 3]]);
                }
                AND_K => acc &= i.k,
                JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                RET_K => return i.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    const X86_64: u32 = 0xC000_003E;

    #[test]
    fn refuses_ip_sockets_and_io_uring_only() {
        let p = program(X86_64, 41);
        assert!(p.len() < 64);
        assert_eq!(run(&p, 41, X86_64, 2), RET_EPERM, "AF_INET");
        assert_eq!(run(&p, 41, X86_64, 10), RET_EPERM, "AF_INET6");
        assert_eq!(run(&p, 41, X86_64, 1), RET_ALLOW, "AF_UNIX");
        assert_eq!(run(&p, 41, X86_64, 16), RET_ALLOW, "AF_NETLINK");
        // Only the low 32 bits are the int the kernel reads.
        assert_eq!(run(&p, 41, X86_64, 0xffff_ffff_0000_0002), RET_EPERM);
        assert_eq!(run(&p, 41 | X32_BIT, X86_64, 2), RET_EPERM, "x32 socket");
        assert_eq!(run(&p, 41 | X32_BIT, X86_64, 1), RET_ALLOW);
        assert_eq!(run(&p, 425, X86_64, 0), RET_EPERM, "io_uring_setup");
        assert_eq!(run(&p, 425 | X32_BIT, X86_64, 0), RET_EPERM);
        for nr in [0, 1, 2, 3, 42, 43, 49, 50, 202, 231, 257, 424, 426] {
            assert_eq!(run(&p, nr, X86_64, 2), RET_ALLOW, "syscall {nr}");
        }
        // i386 ABI from a 64-bit process (socketcall could hide a socket()): refused.
        assert_eq!(run(&p, 102, 0x4000_0003, 0), RET_EPERM);
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        let p = program(0xC000_00B7, 198);
        for (pc, i) in p.iter().enumerate() {
            if i.code == JEQ_K {
                assert!(pc + 1 + usize::from(i.jt.max(i.jf)) < p.len(), "at {pc}");
            }
        }
        assert_eq!(p.last().map(|i| i.code), Some(RET_K));
        let arm = run(&p, 198, 0xC000_00B7, 10);
        assert_eq!(arm, RET_EPERM);
        assert_eq!(
            run(&p, 41, 0xC000_00B7, 2),
            RET_ALLOW,
            "41 is not socket on arm64"
        );
    }

    #[test]
    fn policy_fails_closed_on_typos() {
        assert_eq!(Policy::parse(None), Policy::BestEffort);
        assert_eq!(Policy::parse(Some(" ")), Policy::BestEffort);
        assert_eq!(Policy::parse(Some("OFF")), Policy::Off);
        assert_eq!(Policy::parse(Some("required")), Policy::Required);
        assert_eq!(Policy::parse(Some("requird")), Policy::Required);
    }
}
