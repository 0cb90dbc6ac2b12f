//! A small, safe git runner for the read-only questions the tools ask (which commit is the
//! base, what did a file look like there).
//!
//! git runs without a shell (argv entries, never a command line), in a given directory, with
//! stdin closed, a timeout after which the process is killed, bounded output, `LC_ALL=C`, no
//! pager, no terminal prompt, no fsmonitor, literal pathspecs, and every `GIT_*` variable of
//! our own environment removed, so a `GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, object
//! directory, alternate, namespace, config or ceiling variable can never redirect it to another
//! repository. Nothing here writes to the repository. A revision argument is checked with
//! [`validate_revision`] before it reaches git.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one git command may run before it is killed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// The most bytes of standard output kept from one git command.
pub const MAX_STDOUT_BYTES: usize = 8 * 1024 * 1024;
/// The most bytes of standard error kept (only its first line is ever shown).
const MAX_STDERR_BYTES: usize = 16 * 1024;
/// The longest revision accepted from a tool argument.
pub const MAX_REVISION_BYTES: usize = 200;

/// Why a git command gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitError {
    /// The `git` program could not be found.
    Missing,
    /// The directory is not inside a git work tree.
    NotARepository,
    /// The command ran longer than the timeout and was killed.
    Timeout { command: String, secs: u64 },
    /// The command printed more than the output bound.
    OutputTooLarge { command: String, limit: usize },
    /// git could not be started for another reason.
    Spawn(String),
    /// git ran and failed; `stderr` is its first line.
    Failed {
        command: String,
        code: Option<i32>,
        stderr: String,
    },
}

impl fmt::Display for GitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitError::Missing => f.write_str(
                "git is not installed or not on PATH; install git or add it to the PATH of the \
                 mesh-mcp process",
            ),
            GitError::NotARepository => f.write_str("the file is not inside a git repository"),
            GitError::Timeout { command, secs } => write!(
                f,
                "`git {command}` did not finish within {secs} s and was stopped; the repository \
                 may be very large or locked, retry later"
            ),
            GitError::OutputTooLarge { command, limit } => write!(
                f,
                "`git {command}` printed more than {} MiB; the file is too large to compare",
                limit / (1024 * 1024)
            ),
            GitError::Spawn(why) => write!(f, "git could not be started: {why}"),
            GitError::Failed {
                command,
                code,
                stderr,
            } => {
                write!(f, "`git {command}` failed")?;
                if let Some(code) = code {
                    write!(f, " (exit {code})")?;
                }
                if !stderr.is_empty() {
                    write!(f, ": {stderr}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for GitError {}

/// What a finished git command printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitOutput {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    /// The first line of standard error, trimmed.
    pub stderr: String,
}

impl GitOutput {
    /// True for exit code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Standard output as text with the trailing newline removed.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout)
            .trim_end_matches(['\n', '\r'])
            .to_string()
    }
}

/// Checks a revision given by a user (a branch, tag or commit) before it reaches git: not
/// empty, at most [`MAX_REVISION_BYTES`], not starting with `-` (git would read an option), and
/// free of `:` (a `rev:path` would read a file), whitespace and control characters. The error
/// names the problem; callers add an allowed example.
pub fn validate_revision(rev: &str) -> Result<(), String> {
    if rev.is_empty() {
        return Err("it is empty".into());
    }
    if rev.len() > MAX_REVISION_BYTES {
        return Err(format!(
            "it is {} bytes long; the limit is {MAX_REVISION_BYTES}",
            rev.len()
        ));
    }
    if rev.starts_with('-') {
        return Err("it starts with `-`, which git would read as an option".into());
    }
    if let Some((i, c)) = rev.char_indices().find(|(_, c)| c.is_control()) {
        return Err(format!(
            "it contains the control character U+{:04X} at byte {i}",
            u32::from(c)
        ));
    }
    if let Some((i, _)) = rev.char_indices().find(|(_, c)| c.is_whitespace()) {
        return Err(format!("it contains whitespace at byte {i}"));
    }
    if let Some(i) = rev.find(':') {
        return Err(format!(
            "it contains `:` at byte {i} (a `revision:path` is not a revision)"
        ));
    }
    Ok(())
}

/// A git runner bound to one working directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    program: PathBuf,
    timeout: Duration,
}

