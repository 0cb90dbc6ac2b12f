//! Proof that the crawler ignores exactly what git ignores.
//!
//! Random trees (seeded, reproducible) with nested `.gitignore` files and `.git/info/exclude`
//! are generated in temporary git repositories. Two oracles must agree with us exactly:
//! `git ls-files --others --exclude-standard` (the untracked, not-ignored files) against
//! [`crawl`], and `git check-ignore --stdin` on every generated path against [`is_ignored`].
//! Git runs with `LC_ALL=C`, no system or global configuration and `HOME` in the temp dir, so
//! the machine's own excludes cannot interfere.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::index::crawl::{
    CrawlOptions, CrawlResult, CrawlRoot, RejectReason, accept_all, crawl, is_ignored,
};

/// Patterns the generator draws from: nesting comes from where the files are placed.
const VOCAB: &[&str] = &[
    "*.log",
    "!important.log",
    "!*.log",
    "build/",
    "/build",
    "build",
    "a/",
    "/a/",
    "!a/",
    "src/*.rs",
    "**/deep",
    "**/deep/",
    "**/logs/*.log",
    "a/**/b",
    "a/**",
    "b/**/",
    "lib/**/*.py",
    "!lib/x1.py",
    "/a/b/",
    "deep/**/x1",
    "src/**/keep.rs",
    "/x1/**/*.log",
    "/lib/**",
    "**/*.txt",
    "**/",
    "**",
    "/**/c.log",
    "foo",
    "foo\\ ",
    "foo   ",
    " foo",
    "!foo ",
    "\\#hash",
    "\\!bang",
    "!\\!bang",
    "#hash",
    "[abc].txt",
    "x[0-9].py",
    "[!a]*.rs",
    "[^x]*.py",
    "[[:upper:]]*",
    "[[:digit:]]x",
    "[]x]*",
    "[a-",
    "*.[ch]",
    "!a.c",
    "?.txt",
    "x?.py",
    "a?b",
    "*",
    "!*/",
    "!*.rs",
    "!src/",
    "!build/keep.rs",
    "!build/",
    "build/*",
    "!build/*.rs",
    "!keep/",
    "!**/keep.rs",
    "keep",
    "a**b",
    "**x*",
    "***",
    "a/x**/c",
    "a/*/c.log",
    "*/b.rs",
    "*/",
    "src/**/",
    "!/a",
    "foo\\",
    "x1/",
    "!x1/",
    "logs",
    "deep/",
    "Abc.*",
    "*.TXT",
    "a b",
    "a\\ b",
    "\\*",
    "[*]",
    "!important.*",
    "!d.txt",
    "",
    "# a comment",
];

const DIR_NAMES: &[&str] = &[
    "a", "b", "src", "build", "lib", "deep", "x1", "logs", "keep", "foo", "a b", "Abc", "c",
];

