//! The front end the statement-cutting script extractors (PHP, Python, Ruby) share: each
//! lexes its file, pairs its brackets, builds the shared token view and scans the file's
//! assignments the same way, walks the resulting [`Src`], and hands the top-level assignments
//! to the facts. Only the language's constants ([`Script`]) and its walk differ.

use std::marker::PhantomData;

use super::bind::{Assignments, StmtStyle};
use super::common::{self, Brackets};
use super::tokens::{Rules, Tokens};
use super::value::ExprRules;
use crate::index::facts::{FileFacts, GrpcFact, HttpFact};
use crate::index::lex::{self, Lexed, Syntax};

/// What tells one script language from another at the front end.
pub(super) trait Script {
    /// How the file is lexed.
    const SYNTAX: Syntax;
    /// How the assignment tracker cuts statements.
    const STYLE: StmtStyle;
    /// How the evaluator reads the exported assignments.
    const RULES: ExprRules;
    /// A byte left out of the token view wherever it stands (PHP's namespace separator).
    const SKIP: Option<u8> = None;
}

/// The lexed file, its bracket pairs, and the shared token view with the file's assignments
/// (what the expression evaluator reads topics, URLs and constants with). `L` is the
/// language, so that each extractor gives the view methods of its own.
pub(super) struct Src<'a, L> {
    pub(super) lx: &'a Lexed<'a>,
    pub(super) br: Brackets,
    pub(super) t: &'a Tokens<'a, 'a>,
    pub(super) asg: &'a Assignments,
    lang: PhantomData<L>,
}

impl<L> Src<'_, L> {
    /// The masked code.
    pub(super) fn code(&self) -> &str {
        &self.lx.code
    }

    /// The 1-based line of a byte offset.
    pub(super) fn line_of(&self, offset: usize) -> u32 {
        self.lx.line_of(offset)
    }

    /// The range trimmed of whitespace.
    pub(super) fn trim(&self, s: usize, e: usize) -> (usize, usize) {
        common::trim_range(self.code(), s, e)
    }

    /// Where the statement that starts at `start` stops, the one scan the statement cutters
    /// share: at the first `;`, or the first newline `ends_at` accepts, outside brackets and
    /// outside strings opened by a byte of `quotes` (both skipped whole). With
    /// `backslash_escapes` a backslash skips the byte after it (a line continuation). The
    /// file's end when nothing stops it.
    pub(super) fn statement_stop(
        &self,
        start: usize,
        quotes: &[u8],
        backslash_escapes: bool,
        ends_at: impl Fn(usize) -> bool,
    ) -> usize {
        let code = self.code().as_bytes();
        let n = code.len();
        let mut j = start;
        while j < n {
            match code[j] {
                b'(' | b'[' | b'{' => j = self.br.close_of(j).map_or(j + 1, |c| c + 1),
                q if quotes.contains(&q) => {
                    j = self
                        .lx
                        .string_covering(j)
                        .map_or(j + 1, |s| s.end.max(j + 1));
                }
                b'\\' if backslash_escapes => j += 2,
                b';' => break,
                b'\n' if ends_at(j) => break,
                _ => j += 1,
            }
        }
        j.min(n)
    }
}

/// Extracts the facts of one file of language `L`: builds its [`Src`], lets `walk` gather the
/// facts, and adds the file's top-level assignments as bindings.
pub(super) fn extract<L: Script>(text: &str, walk: impl FnOnce(&Src<L>) -> FileFacts) -> FileFacts {
    let lx = lex::lex(L::SYNTAX, text);
    let br = Brackets::new(&lx.code);
    let skips: Vec<(usize, usize)> = match L::SKIP {
        Some(skip) => (lx.code.bytes().enumerate())
            .filter(|&(_, b)| b == skip)
            .map(|(i, _)| (i, i + 1))
            .collect(),
        None => Vec::new(),
    };
    let t = Tokens::with_skips(&lx, &Rules::SCRIPT, &skips);
    let asg = Assignments::scan(&t, &L::STYLE);
    let src = Src {
        lx: &lx,
        br,
        t: &t,
        asg: &asg,
        lang: PhantomData,
    };
    let mut facts = walk(&src);
    asg.export(&t, &L::RULES, &mut facts);
    facts
}

/// Joins route segments with single slashes, always starting with `/`: `"/v1"` + `"orders"`
/// gives `/v1/orders`.
pub(super) fn join(prefix: &str, path: &str) -> String {
    let p = prefix.trim_end_matches('/');
    let q = path.trim_start_matches('/');
    crate::index::mounts::rooted(if q.is_empty() {
        p.to_string()
    } else {
        format!("{p}/{q}")
    })
}

/// `orders` gives `order`, `categories` gives `category` (enough for nested route params).
pub(super) fn singular(plural: &str) -> String {
    if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = plural.strip_suffix('s') {
        stem.to_string()
    } else {
        plural.to_string()
    }
}

/// The standard REST routes of a resource (Rails `resources`, Laravel `Route::resource`) as
/// (action, method, path): `index` and the create action (named by `create`: Rails' `create`,
/// Laravel's `store`) on the collection `base`; `show`, `update` (by each method of `update`,
/// in the framework's order) and `destroy` on `member`.
pub(super) fn rest_actions<'p>(
    base: &'p String,
    member: &'p String,
    create: &'static str,
    update: [&'static str; 2],
) -> [(&'static str, &'static str, &'p String); 6] {
    [
        ("index", "GET", base),
        (create, "POST", base),
        ("show", "GET", member),
        ("update", update[0], member),
        ("update", update[1], member),
        ("destroy", "DELETE", member),
    ]
}

/// Records a route at `path` for each of `methods`, all served by `handler`.
pub(super) fn push_routes(
    facts: &mut FileFacts,
    methods: Vec<String>,
    path: &str,
    handler: Option<String>,
    line: u32,
) {
    for method in methods {
        facts.http.push(HttpFact::Route {
            method,
            path: path.to_string(),
            handler: handler.clone(),
            line,
        });
    }
}

/// Records that the class `class` serves the gRPC service `service` (declared at `line`).
pub(super) fn push_grpc_server(facts: &mut FileFacts, service: &str, class: &str, line: u32) {
    facts.grpc.push(GrpcFact::Server {
        service: service.to_string(),
        impl_type: Some(class.to_string()),
        line,
    });
}