impl Git {
    /// A runner for the repository that contains `dir`, using `git` from PATH and the
    /// [`DEFAULT_TIMEOUT`].
    pub fn new(dir: &Path) -> Git {
        Git {
            dir: dir.to_path_buf(),
            program: PathBuf::from("git"),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    #[cfg(test)]
    /// Uses another program instead of `git` (tests use a missing one).
    pub fn with_program(mut self, program: &Path) -> Git {
        self.program = program.to_path_buf();
        self
    }

    #[cfg(test)]
    /// Uses another timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Git {
        self.timeout = timeout;
        self
    }

    /// Runs `git <args>` and returns what it printed, whatever its exit code; errors only when
    /// git could not run to completion.
    pub fn run(&self, args: &[&str]) -> Result<GitOutput, GitError> {
        self.run_with_input(args, None)
    }

    /// [`Git::run`] with `input` written to git's stdin (then closed) instead of an empty one.
    pub fn run_with_input(
        &self,
        args: &[&str],
        input: Option<Vec<u8>>,
    ) -> Result<GitOutput, GitError> {
        let shown = args.join(" ");
        let mut cmd = Command::new(&self.program);
        cmd.current_dir(&self.dir)
            .args([
                "--no-pager",
                "--literal-pathspecs",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.untrackedCache=false",
            ])
            .args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_PAGER", "cat")
            .env_remove("PAGER");
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(GitError::Missing),
            Err(e) => return Err(GitError::Spawn(e.to_string())),
        };
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // On a thread of its own: git may fill its stdout before it has read all of this.
            std::thread::spawn(move || {
                use std::io::Write as _;
                let _ = stdin.write_all(&input);
            });
        }
        let (tx, rx) = mpsc::channel::<(bool, Vec<u8>, bool)>();
        if let Some(out) = child.stdout.take() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let (buf, over) = read_bounded(out, MAX_STDOUT_BYTES);
                let _ = tx.send((true, buf, over));
            });
        }
        if let Some(err) = child.stderr.take() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let (buf, over) = read_bounded(err, MAX_STDERR_BYTES);
                let _ = tx.send((false, buf, over));
            });
        }
        drop(tx);
        let deadline = Instant::now() + self.timeout;
        let timeout = || GitError::Timeout {
            command: shown.clone(),
            secs: self.timeout.as_secs().max(1),
        };
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        let mut too_large = false;
        // Both readers end at EOF, which comes when git exits (or is killed).
        for _ in 0..2 {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((is_stdout, buf, over)) => {
                    if is_stdout {
                        stdout = buf;
                        too_large |= over;
                    } else {
                        stderr = buf;
                    }
                    if over && is_stdout {
                        // Stop reading: kill now rather than let git block on a full pipe.
                        let _ = child.kill();
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(timeout());
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(timeout());
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(GitError::Spawn(e.to_string())),
            }
        };
        if too_large {
            return Err(GitError::OutputTooLarge {
                command: shown,
                limit: MAX_STDOUT_BYTES,
            });
        }
        let stderr = String::from_utf8_lossy(&stderr)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .chars()
            .take(300)
            .collect::<String>();
        if status.code() == Some(128) && stderr.contains("not a git repository") {
            return Err(GitError::NotARepository);
        }
        Ok(GitOutput {
            code: status.code(),
            stdout,
            stderr,
        })
    }

    /// Runs `git <args>` and requires exit code 0.
    pub fn run_ok(&self, args: &[&str]) -> Result<GitOutput, GitError> {
        let out = self.run(args)?;
        if out.success() {
            Ok(out)
        } else {
            Err(GitError::Failed {
                command: args.join(" "),
                code: out.code,
                stderr: out.stderr,
            })
        }
    }

    /// The top directory of the work tree holding the runner's directory.
    pub fn toplevel(&self) -> Result<PathBuf, GitError> {
        let out = self.run_ok(&["rev-parse", "--show-toplevel"])?;
        Ok(PathBuf::from(out.text()))
    }

    /// The runner's directory relative to the top of the work tree (`proto/`, or empty).
    pub fn prefix(&self) -> Result<String, GitError> {
        Ok(self.run_ok(&["rev-parse", "--show-prefix"])?.text())
    }

    /// The full commit id a revision names, or `None` when it names no commit. The revision
    /// must have passed [`validate_revision`] (or be a fixed name such as `HEAD`).
    pub fn commit_of(&self, rev: &str) -> Result<Option<String>, GitError> {
        let spec = format!("{rev}^{{commit}}");
        let out = self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ])?;
        let sha = out.text();
        if out.success() && is_object_id(&sha) {
            Ok(Some(sha))
        } else if out.code == Some(1) || out.code == Some(128) {
            Ok(None)
        } else {
            Err(GitError::Failed {
                command: format!("rev-parse --verify {spec}"),
                code: out.code,
                stderr: out.stderr,
            })
        }
    }

    /// The best common ancestor of two commits, or `None` when they share no history.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, GitError> {
        let out = self.run(&["merge-base", "--end-of-options", a, b])?;
        let sha = out.text();
        Ok((out.success() && is_object_id(&sha)).then_some(sha))
    }

    /// The content of the file at `path` (relative to the top of the work tree, with `/`) in
    /// `commit`, or `None` when the file does not exist there. Read in memory, without textconv
    /// filters.
    pub fn file_at(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let out = self.run_ok(&["ls-tree", "--full-tree", "-z", commit, "--", path])?;
        // `<mode> SP <type> SP <object>\t<path>\0`
        let entry = out
            .stdout
            .split(|&b| b == 0)
            .find(|e| !e.is_empty())
            .map(|e| String::from_utf8_lossy(e).into_owned());
        let Some(entry) = entry else {
            return Ok(None);
        };
        let mut meta = entry.split('\t').next().unwrap_or("").split(' ');
        let (_mode, kind, oid) = (meta.next(), meta.next(), meta.next());
        let (Some("blob"), Some(oid)) = (kind, oid) else {
            return Ok(None);
        };
        if !is_object_id(oid) {
            return Ok(None);
        }
        let blob = self.run_ok(&["cat-file", "blob", oid])?;
        Ok(Some(blob.stdout))
    }
}