const FILE_NAMES: &[&str] = &[
    "a.txt",
    "b.txt",
    "d.txt",
    "b.rs",
    "keep.rs",
    "c.log",
    "test.log",
    "important.log",
    "main.go",
    "x1.py",
    "x7.py",
    "xa.py",
    "#hash",
    "!bang",
    "foo",
    "foo ",
    " foo",
    "README.md",
    "Abc.TXT",
    "7x",
    "ab",
    "aXb",
    "a.c",
    "a.h",
    "a b",
    "*",
    "]x",
    "x1",
];

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A temporary directory, removed when the test passes (kept for inspection on failure).
struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let path = crate::scratch::fresh_dir(&format!("oracle-{tag}"));
        TempDir {
            path: fs::canonicalize(&path).expect("canonicalize temp dir"),
            keep: false,
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Runs git in `cwd` isolated from the machine's configuration; returns stdout.
fn git(home: &Path, cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(cwd);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("LC_ALL", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", home.join("no-global-gitconfig"))
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("no-xdg"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .expect("git is required for the gitignore oracle test");
    let mut pipe = child.stdin.take().expect("stdin pipe");
    let input = stdin.map(<[u8]>::to_vec).unwrap_or_default();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for git");
    writer.join().expect("stdin writer");
    // check-ignore exits with 1 when nothing is ignored; anything else is a real failure.
    let ok = out.status.success()
        || (args.first() == Some(&"check-ignore") && out.status.code() == Some(1));
    assert!(
        ok,
        "git {args:?} failed in {}: {}",
        cwd.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn nul_split(bytes: &[u8]) -> BTreeSet<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8(s.to_vec()).expect("git paths are UTF-8"))
        .collect()
}

/// A generated repository: every path (relative to the top, with `is_dir`) and the text of
/// every ignore file, for the failure report.
struct Tree {
    paths: Vec<(String, bool)>,
    ignore_files: Vec<(String, String)>,
}

impl Tree {
    fn report(&self) -> String {
        let mut s = String::new();
        for (path, text) in &self.ignore_files {
            let _ = writeln!(s, "--- {path}\n{text}");
        }
        s
    }
}

fn ignore_text(rng: &mut Lcg, max_lines: usize) -> String {
    let lines = 1 + rng.below(max_lines);
    let crlf = rng.chance(15);
    let mut text = String::new();
    for _ in 0..lines {
        text.push_str(rng.pick(VOCAB));
        text.push_str(if crlf { "\r\n" } else { "\n" });
    }
    if rng.chance(20) {
        // Last line without its newline.
        text.truncate(text.trim_end_matches(['\r', '\n']).len());
    }
    text
}

fn generate(rng: &mut Lcg, top: &Path) -> Tree {
    let mut tree = Tree {
        paths: Vec::new(),
        ignore_files: Vec::new(),
    };
    // (relative dir, depth)
    let mut dirs = vec![(String::new(), 0usize)];
    while let Some((dir, depth)) = dirs.pop() {
        let abs = top.join(&dir);
        fs::create_dir_all(&abs).expect("mkdir");
        let join = |name: &str| {
            if dir.is_empty() {
                name.to_owned()
            } else {
                format!("{dir}/{name}")
            }
        };
        let mut used = BTreeSet::new();
        let subdirs = if depth >= 4 {
            0
        } else {
            rng.below(4 - depth.min(2))
        };
        for _ in 0..subdirs {
            let name = rng.pick(DIR_NAMES);
            if used.insert(name) {
                let rel = join(name);
                tree.paths.push((rel.clone(), true));
                dirs.push((rel, depth + 1));
            }
        }
        for _ in 0..1 + rng.below(5) {
            let name = rng.pick(FILE_NAMES);
            if used.insert(name) {
                let rel = join(name);
                fs::write(top.join(&rel), b"x\n").expect("write file");
                tree.paths.push((rel, false));
            }
        }
        if rng.chance(if depth == 0 { 80 } else { 40 }) {
            let text = ignore_text(rng, 6);
            fs::write(abs.join(".gitignore"), &text).expect("write .gitignore");
            let rel = join(".gitignore");
            tree.paths.push((rel.clone(), false));
            tree.ignore_files.push((rel, text));
        }
    }
    tree
}

fn options() -> CrawlOptions {
    CrawlOptions {
        extra_excludes: Vec::new(),
        use_default_excludes: false,
        indexable: accept_all,
    }
}

/// Compares crawl and is_ignored with git for the walk rooted at `top/sub`.
fn compare(home: &Path, top: &Path, sub: &str, tree: &Tree, seed: u64) -> Result<(), String> {
    let cwd = if sub.is_empty() {
        top.to_path_buf()
    } else {
        top.join(sub)
    };
    let context = |what: String| {
        format!(
            "seed {seed}, root {:?} ({}): {what}\nignore files:\n{}",
            sub,
            cwd.display(),
            tree.report()
        )
    };
    let opts = options();

    let expected = nul_split(&git(
        home,
        &cwd,
        &["ls-files", "-z", "--others", "--exclude-standard"],
        None,
    ));
    let result = crawl(
        &[CrawlRoot {
            path: cwd.clone(),
            index: 0,
        }],
        &opts,
    );
    if !result.rejected.is_empty() {
        return Err(context(format!(
            "unexpected rejections {:?}",
            result.rejected
        )));
    }
    let got: BTreeSet<String> = result.files.into_iter().map(|f| f.rel_path).collect();
    if got != expected {
        let missing: Vec<_> = expected.difference(&got).collect();
        let extra: Vec<_> = got.difference(&expected).collect();
        return Err(context(format!(
            "crawl differs from `git ls-files --others --exclude-standard`:\n  \
             listed by git only: {missing:?}\n  listed by us only: {extra:?}"
        )));
    }

    let prefix = if sub.is_empty() {
        String::new()
    } else {
        format!("{sub}/")
    };
    let queries: Vec<(&str, bool)> = tree
        .paths
        .iter()
        .filter_map(|(p, d)| p.strip_prefix(prefix.as_str()).map(|r| (r, *d)))
        .collect();
    let mut input = Vec::new();
    for (q, _) in &queries {
        input.extend_from_slice(q.as_bytes());
        input.push(0);
    }
    let ignored = nul_split(&git(
        home,
        &cwd,
        &["check-ignore", "-z", "--stdin"],
        Some(&input),
    ));
    for (q, is_dir) in &queries {
        let ours = is_ignored(&cwd, q, *is_dir, &opts);
        let theirs = ignored.contains(*q);
        if ours != theirs {
            return Err(context(format!(
                "is_ignored({q:?}, is_dir: {is_dir}) = {ours}, git check-ignore says {theirs}"
            )));
        }
    }
    Ok(())
}

fn run_seed(seed: u64) {
    let mut tmp = TempDir::new(&format!("seed{seed}"));
    let home = tmp.path.clone();
    let top = tmp.path.join("repo");
    fs::create_dir_all(&top).expect("mkdir repo");
    git(&home, &top, &["init", "-q"], None);
    let mut rng = Lcg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03);
    let mut tree = generate(&mut rng, &top);
    if rng.chance(60) {
        let text = ignore_text(&mut rng, 3);
        fs::write(top.join(".git/info/exclude"), &text).expect("write info/exclude");
        tree.ignore_files.push((".git/info/exclude".into(), text));
    }
    let mut outcome = compare(&home, &top, "", &tree, seed);
    // Also walk from a subdirectory git does not ignore, so .gitignore files above the root
    // and info/exclude apply in repository coordinates.
    if outcome.is_ok() {
        let candidates: Vec<&str> = tree
            .paths
            .iter()
            .filter(|(p, d)| *d && !p.contains('/'))
            .map(|(p, _)| p.as_str())
            .collect();
        if !candidates.is_empty() {
            let mut input = Vec::new();
            for c in &candidates {
                input.extend_from_slice(c.as_bytes());
                input.push(0);
            }
            let ignored = nul_split(&git(
                &home,
                &top,
                &["check-ignore", "-z", "--stdin"],
                Some(&input),
            ));
            if let Some(sub) = candidates.iter().find(|c| !ignored.contains(**c)) {
                outcome = compare(&home, &top, sub, &tree, seed);
            }
        }
    }
    if let Err(message) = outcome {
        tmp.keep = true;
        panic!("{message}\n(tree kept at {})", tmp.path.display());
    }
}

#[test]
fn random_trees_match_git() {
    for seed in 0..90 {
        run_seed(seed);
    }
}

/// Hand-picked cases that random trees may hit rarely.
#[test]
fn fixed_tree_matches_git() {
    let tmp = TempDir::new("fixed");
    let home = tmp.path.clone();
    let top = tmp.path.join("repo");
    fs::create_dir_all(&top).expect("mkdir repo");
    git(&home, &top, &["init", "-q"], None);
    let files = [
        ("build/keep.rs", ""),
        ("build/sub/x.rs", ""),
        ("logs/a.log", ""),
        ("logs/important.log", ""),
        ("a/b/c/d.txt", ""),
        ("a/x/y/b/e.txt", ""),
        ("a/xb/y/c/f.txt", ""),
        ("docs/#notes", ""),
        ("docs/!bang", ""),
        ("docs/trail ", ""),
        ("docs/trail", ""),
        ("only/keep.rs", ""),
        ("only/drop.go", ""),
        ("only/nested/deeper.rs", ""),
    ];
    for (f, _) in files {
        let p = top.join(f);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, b"x\n").expect("write");
    }
    let root_ignore = "build/\n!build/keep.rs\n*.log\n!important.log\na/**/b/\na/x**/c\n";
    fs::write(top.join(".gitignore"), root_ignore).expect("write");
    let docs_ignore = "\\#notes\n\\!bang\ntrail\\ \n";
    fs::write(top.join("docs/.gitignore"), docs_ignore).expect("write");
    let only_ignore = "*\n!*/\n!*.rs\n!.gitignore\n";
    fs::write(top.join("only/.gitignore"), only_ignore).expect("write");
    fs::write(top.join(".git/info/exclude"), "/logs/important.log\n").expect("write");
    let mut paths: Vec<(String, bool)> = Vec::new();
    for (f, _) in files {
        let mut acc = String::new();
        for (i, part) in f.split('/').enumerate() {
            if i > 0 {
                acc.push('/');
            }
            acc.push_str(part);
            let is_dir = acc.len() < f.len();
            if !paths.iter().any(|(p, _)| *p == acc) {
                paths.push((acc.clone(), is_dir));
            }
        }
    }
    let tree = Tree {
        paths,
        ignore_files: vec![
            (".gitignore".into(), root_ignore.into()),
            ("docs/.gitignore".into(), docs_ignore.into()),
            ("only/.gitignore".into(), only_ignore.into()),
        ],
    };
    compare(&home, &top, "", &tree, 0).unwrap_or_else(|m| panic!("{m}"));
    compare(&home, &top, "docs", &tree, 0).unwrap_or_else(|m| panic!("{m}"));
    compare(&home, &top, "only", &tree, 0).unwrap_or_else(|m| panic!("{m}"));
    // Spot checks of the semantics the oracle just confirmed.
    let opts = options();
    assert!(is_ignored(&top, "build/keep.rs", false, &opts));
    // `!important.log` in .gitignore beats `/logs/important.log` in info/exclude.
    assert!(!is_ignored(&top, "logs/important.log", false, &opts));
    assert!(is_ignored(&top, "logs/a.log", false, &opts));
    assert!(is_ignored(&top, "a/xb/y/c/f.txt", false, &opts));
    assert!(!is_ignored(&top, "docs/trail", false, &opts));
    assert!(is_ignored(&top, "docs/trail ", false, &opts));
    assert!(!is_ignored(&top, "only/nested/deeper.rs", false, &opts));
}

fn listing(result: &CrawlResult) -> Vec<(u16, &str)> {
    result
        .files
        .iter()
        .map(|f| (f.root, f.rel_path.as_str()))
        .collect()
}

#[test]
fn symlinks_nested_roots_and_order() {
    let tmp = TempDir::new("links");
    let outside = tmp.path.join("outside");
    fs::create_dir_all(outside.join("dir")).expect("mkdir");
    fs::write(outside.join("secret.go"), b"package x\n").expect("write");
    fs::write(outside.join("dir/inner.go"), b"package x\n").expect("write");
    let top = tmp.path.join("ws");
    for f in [
        "svc/a.go",
        "svc/gen/b.go",
        "svc/inner/c.go",
        "lib/d.go",
        "e.go",
    ] {
        let p = top.join(f);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, b"package x\n").expect("write");
    }
    // A .gitignore above the inner root, in the same repository, applies inside it.
    git(&tmp.path, &top, &["init", "-q"], None);
    fs::write(top.join(".gitignore"), b"gen/\n").expect("write");
    symlink(outside.join("secret.go"), top.join("svc/leak.go")).expect("symlink");
    symlink(&outside, top.join("svc/outside")).expect("symlink");
    symlink("../lib", top.join("svc/lib_link")).expect("symlink");
    symlink("a.go", top.join("svc/alias.go")).expect("symlink");
    let outer = CrawlRoot {
        path: top.clone(),
        index: 0,
    };
    let inner = CrawlRoot {
        path: top.join("svc"),
        index: 1,
    };
    let opts = CrawlOptions {
        indexable: |p| p.ends_with(".go"),
        ..CrawlOptions::default()
    };
    let result = crawl(&[inner.clone(), outer.clone()], &opts);
    assert_eq!(
        listing(&result),
        [(0, "e.go"), (0, "lib/d.go"), (1, "a.go"), (1, "inner/c.go")]
    );
    assert!(is_ignored(&inner.path, "gen/b.go", false, &opts));
    let rejected: Vec<(u16, &str, &RejectReason)> = result
        .rejected
        .iter()
        .map(|r| (r.root, r.rel_path.as_str(), &r.reason))
        .collect();
    // `lib_link` points into the outer root but outside its own root, so it is refused too.
    assert_eq!(
        rejected,
        [
            (1, "leak.go", &RejectReason::SymlinkOutsideRoot),
            (1, "lib_link", &RejectReason::SymlinkOutsideRoot),
            (1, "outside", &RejectReason::SymlinkOutsideRoot),
        ]
    );
    // Same answer whatever the root order, run after run.
    for _ in 0..3 {
        assert_eq!(crawl(&[outer.clone(), inner.clone()], &opts), result);
    }
}