impl Git {
    /// The contents of each of `paths` (repository-relative) at `commit`, in order: `None` for a
    /// path that is not a file there, or larger than `max_bytes`. Two git processes for the
    /// lot (`ls-tree` with sizes, then `cat-file --batch`), not two per file: a branch touching
    /// a hundred files reads its base in milliseconds.
    pub fn files_at(
        &self,
        commit: &str,
        paths: &[&str],
        max_bytes: usize,
    ) -> Result<Vec<Option<Vec<u8>>>, GitError> {
        let mut out: Vec<Option<Vec<u8>>> = vec![None; paths.len()];
        if paths.is_empty() {
            return Ok(out);
        }
        // path -> (object id, size) of the blobs among `paths`.
        let mut blobs: Vec<(String, String, usize)> = Vec::new();
        for chunk in paths.chunks(256) {
            let mut args = vec!["ls-tree", "--full-tree", "-l", "-z", commit, "--"];
            args.extend_from_slice(chunk);
            let listed = self.run_ok(&args)?;
            // `<mode> SP <type> SP <object> SP+ <size>\t<path>\0`
            for entry in listed.stdout.split(|&b| b == 0).filter(|e| !e.is_empty()) {
                let entry = String::from_utf8_lossy(entry);
                let Some((meta, path)) = entry.split_once('\t') else {
                    continue;
                };
                let mut meta = meta.split_whitespace();
                let (_mode, kind, oid, size) = (meta.next(), meta.next(), meta.next(), meta.next());
                if let (Some("blob"), Some(oid), Some(size)) = (kind, oid, size)
                    && is_object_id(oid)
                    && let Ok(size) = size.parse::<usize>()
                    && size <= max_bytes
                {
                    blobs.push((path.to_string(), oid.to_string(), size));
                }
            }
        }
        // Batches that keep git's output under the runner's bound.
        let mut start = 0;
        while start < blobs.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < blobs.len()
                && (end == start || bytes + blobs[end].2 + 128 <= MAX_STDOUT_BYTES)
            {
                bytes += blobs[end].2 + 128;
                end += 1;
            }
            let batch = &blobs[start..end];
            let input: String = batch.iter().map(|(_, oid, _)| format!("{oid}\n")).collect();
            let got = self.run_with_input(&["cat-file", "--batch"], Some(input.into_bytes()))?;
            // `<oid> SP blob SP <size>\n<contents>\n` per object, in the order asked.
            let mut rest = &got.stdout[..];
            for (path, _, _) in batch {
                let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
                    break;
                };
                let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
                rest = &rest[nl + 1..];
                let Some(size) = header
                    .rsplit(' ')
                    .next()
                    .and_then(|s| s.parse::<usize>().ok())
                    .filter(|_| header.contains(" blob "))
                else {
                    continue; // `<oid> missing`
                };
                if rest.len() < size {
                    break;
                }
                if let Some(i) = paths.iter().position(|p| p == path) {
                    out[i] = Some(rest[..size].to_vec());
                }
                rest = rest.get(size + 1..).unwrap_or(&[]);
            }
            start = end;
        }
        Ok(out)
    }
}

/// True for a full hexadecimal object id (SHA-1 or SHA-256).
fn is_object_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads a pipe to its end, keeping at most `limit` bytes; true when there was more.
fn read_bounded(mut pipe: impl Read, limit: usize) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => return (buf, false),
            Ok(n) => {
                if buf.len() + n > limit {
                    let room = limit - buf.len();
                    buf.extend_from_slice(&chunk[..room]);
                    return (buf, true);
                }
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        crate::scratch::fresh_dir(&format!("git-{tag}"))
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn revisions_are_validated_before_git() {
        assert!(validate_revision("origin/main").is_ok());
        assert!(validate_revision("v1.2.3").is_ok());
        assert!(validate_revision("HEAD~2").is_ok());
        assert!(validate_revision("abc123^").is_ok());
        for (bad, why) in [
            ("", "empty"),
            ("--output=/tmp/x", "`-`"),
            ("-n", "`-`"),
            ("HEAD:secrets.txt", "`:`"),
            ("main feature", "whitespace"),
            ("main\nx", "control"),
            ("main\u{1b}", "control"),
        ] {
            let err = validate_revision(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        assert!(
            validate_revision(&"a".repeat(201))
                .unwrap_err()
                .contains("201 bytes")
        );
        assert!(validate_revision(&"a".repeat(200)).is_ok());
    }

    #[test]
    fn a_missing_program_is_reported_as_missing() {
        let g = Git::new(&std::env::temp_dir())
            .with_program(Path::new("/nonexistent/definitely-not-git"));
        assert_eq!(g.run(&["status"]), Err(GitError::Missing));
    }

    #[test]
    fn outside_a_repository_is_not_a_repository() {
        let dir = scratch("norepo");
        // The temp directory is not inside a repository where we run; if it ever is, the
        // answer must at least be that enclosing repository.
        let g = Git::new(&dir);
        match g.toplevel() {
            Err(GitError::NotARepository) => {}
            Ok(top) => assert!(dir.starts_with(top), "unexpected repository"),
            Err(e) => panic!("{e}"),
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn reads_commits_and_files_with_literal_paths() {
        let dir = scratch("repo");
        git(&dir, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(dir.join("proto")).unwrap();
        std::fs::write(dir.join("proto/a*.proto"), "syntax = \"proto3\";\n").unwrap();
        std::fs::write(dir.join("proto/ab.proto"), "other\n").unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-q", "-m", "one"]);
        let g = Git::new(&dir.join("proto"));
        assert_eq!(g.prefix().unwrap(), "proto/");
        let head = g.commit_of("HEAD").unwrap().expect("HEAD resolves");
        assert_eq!(head.len(), 40);
        assert_eq!(g.commit_of("no-such-branch").unwrap(), None);
        assert_eq!(g.merge_base("HEAD", "main").unwrap(), Some(head.clone()));
        // A literal pathspec: `a*` must not match `ab.proto`.
        assert_eq!(
            g.file_at(&head, "proto/a*.proto").unwrap().as_deref(),
            Some(&b"syntax = \"proto3\";\n"[..])
        );
        assert_eq!(g.file_at(&head, "proto/missing.proto").unwrap(), None);
        // The directory is a tree, not a blob.
        assert_eq!(g.file_at(&head, "proto").unwrap(), None);
        // In one batch: literal paths, a missing one, a tree, an empty file, one over the
        // size limit, and non-ASCII names and contents; answers in the order asked.
        std::fs::write(dir.join("proto/empty.txt"), "").unwrap();
        std::fs::write(dir.join("proto/big.txt"), "x".repeat(100)).unwrap();
        std::fs::write(dir.join("proto/café.go"), "package é\n").unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-q", "-m", "two"]);
        let head = g.commit_of("HEAD").unwrap().expect("HEAD resolves");
        let got = g
            .files_at(
                &head,
                &[
                    "proto/café.go",
                    "proto/missing.proto",
                    "proto/a*.proto",
                    "proto",
                    "proto/empty.txt",
                    "proto/big.txt",
                    "proto/ab.proto",
                ],
                50,
            )
            .unwrap();
        assert_eq!(
            got,
            vec![
                Some("package é\n".as_bytes().to_vec()),
                None,
                Some(b"syntax = \"proto3\";\n".to_vec()),
                None,
                Some(Vec::new()),
                None,
                Some(b"other\n".to_vec()),
            ]
        );
        assert_eq!(
            g.files_at(&head, &[], 50).unwrap(),
            Vec::<Option<Vec<u8>>>::new()
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_slow_command_is_killed_at_the_timeout() {
        // `sh -c` stands in for a git that hangs; the runner's arguments are passed through.
        let dir = scratch("slow");
        let script = dir.join("fake-git");
        std::fs::write(&script, "#!/bin/sh\nsleep 30\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            let g = Git::new(&dir)
                .with_program(&script)
                .with_timeout(Duration::from_millis(300));
            match g.run(&["status"]) {
                Err(GitError::Timeout { command, .. }) => assert_eq!(command, "status"),
                other => panic!("{other:?}"),
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
