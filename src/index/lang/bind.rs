//! The one assignment tracker: every `name = expression` of a file (`const base = …`,
//! `val topic = …`, `base := …`, `String url = …`, `self.base = …`, `$url = …`), with the block
//! it lives in, found in one pass over the shared token view. It is what topic, client and URL
//! resolution all need: the evaluator ([`super::value`]) asks it what a local name holds, gRPC
//! recognisers ask which variable holds a client, and its top-level and class-level entries
//! become the file's [`Binding`]s, which the graph resolves names of other files against.

use super::common::looks_like_http_path;
use super::tokens::Tokens;
use super::value::{ExprRules, Scope, eval};
use crate::index::facts::{Binding, FileFacts, Part};

/// How a language ends statements and declares names.
#[derive(Debug, Clone, Copy)]
pub struct StmtStyle {
    /// A newline ends a statement unless the expression obviously continues (Go, Kotlin,
    /// Swift, Scala, Python, Ruby, JavaScript without semicolons).
    pub newline_ends: bool,
    /// `var name Type = …` puts the name first and the type after it (Go).
    pub name_before_type: bool,
    /// Blocks are braces (false: indentation or `end`, where every assignment is at file level
    /// unless it is indented).
    pub braces: bool,
}

impl StmtStyle {
    /// Java, C#, C, C++, PHP, Rust: `;` ends a statement.
    pub const SEMICOLON: StmtStyle = StmtStyle {
        newline_ends: false,
        name_before_type: false,
        braces: true,
    };
    /// JavaScript, TypeScript, Kotlin, Swift, Scala.
    pub const NEWLINE: StmtStyle = StmtStyle {
        newline_ends: true,
        name_before_type: false,
        braces: true,
    };
    /// Go.
    pub const GO: StmtStyle = StmtStyle {
        newline_ends: true,
        name_before_type: true,
        braces: true,
    };
    /// Python and Ruby.
    pub const INDENT: StmtStyle = StmtStyle {
        newline_ends: true,
        name_before_type: false,
        braces: false,
    };
}

/// One assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assign {
    /// The name as written on the left (`base`, `this.baseUrl`, `self.url`, `$url`).
    pub name: String,
    /// The token of the name: the binding is visible after it.
    pub at: usize,
    /// The right-hand side, as a token range.
    pub rhs: (usize, usize),
    /// The block the assignment lives in (the whole file at top level).
    pub block: (usize, usize),
    /// True for an assignment at file level (or the first indentation level of a class
    /// body, for brace-less languages).
    pub top_level: bool,
    /// The class, object or struct whose body holds the assignment (a field or constant).
    pub container: Option<String>,
}

/// Every assignment of a file, in source order, and the lookups the evaluator needs.
#[derive(Debug, Default)]
pub struct Assignments {
    pub list: Vec<Assign>,
    /// Indexes into `list` by name (`this.`/`self.` kept), in source order.
    by_name: std::collections::HashMap<String, Vec<u32>>,
    /// Indexes into `list` of top-level and class-level entries by qualified name.
    by_qualified: std::collections::HashMap<String, Vec<u32>>,
    /// Parameter names with the token range of the function body they belong to.
    params: std::collections::HashMap<String, Vec<(usize, usize)>>,
    /// Functions that return one expression: name → (parameter names, returned range).
    functions: std::collections::HashMap<String, (Vec<String>, (usize, usize))>,
    /// Functions with a few `return`s (`if v := os.Getenv(k); v != "" { return v }; return
    /// d`): name → (parameter names, body, returned ranges), read by their shape.
    branches: std::collections::HashMap<String, Branches>,
    /// Constructors: (body, class, parameter names), so a parameter stored in a field reads
    /// as the argument of `new Class(…)` elsewhere ([`ctor_arg_name`]).
    ctors: Vec<((usize, usize), String, Vec<String>)>,
    /// `new Class(args)` sites: (class, open parenthesis).
    news: Vec<(String, usize)>,
    /// Named functions with a block body: (body, name, parameter names by position), so a
    /// parameter read inside one stands for what each call passes ([`call_arg_name`]).
    funcs: Vec<((usize, usize), String, Vec<String>)>,
    /// The innermost entry of `funcs` around each token (`u32::MAX`: none), so a parameter
    /// lookup costs the same in a file of thousands of (nested) functions as in one; built on
    /// the first lookup (most files read no parameter).
    func_at: std::cell::OnceCell<Vec<u32>>,
    /// `object["KEY"] = value` statements: (object path, key, right-hand side), which
    /// [`Assignments::export`] keeps for the language's configuration objects
    /// (`app.config["CART_URI"] = …`).
    keyed: Vec<(String, String, (usize, usize))>,
    /// Some name in `by_name` starts with `this.`, `self.` or `$this.`: without one, a member
    /// lookup ([`Scope::lookup`]) cannot find anything and skips building the three keys.
    member_names: bool,
}

/// A function read by its shape: parameter names, body, and the ranges it returns.
pub type Branches = (Vec<String>, (usize, usize), Vec<(usize, usize)>);

/// The name the graph resolves for argument `i` of class `class`'s constructor: each
/// `new Class(arg)` binds it, the class's code references it.
pub fn ctor_arg_name(class: &str, i: usize) -> String {
    format!("new {class}#{i}")
}

/// The name the graph resolves for argument `i` of calls of a function named `function`: the
/// call sites of the file bind it ([`Assignments::export`]), and a parameter of the function
/// that reaches a URL is a reference to it, which the graph reads at every call site (an
/// HTTP helper `get(url)` is called with the paths its callers request).
pub fn call_arg_name(function: &str, i: usize) -> String {
    format!("call {function}#{i}")
}

/// `(function, argument index)` of a [`call_arg_name`]; `None` for any other name.
pub fn split_call_arg(name: &str) -> Option<(&str, usize)> {
    let (function, i) = name.strip_prefix("call ")?.rsplit_once('#')?;
    Some((function, i.parse().ok()?))
}

/// How a [`call_arg_name`] reads in an answer (`call get#0` → `argument 1 of get(…)`).
pub fn describe_call_arg(name: &str) -> Option<String> {
    let (function, i) = split_call_arg(name)?;
    Some(format!("argument {} of {function}(…)", i + 1))
}

/// How a [`ctor_arg_name`] reads in an answer (`new Provider#0` → `argument 1 of new
/// Provider(…)`); `None` for any other name.
pub fn describe_ctor_arg(name: &str) -> Option<String> {
    let (class, i) = name.strip_prefix("new ")?.rsplit_once('#')?;
    let i: usize = i.parse().ok()?;
    Some(format!("argument {} of new {class}(…)", i + 1))
}

const DECL_WORDS: &[&str] = &[
    "const",
    "let",
    "var",
    "val",
    "final",
    "static",
    "public",
    "private",
    "protected",
    "internal",
    "readonly",
    "export",
    "default",
    "mut",
    "pub",
    "lateinit",
    "override",
    "open",
    "late",
    "fileprivate",
    "lazy",
    "declare",
    "volatile",
    "transient",
    "constexpr",
    "inline",
    "extern",
    "unsafe",
];

const NOT_STATEMENTS: &[&str] = &[
    "if", "while", "for", "return", "case", "when", "match", "elif", "else", "until", "unless",
    "yield", "assert", "with", "except", "catch", "throw", "raise", "in", "do",
];

impl Assignments {
    /// The assignment whose right-hand side starts at token `start` (`c := pb.NewXClient(…)`,
    /// `let c = X::connect(…)`); `list` is in source order, so this is a binary search.
    pub fn starting_at(&self, start: usize) -> Option<&Assign> {
        let p = self.list.partition_point(|a| a.rhs.0 < start);
        self.list.get(p).filter(|a| a.rhs.0 == start)
    }

    /// Finds every simple assignment of `t`.
    pub fn scan(t: &Tokens, style: &StmtStyle) -> Assignments {
        let mut out = Assignments::default();
        let n = t.len();
        // Enclosing braces, for blocks and containers: a stack of (open token, container).
        let mut stack: Vec<(usize, Option<String>)> = Vec::new();
        let mut i = 0usize;
        while i < n {
            match t.punct(i) {
                b'{' => {
                    let container = container_of(t, i);
                    stack.push((i, container));
                    i += 1;
                    continue;
                }
                b'}' => {
                    stack.pop();
                    i += 1;
                    continue;
                }
                b'(' => {
                    let class = stack.last().and_then(|(_, c)| c.as_deref());
                    out.scan_function(t, i, style, class);
                }
                _ => {}
            }
            out.scan_new(t, i);
            out.scan_keyed(t, i, style);
            if is_assign_eq(t, i) {
                out.scan_assign(t, i, style, &stack);
            }
            i += 1;
        }
        out.index_names();
        out
    }

    /// Reads the parameter list opening at `i` and the function it belongs to, if any: its
    /// parameters, what it returns, and whether it is a constructor of `class`.
    fn scan_function(&mut self, t: &Tokens, i: usize, style: &StmtStyle, class: Option<&str>) {
        // Parameter lists: `(a, b string)`, `(self, url)`, `(String base)` — the names of a
        // function's parameters, for `is_param`.
        let body = t.close(i).and_then(|close| {
            if style.braces {
                body_after(t, close)
            } else {
                indented_body(t, i, close)
            }
        });
        match body {
            None => self.scan_expression_bodied(t, i, style),
            Some(body) => self.scan_block_bodied(t, i, body, style, class),
        }
    }

    /// An expression-bodied function (`string Url(int id) => $"…";`, `fun url(id: Int) =
    /// "…"`) whose parameter list opens at `i`: the expression is what it returns.
    fn scan_expression_bodied(&mut self, t: &Tokens, i: usize, style: &StmtStyle) {
        let n = t.len();
        let Some(close) = t.close(i) else {
            return;
        };
        let Some(fname) = i.checked_sub(1).and_then(|k| t.ident(k)) else {
            return;
        };
        if matches!(fname, "if" | "while" | "for" | "switch" | "catch" | "when") {
            return;
        }
        let mut k = close + 1;
        let limit = (close + 12).min(n);
        while k < limit
            && !t.is(k, "=>")
            && !t.is_punct(k, b'=')
            && !t.is_punct(k, b';')
            && !t.is_punct(k, b'{')
        {
            k = t.skip_group(k);
        }
        if !((t.is(k, "=>") || (t.is_punct(k, b'=') && !t.joined(k)))
            && !t.is_punct(k + 1, b'{')
            && i >= 2
            && t.ident(i - 2).is_some())
        {
            return;
        }
        let end = stmt_end(t, k + 1, style, n);
        if end <= k + 1 {
            return;
        }
        let names: Vec<String> = t
            .args(i)
            .into_iter()
            .filter_map(|(a, b)| param_name(t, a, b, style.name_before_type).map(str::to_string))
            .collect();
        for p in &names {
            self.params.entry(p.clone()).or_default().push((k, end));
        }
        self.functions
            .entry(fname.to_string())
            .or_insert((names, (k + 1, end)));
    }

    /// A function with a block `body` whose parameter list opens at `i`: its parameters,
    /// whether it constructs `class`, and the one or few expressions it returns.
    fn scan_block_bodied(
        &mut self,
        t: &Tokens,
        i: usize,
        body: (usize, usize),
        style: &StmtStyle,
        class: Option<&str>,
    ) {
        let mut names = Vec::new();
        let mut positional = Vec::new();
        for (a, b) in t.args(i) {
            let p = param_name(t, a, b, style.name_before_type);
            if let Some(p) = p {
                self.params.entry(p.to_string()).or_default().push(body);
                names.push(p.to_string());
            }
            positional.push(p.unwrap_or("").to_string());
        }
        if let Some(k) = declared_name(t, i) {
            // A method's receiver is not an argument of its calls (`self._get("/x")`).
            if matches!(positional.first().map(String::as_str), Some("self" | "cls")) {
                positional.remove(0);
            }
            if positional.iter().any(|p| !p.is_empty()) {
                self.funcs.push((body, t.text(k).to_string(), positional));
            }
        }
        let Some(fname) = i.checked_sub(1).and_then(|k| t.ident(k)) else {
            return;
        };
        // A constructor: named like its class, `constructor` (TS/JS) or `__construct` (PHP),
        // directly in the class body.
        if let Some(class) = class
            && (fname == class || matches!(fname, "constructor" | "__construct"))
            && !names.is_empty()
        {
            self.ctors.push((body, class.to_string(), names.clone()));
        }
        match returned_exprs(t, body, style).as_slice() {
            [ret] => {
                self.functions
                    .entry(fname.to_string())
                    .or_insert((names, *ret));
            }
            rets if rets.len() >= 2 => {
                self.branches
                    .entry(fname.to_string())
                    .or_insert((names, body, rets.to_vec()));
            }
            _ => {}
        }
    }

    /// A `new Class(…)` site at `i`.
    fn scan_new(&mut self, t: &Tokens, i: usize) {
        let n = t.len();
        if t.kw(i, "new")
            && let Some(class) = t.ident(i + 1)
            && t.is_punct(t.skip_angles(i + 2, n), b'(')
        {
            self.news.push((class.to_string(), t.skip_angles(i + 2, n)));
        }
    }

    /// `app.config["CART_URI"] = …` at `i`: a configuration key set in code.
    fn scan_keyed(&mut self, t: &Tokens, i: usize, style: &StmtStyle) {
        if t.is_punct(i, b'[')
            && t.is_str(i + 1)
            && t.is_punct(i + 2, b']')
            && is_assign_eq(t, i + 3)
            && let Some((object, _)) = member_path_before(t, 0, i)
            && let Some(key) = t.str_value(i + 1)
        {
            let end = stmt_end(t, i + 4, style, t.len());
            if end > i + 4 {
                self.keyed.push((object, key.into_owned(), (i + 4, end)));
            }
        }
    }

    /// The assignment whose `=` is at `i`, inside the braces of `stack`.
    fn scan_assign(
        &mut self,
        t: &Tokens,
        i: usize,
        style: &StmtStyle,
        stack: &[(usize, Option<String>)],
    ) {
        let (block, top, container) = match stack.last() {
            Some((open, c)) => (
                (*open, t.close_or_end(*open)),
                c.is_some() && stack.len() <= 2,
                c.clone(),
            ),
            None => ((0, t.len()), true, None),
        };
        let top = if style.braces {
            top || stack.is_empty()
        } else {
            // Indentation languages: top level is column 0 (or a class body's first level,
            // which the language extractor qualifies itself).
            line_indent(t, i) == 0
        };
        if let Some(a) = assignment_at(t, i, style, block, top, container) {
            self.list.push(a);
        }
    }

    /// The innermost entry of `funcs` around each token, in one sweep (bodies nest, so the
    /// innermost body around a token is the one that started last and has not ended).
    fn index_funcs(&self) -> Vec<u32> {
        let Some(len) = self.funcs.iter().map(|((_, b), ..)| b + 1).max() else {
            return Vec::new();
        };
        let mut order: Vec<u32> = (0..self.funcs.len() as u32).collect();
        // Outer bodies first; of equal bodies the first recorded ends up innermost.
        order.sort_by_key(|&f| {
            let (a, b) = self.funcs[f as usize].0;
            (a, std::cmp::Reverse(b), std::cmp::Reverse(f))
        });
        let mut func_at = vec![u32::MAX; len];
        let (mut open, mut next) = (Vec::new(), 0);
        for (pos, slot) in func_at.iter_mut().enumerate() {
            while let Some(&f) = order.get(next)
                && self.funcs[f as usize].0.0 <= pos
            {
                open.push(f);
                next += 1;
            }
            while open
                .last()
                .is_some_and(|&f| self.funcs[f as usize].0.1 < pos)
            {
                open.pop();
            }
            if let Some(&f) = open.last() {
                *slot = f;
            }
        }
        func_at
    }

    /// Fills the by-name and by-qualified-name lookups from `list`.
    fn index_names(&mut self) {
        for (k, a) in self.list.iter().enumerate() {
            self.by_name
                .entry(a.name.clone())
                .or_default()
                .push(k as u32);
            if a.top_level {
                self.by_qualified
                    .entry(qualified(a))
                    .or_default()
                    .push(k as u32);
                // A member (`this.base`) is also found by its bare name inside the class.
                if let Some(bare) = a.name.split_once('.').map(|(_, b)| b) {
                    self.by_name
                        .entry(bare.to_string())
                        .or_default()
                        .push(k as u32);
                }
            }
        }
        self.member_names = self
            .by_name
            .keys()
            .any(|n| n.starts_with("this.") || n.starts_with("self.") || n.starts_with("$this."));
    }

    /// The last assignment of `name` visible at token `at`: in a block around `at` and
    /// before it, else a top-level or class-level one anywhere in the file.
    pub fn last(&self, name: &str, at: usize) -> Option<&Assign> {
        let entries = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        let local = entries
            .iter()
            .map(|&k| &self.list[k as usize])
            .filter(|a| a.name == name && a.at < at && a.block.0 <= at && at <= a.block.1)
            .max_by_key(|a| (a.block.0, a.at));
        local
            .or_else(|| {
                entries
                    .iter()
                    .rev()
                    .map(|&k| &self.list[k as usize])
                    .find(|a| a.top_level)
            })
            .or_else(|| {
                self.by_qualified
                    .get(name)
                    .and_then(|v| v.last())
                    .map(|&k| &self.list[k as usize])
            })
    }

    /// The assignment whose right-hand side holds token `at` (`req = new HttpPost(url)` for
    /// the `new`), if any.
    pub fn holding(&self, at: usize) -> Option<&Assign> {
        self.list
            .iter()
            .filter(|a| a.rhs.0 <= at && at < a.rhs.1)
            .max_by_key(|a| a.rhs.0)
    }

    /// Where the request built into `name` at token `at` is sent: the first later call of one
    /// of `methods` in the same block whose first argument is `name` (`client.execute(req)`,
    /// `httpClient.SendAsync(req)`, `http.DefaultClient.Do(req)`), as the method's token.
    pub fn sent_at(t: &Tokens, a: &Assign, methods: &[&str]) -> Option<usize> {
        let bare = a.name.rsplit('.').next().unwrap_or(&a.name);
        let end = a.block.1.min(t.len());
        let mut k = a.rhs.1;
        while k < end {
            if let Some(m) = t.ident(k)
                && methods.contains(&m)
                && t.is_punct(k + 1, b'(')
                && (t.is(k + 2, bare) || (t.is(k + 2, "this") && t.is(k + 4, bare)))
            {
                return Some(k);
            }
            k += 1;
        }
        None
    }

    /// The file's top-level and class-level assignments as [`Binding`]s (`Topics.ORDERS` for
    /// a field of `Topics`), evaluated with `rules`; names the file already binds are kept
    /// as they are.
    pub fn export(&self, t: &Tokens, rules: &ExprRules, facts: &mut FileFacts) {
        self.export_names(t, rules, facts);
        without_call_args(facts);
    }

    fn export_names(&self, t: &Tokens, rules: &ExprRules, facts: &mut FileFacts) {
        for a in self.list.iter().filter(|a| a.top_level) {
            let name = qualified(a);
            if facts.bindings.iter().any(|b| b.name == name) {
                continue;
            }
            let value = eval(t, a.rhs, rules, self);
            if value.is_dynamic() {
                continue;
            }
            facts.bindings.push(Binding {
                name,
                value,
                line: t.line(a.at),
            });
        }
        // A configuration key set in code is a property of the service, so a read of it
        // anywhere in the service (`app.config["CART_URI"] + "/" + id`) resolves the way a key
        // of a property file does; only a value made of literals and env lookups can be one.
        for (object, key, rhs) in &self.keyed {
            if !rules
                .config_objects
                .iter()
                .any(|o| object == o || object.ends_with(&format!(".{o}")))
            {
                continue;
            }
            let value = eval(t, *rhs, rules, self);
            if let Some(text) = placeholder_text(&value) {
                facts.properties.push(crate::index::facts::Property {
                    key: key.clone(),
                    value: text,
                    line: t.line(rhs.0),
                });
            }
        }
        self.export_call_args(t, rules, facts);
        // What each `new Class(args)` passes, for constructors that keep an argument.
        for (class, open) in &self.news {
            for (i, &(a, b)) in t.args(*open).iter().enumerate().take(8) {
                // A base or a name kept whole: a value with run-time parts is no base, and a
                // plain literal is kept only when it is a URL, a path or one word that can
                // name a topic or queue (`new Publisher("orders")`); `new Error("…")` is
                // everywhere and never one.
                let error = ["Error", "Exception", "Throwable"]
                    .iter()
                    .any(|s| class.ends_with(s));
                let value = eval(t, (a, b), rules, self);
                let useful = value.parts.iter().all(|p| match p {
                    Part::Dynamic => false,
                    Part::Ref { name, .. } => !name.starts_with("call "),
                    _ => true,
                }) && value.parts.iter().any(|p| match p {
                    Part::Lit(s) => {
                        s.contains("://")
                            || looks_like_http_path(s)
                            || (!error && s.len() > 1 && super::common::looks_like_topic(s))
                    }
                    _ => true,
                });
                if useful {
                    facts.bindings.push(Binding {
                        name: ctor_arg_name(class, i),
                        value,
                        line: t.line(a),
                    });
                }
            }
        }
    }
}

/// Every value of `facts` but an HTTP call's URL with its callers' arguments made run-time
/// parts: a topic, a binding or a link is one value, and only requests are read at their
/// helper's call sites (the graph's fan-out).
fn without_call_args(facts: &mut FileFacts) {
    use crate::index::facts::HttpFact;
    for e in &mut facts.events {
        e.topic.without_call_args();
    }
    for b in &mut facts.bindings {
        b.value.without_call_args();
    }
    for b in &mut facts.call_args {
        b.value.without_call_args();
    }
    for h in &mut facts.http {
        match h {
            HttpFact::Navigate { url, .. } => url.without_call_args(),
            HttpFact::Prefix { prefix, .. } | HttpFact::AppPrefix { prefix, .. } => {
                prefix.without_call_args()
            }
            _ => {}
        }
    }
}

/// The most call-site arguments one file binds ([`call_arg_name`]).
const MAX_CALL_ARGS: usize = 256;

impl Assignments {
    /// The URL-like arguments of the file's calls (`helpers.get(base + "/tags", res)`,
    /// `self._get("/orders")`), as bindings named [`call_arg_name`]: a helper of another
    /// file whose parameter reaches a request is resolved at each of these sites.
    fn export_call_args(&self, t: &Tokens, rules: &ExprRules, facts: &mut FileFacts) {
        let n = t.len();
        // URL-like tokens before each token: whether a range has one is a subtraction, so
        // nested calls (`f(f(f(…url…)))`) cost one pass, not one scan per call, and a file without
        // any returns at once.
        let mut urlish = Vec::with_capacity(n + 1);
        urlish.push(0u32);
        for j in 0..n {
            urlish.push(urlish[j] + u32::from(urlish_token(t, j)));
        }
        if urlish[n] == 0 {
            return;
        }
        let has_urlish = |a: usize, b: usize| a < b && urlish[b.min(n)] > urlish[a.min(n)];
        let mut kept = 0;
        for k in 0..n {
            let Some(name) = t.ident(k) else { continue };
            let open = if t.is(k + 1, "(") {
                k + 1
            } else if t.is(k + 1, "<") {
                let j = t.skip_angles(k + 1, n);
                if j == k + 1 || !t.is(j, "(") {
                    continue;
                }
                j
            } else {
                continue;
            };
            if is_call_keyword(name)
                || k.checked_sub(1)
                    .and_then(|p| t.ident(p))
                    .is_some_and(is_declaring_word)
            {
                continue;
            }
            let Some(close) = t.close(open) else { continue };
            // A declaration, not a call: `get(url) {`, `(url) =>`, `get(url: string): T {`.
            if t.is(close + 1, "{") || t.is(close + 1, "=>") || !has_urlish(open + 1, close) {
                continue;
            }
            let args = t.args(open);
            if t.is(close + 1, ":")
                && args
                    .iter()
                    .any(|&(a, b)| b > a + 1 && t.is_punct(a + 1, b':') && !t.op2(a + 1, b"::"))
            {
                continue;
            }
            for (i, &(a, b)) in args.iter().enumerate().take(4) {
                if !has_urlish(a, b) {
                    continue;
                }
                let value = eval(t, (a, b), rules, self);
                if !super::common::looks_like_url(&value) {
                    continue;
                }
                facts.call_args.push(Binding {
                    name: call_arg_name(name, i),
                    value,
                    line: t.line(k),
                });
                kept += 1;
                if kept >= MAX_CALL_ARGS {
                    return;
                }
            }
        }
    }
}

/// Words followed by `(` that are not calls of a function of the workspace.
fn is_call_keyword(w: &str) -> bool {
    matches!(
        w,
        "if" | "while"
            | "for"
            | "foreach"
            | "switch"
            | "catch"
            | "when"
            | "return"
            | "match"
            | "function"
            | "func"
            | "fn"
            | "def"
            | "fun"
            | "super"
            | "this"
            | "typeof"
            | "sizeof"
            | "require"
            | "import"
            | "print"
            | "println"
            | "printf"
            | "format"
            | "fmt"
    )
}

/// Words before a name that declare it (`function get(`, `def get(`, `new Get(`).
fn is_declaring_word(w: &str) -> bool {
    matches!(
        w,
        "function" | "def" | "func" | "fn" | "fun" | "new" | "class" | "constructor"
    )
}

/// A token that can make an argument a URL: a string with a `/` or a scheme, or a name that
/// reads like one (`catalogueUrl`, `BASE_URI`, `endpoints.orders`).
fn urlish_token(t: &Tokens, j: usize) -> bool {
    if let Some(s) = t.str_lit(j) {
        return s.raw.contains('/');
    }
    t.ident(j).is_some_and(|w| urlish_word(w.as_bytes()))
}

/// `url`, `uri` or `endpoint` in any case inside `w`: one pass over its bytes (this runs for
/// every name of every file).
fn urlish_word(w: &[u8]) -> bool {
    let lower = |i: usize| w.get(i).map_or(0, |c| c | 0x20);
    (0..w.len().saturating_sub(2)).any(|i| match w[i] | 0x20 {
        b'u' => lower(i + 1) == b'r' && matches!(lower(i + 2), b'l' | b'i'),
        b'e' => w.len() - i >= 8 && w[i..i + 8].eq_ignore_ascii_case(b"endpoint"),
        _ => false,
    })
}

/// The token naming the function whose parameter list opens at `open`: `get(`,
/// `getJson<T>(`, `helpers.get = function (`, `const get = async (`, `get: function (`;
/// `None` for control words and anonymous functions.
fn declared_name(t: &Tokens, open: usize) -> Option<usize> {
    let mut k = open.checked_sub(1)?;
    if t.is(k, ">") {
        // Type parameters: back to the matching `<` (short lists only).
        let mut depth = 0usize;
        let stop = k.saturating_sub(32);
        loop {
            match t.punct(k) {
                b'>' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            if k == stop || k == 0 {
                return None;
            }
            k -= 1;
        }
        k = k.checked_sub(1)?;
    }
    while t
        .ident(k)
        .is_some_and(|w| matches!(w, "function" | "async"))
    {
        k = k.checked_sub(1)?;
        if (t.is_punct(k, b'=') && !t.joined(k)) || t.is_punct(k, b':') {
            k = k.checked_sub(1)?;
            break;
        }
    }
    if t.is_punct(k, b'=') && !t.joined(k) {
        k = k.checked_sub(1)?;
    }
    let w = t.ident(k)?;
    (!is_call_keyword(w) && !is_declaring_word(w)).then_some(k)
}

/// A value as a property file writes it: literals as they are, an environment variable as
/// `${VAR:default}`. `None` when it has other parts (names, run-time values) or no literal
/// text at all.
fn placeholder_text(v: &crate::index::facts::Value) -> Option<String> {
    let mut out = String::new();
    let mut literal = false;
    for p in &v.parts {
        match p {
            Part::Lit(s) if !s.contains("${") => {
                literal |= !s.is_empty();
                out.push_str(s);
            }
            Part::Env { var, default }
                if var
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
            {
                out.push_str("${");
                out.push_str(var);
                if let Some(d) = default {
                    out.push(':');
                    out.push_str(d);
                }
                out.push('}');
            }
            // `${cart_host}` would read as a key of the configuration, not the environment:
            // a variable of another spelling is written as the default it resolves to.
            Part::Env {
                default: Some(d), ..
            } if !d.contains("${") => out.push_str(d),
            _ => return None,
        }
    }
    literal.then_some(out)
}

/// `Container.name` for a field or constant of a class (the `this.`/`self.` of a member
/// assignment dropped), else the name.
fn qualified(a: &Assign) -> String {
    let bare = a
        .name
        .strip_prefix("this.")
        .or_else(|| a.name.strip_prefix("self."))
        .or_else(|| a.name.strip_prefix("$this."))
        .unwrap_or(&a.name);
    match &a.container {
        Some(c) if !bare.contains('.') => format!("{c}.{bare}"),
        _ => bare.to_string(),
    }
}

impl Scope for Assignments {
    /// Locals and members are read here; top-level names stay references, so the graph says
    /// which constant gave a value (`constant ORDERS_TOPIC`) and resolves it the same way
    /// from every file.
    fn lookup(&self, name: &str, at: usize) -> Option<(usize, usize)> {
        self.last(name, at)
            .filter(|a| !a.top_level)
            .or_else(|| {
                // A member assigned in a constructor (`this.base = base`) is visible in every
                // method of the class.
                // One key buffer for the three prefixes, and none at all when no member is
                // assigned in the file: a `format!` per prefix was most of a lookup.
                if !self.member_names {
                    return None;
                }
                let mut key = String::with_capacity(6 + name.len());
                ["this.", "self.", "$this."].iter().find_map(|p| {
                    key.clear();
                    key.push_str(p);
                    key.push_str(name);
                    self.by_name
                        .get(&key)
                        .and_then(|v| v.last())
                        .map(|&k| &self.list[k as usize])
                        // `this.base = base`: the parameter on the right is not the member.
                        .filter(|a| !(a.rhs.0 <= at && at < a.rhs.1))
                })
            })
            .or_else(|| {
                // A field set in a constructor without `this.` (`_base = baseUrl;`).
                self.by_name
                    .get(name)?
                    .iter()
                    .rev()
                    .map(|&k| &self.list[k as usize])
                    .find(|a| {
                        !(a.rhs.0 <= at && at < a.rhs.1)
                            && self.ctors.iter().any(|((s, e), ..)| {
                                *s <= a.at && a.at <= *e && !(*s <= at && at <= *e)
                            })
                    })
            })
            .map(|a| a.rhs)
    }

    fn call_param(&self, name: &str, at: usize) -> Option<String> {
        // The innermost function around `at` that has the parameter.
        let func_at = self.func_at.get_or_init(|| self.index_funcs());
        let f = *func_at.get(at).filter(|&&f| f != u32::MAX)?;
        let (_, function, params) = &self.funcs[f as usize];
        let i = params.iter().position(|p| p == name)?;
        Some(call_arg_name(function, i))
    }

    fn ctor_param(&self, name: &str, at: usize) -> Option<String> {
        self.ctors.iter().find_map(|((a, b), class, names)| {
            let i = names.iter().position(|n| n == name)?;
            (*a <= at && at <= *b).then(|| ctor_arg_name(class, i))
        })
    }

    fn is_param(&self, name: &str, at: usize) -> bool {
        self.params
            .get(name)
            .is_some_and(|v| v.iter().any(|(a, b)| *a <= at && at <= *b))
    }

    fn function(&self, name: &str) -> Option<(Vec<String>, (usize, usize))> {
        self.functions.get(name).cloned()
    }

    fn reassigned(&self, name: &str, at: usize) -> Vec<(usize, usize)> {
        let Some(base) = self.last(name, at) else {
            return Vec::new();
        };
        let entries = self.by_name.get(name).map_or(&[][..], Vec::as_slice);
        entries
            .iter()
            .map(|&k| &self.list[k as usize])
            .filter(|a| {
                a.name == name
                    && base.at < a.at
                    && a.at < at
                    && base.block.0 < a.block.0
                    && a.block.1 <= base.block.1
                    && !(a.block.0 <= at && at <= a.block.1)
            })
            .map(|a| a.rhs)
            .collect()
    }

    fn branches(&self, name: &str) -> Option<Branches> {
        self.branches.get(name).cloned()
    }
}

/// The expressions a function body returns: the one of a body with one `return`, or the
/// (at most [`MAX_RETURNS`]) of a short body that picks among a few (`if v := os.Getenv(k);
/// v != "" { return v }; return d`), which the evaluator reads by their shape.
fn returned_exprs(t: &Tokens, body: (usize, usize), style: &StmtStyle) -> Vec<(usize, usize)> {
    let (a, b) = body;
    if !t.is_punct(a, b'{') && style.braces {
        return Vec::new();
    }
    // Helpers worth inlining are short; a long body is never one, and scanning every nested
    // body whole would make deeply nested code quadratic.
    const MAX_BODY_TOKENS: usize = 512;
    if b.saturating_sub(a) > MAX_BODY_TOKENS {
        return Vec::new();
    }
    let from = if t.is_punct(a, b'{') { a + 1 } else { a };
    let returns: Vec<usize> = (from..b.min(t.len()))
        .filter(|&k| t.kw(k, "return"))
        .take(MAX_RETURNS + 1)
        .collect();
    if returns.len() > MAX_RETURNS {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(returns.len());
    for r in returns {
        let end = stmt_end(t, r + 1, style, b);
        if end <= r + 1 {
            return Vec::new();
        }
        out.push((r + 1, end));
    }
    out
}

/// The most `return`s a function read by its shape may have.
const MAX_RETURNS: usize = 3;

/// True when token `i` is a plain assignment `=` (or Go's `:=`), not `==`, `=>`, `<=`, `!=`,
/// `+=` and the like.
fn is_assign_eq(t: &Tokens, i: usize) -> bool {
    if !t.is_punct(i, b'=') {
        return false;
    }
    if t.joined(i) && matches!(t.punct(i + 1), b'=' | b'>' | b'~') {
        return false;
    }
    if i > 0 && t.joined(i - 1) {
        let p = t.punct(i - 1);
        if matches!(
            p,
            b'=' | b'!'
                | b'<'
                | b'>'
                | b'+'
                | b'-'
                | b'*'
                | b'/'
                | b'%'
                | b'&'
                | b'|'
                | b'^'
                | b'.'
                | b'?'
                | b'~'
        ) {
            return false;
        }
    }
    true
}

/// Go's `:=` is `:` `=` written together.
fn is_go_define(t: &Tokens, i: usize) -> bool {
    i > 0 && t.is_punct(i - 1, b':') && t.joined(i - 1)
}

fn assignment_at(
    t: &Tokens,
    eq: usize,
    style: &StmtStyle,
    block: (usize, usize),
    top_level: bool,
    container: Option<String>,
) -> Option<Assign> {
    let lhs_end = if is_go_define(t, eq) { eq - 1 } else { eq };
    let start = stmt_start(t, lhs_end, style, block.0);
    if start >= lhs_end {
        return None;
    }
    // A keyword argument (`f(a=1)`) or a default parameter sits inside brackets: the statement
    // start would be the bracket itself.
    if start > 0 && matches!(t.punct(start - 1), b'(' | b'[') {
        return None;
    }
    // Go `if v := os.Getenv("T"); v != "" {`: the name is visible in the block around.
    let start = if style.name_before_type
        && is_go_define(t, eq)
        && t.ident(start).is_some_and(|w| w == "if" || w == "switch")
        && lhs_end == start + 2
    {
        start + 1
    } else {
        start
    };
    if let Some(w) = t.ident(start)
        && NOT_STATEMENTS.contains(&w)
    {
        return None;
    }
    // No groups or commas on the left: destructuring, indexing and multi-assignments are
    // left to the language extractors.
    let mut k = start;
    let mut colon = None;
    while k < lhs_end {
        if t.is_opener(k) || t.is_punct(k, b',') {
            // Generic types on the left (`List<String> x =`) are fine; brackets are not.
            if t.is_punct(k, b'[') && t.is_punct(k + 1, b']') {
                k += 2;
                continue;
            }
            return None;
        }
        if colon.is_none()
            && t.is_punct(k, b':')
            && !t.op2(k, b"::")
            && !(k > 0 && t.op2(k - 1, b"::"))
        {
            colon = Some(k);
        }
        k += 1;
    }
    let name_end = colon.unwrap_or(lhs_end);
    let (name, at) = if style.name_before_type
        && colon.is_none()
        && t.ident(start).is_some_and(|w| w == "var" || w == "const")
    {
        let at = start + 1;
        (t.ident(at)?.to_string(), at)
    } else {
        member_path_before(t, start, name_end)?
    };
    if DECL_WORDS.contains(&name.as_str()) {
        return None;
    }
    let rhs_start = eq + 1;
    let rhs_end = stmt_end(t, rhs_start, style, block.1);
    if rhs_end <= rhs_start {
        return None;
    }
    Some(Assign {
        name,
        at,
        rhs: (rhs_start, rhs_end),
        block,
        top_level,
        container,
    })
}

/// The member path (`a`, `this.a`, `self.a.b`, `$this->a`, `Cls::A`) ending just before
/// `end`, and the token of its last segment.
fn member_path_before(t: &Tokens, start: usize, end: usize) -> Option<(String, usize)> {
    let last = end.checked_sub(1)?;
    t.ident(last)?;
    let mut segs = vec![t.text(last)];
    let mut k = last;
    while k >= start + 2 {
        let sep = k - 1;
        if (t.is_punct(sep, b'.') || t.is(sep, "->") || t.is(sep, "?.")) && t.ident(k - 2).is_some()
        {
            segs.push(t.text(k - 2));
            k -= 2;
        } else if sep >= 1
            && t.is_punct(sep, b'>')
            && t.is_punct(sep - 1, b'-')
            && t.ident(sep.checked_sub(2)?).is_some()
        {
            segs.push(t.text(sep - 2));
            k = sep - 2;
        } else {
            break;
        }
    }
    segs.reverse();
    Some((segs.join("."), last))
}

/// How far back a left-hand side may reach and how far a right-hand side may run, in
/// tokens (groups count as one): assignments worth reading are short, and the bounds keep a
/// file of thousands of `=` on one line linear.
const LHS_MAX: usize = 24;
const RHS_MAX: usize = 256;

/// The first token of the statement that ends at `end` (exclusive); `end` itself when the
/// start is further back than [`LHS_MAX`] tokens.
fn stmt_start(t: &Tokens, end: usize, style: &StmtStyle, floor: usize) -> usize {
    let floor = floor.max(end.saturating_sub(LHS_MAX * 4));
    let mut steps = 0;
    let mut k = end;
    while k > floor {
        steps += 1;
        if steps > LHS_MAX {
            return end;
        }
        let p = k - 1;
        if matches!(t.punct(p), b';' | b'{' | b'}') {
            return k;
        }
        if style.newline_ends && t.nl_before(k) && k < end && !continues_from(t, p) {
            return k;
        }
        if t.is_closer(p) {
            match t.open_of(p) {
                Some(o) if o >= floor => {
                    k = o;
                    continue;
                }
                _ => return k,
            }
        }
        if p == floor && t.is_opener(p) {
            return k;
        }
        k = p;
    }
    if t.is_opener(floor) && floor < end {
        floor + 1
    } else {
        floor
    }
}

/// The end (exclusive) of the statement whose expression starts at `s`.
fn stmt_end(t: &Tokens, s: usize, style: &StmtStyle, limit: usize) -> usize {
    let limit = limit.min(t.len());
    let mut j = s;
    let mut steps = 0;
    while j < limit {
        steps += 1;
        if steps > RHS_MAX {
            return j;
        }
        if matches!(t.punct(j), b';' | b'}')
            || (t.is_closer(j) && t.open_of(j).is_none_or(|o| o < s))
        {
            return j;
        }
        if j > s
            && style.newline_ends
            && t.nl_before(j)
            && !continues_from(t, j - 1)
            && !continues_into(t, j)
        {
            return j;
        }
        j = t.skip_group(j).min(limit.max(j + 1));
    }
    j.min(limit)
}

/// True when token `p`, the last of a line, leaves the expression open (`+`, `,`, `=`, `.`,
/// `||`, `(`).
fn continues_from(t: &Tokens, p: usize) -> bool {
    matches!(
        t.punct(p),
        b'+' | b'-'
            | b'*'
            | b'/'
            | b'%'
            | b','
            | b'='
            | b'.'
            | b'('
            | b'['
            | b'{'
            | b'&'
            | b'|'
            | b'?'
    ) || t.is_any(p, &["||", "&&", "??", "?:", "=>", "->"])
        || t.kw(p, "or")
        || t.kw(p, "and")
}

/// True when token `j`, the first of a line, continues the expression above (`.method()`,
/// `+ x`, `?: d`, `|| d`).
fn continues_into(t: &Tokens, j: usize) -> bool {
    matches!(
        t.punct(j),
        b'.' | b'+' | b'?' | b')' | b']' | b':' | b'|' | b'&'
    ) || t.is_any(j, &["?.", "?:", "??", "||", "&&", "->"])
}

/// The class, object, struct, interface, enum or impl whose body `{` is at `open`.
fn container_of(t: &Tokens, open: usize) -> Option<String> {
    let mut k = open;
    let floor = open.saturating_sub(48);
    while k > floor {
        k -= 1;
        if matches!(t.punct(k), b';' | b'{' | b'}') {
            return None;
        }
        if t.is_closer(k)
            && let Some(o) = t.open_of(k)
        {
            k = o;
            continue;
        }
        // The length and first byte before the words: most names are none of them, and each
        // string comparison is a call at opt-level "z".
        if let Some(w) = t.ident(k)
            && matches!(w.len(), 4..=6 | 9)
            && matches!(
                w.as_bytes()[0],
                b'c' | b'o' | b's' | b'i' | b'e' | b'r' | b't'
            )
            && matches!(
                w,
                "class" | "object" | "struct" | "interface" | "enum" | "record" | "trait" | "impl"
            )
        {
            let mut n = k + 1;
            // `impl<T> Foo`, `enum class Foo`.
            n = t.skip_angles(n, open);
            while t.kw(n, "class") {
                n += 1;
            }
            return t.ident(n).map(str::to_string);
        }
    }
    None
}

/// The body `{…}` of a function whose parameter list closes at `close` (a return type or
/// `throws` clause may come between), as a token range.
fn body_after(t: &Tokens, close: usize) -> Option<(usize, usize)> {
    let mut k = close + 1;
    let limit = (close + 24).min(t.len());
    while k < limit {
        if t.is_punct(k, b'{') {
            return Some((k, t.close_or_end(k)));
        }
        if matches!(t.punct(k), b';' | b'}' | b'=' | b')') && !t.is(k, "=>") {
            return None;
        }
        if t.is(k, "=>") {
            // An arrow function: its body is the expression or block after the arrow.
            return if t.is_punct(k + 1, b'{') {
                Some((k + 1, t.close_or_end(k + 1)))
            } else {
                None
            };
        }
        k = t.skip_group(k);
    }
    None
}

/// The body of a `def name(…):` (Python) or `def name(…)` (Ruby) whose parameters open at
/// `open`: the tokens up to the end of its indented block.
fn indented_body(t: &Tokens, open: usize, close: usize) -> Option<(usize, usize)> {
    if open < 2 || !(t.kw(open - 2, "def") || t.kw(open - 1, "lambda")) {
        return None;
    }
    let end_line = t.lx.indent_block_end(t.line(open));
    let end = t.toks.partition_point(|x| x.line <= end_line);
    Some((close + 1, end.max(close + 1)))
}

/// The name a parameter declares: `name`, `name: T`, `T name`, `name T` (Go, where
/// `name_before_type` says so), `$name`, `self`; `None` for anything else.
fn param_name<'a>(
    t: &Tokens<'_, 'a>,
    a: usize,
    b: usize,
    name_before_type: bool,
) -> Option<&'a str> {
    let end = (a..b)
        .find(|&k| t.is_punct(k, b'=') || (t.is_punct(k, b':') && !t.op2(k, b"::")))
        .unwrap_or(b);
    if end == a {
        return None;
    }
    // `name: T` → the first identifier; `T name` (Java/C#/PHP) and `T name = default` → the
    // last before the `=`, which is also the name of a plain `name = default`.
    // A nullable or by-reference mark may come first (`?Client $c`, `&$out`).
    let a = if matches!(t.punct(a), b'?' | b'&') && end > a + 1 {
        a + 1
    } else {
        a
    };
    let first = t.ident(a)?;
    if (end < b && !t.is_punct(end, b'=')) || end == a + 1 || name_before_type {
        return Some(first);
    }
    let last = (a..end).rev().find_map(|k| t.ident(k))?;
    Some(last)
}

/// The indentation (bytes of leading whitespace) of token `i`'s line.
fn line_indent(t: &Tokens, i: usize) -> usize {
    let line = t.line(i);
    let (start, _) = t.lx.line_range(line);
    t.lx.text[start..]
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::tokens::Rules;
    use crate::index::lex::{Syntax, lex};

    fn names(
        syntax: Syntax,
        rules: &Rules,
        style: &StmtStyle,
        src: &str,
    ) -> Vec<(String, bool, Option<String>, String)> {
        let lx = lex(syntax, src);
        let t = Tokens::new(&lx, rules);
        let a = Assignments::scan(&t, style);
        a.list
            .iter()
            .map(|x| {
                let rhs: Vec<&str> = (x.rhs.0..x.rhs.1).map(|k| t.text(k)).collect();
                (
                    x.name.clone(),
                    x.top_level,
                    x.container.clone(),
                    rhs.join(" "),
                )
            })
            .collect()
    }

    #[test]
    fn javascript_and_typescript_assignments() {
        let got = names(
            Syntax::JS,
            &Rules::JS,
            &StmtStyle::NEWLINE,
            "const catalogueHost = process.env.CATALOGUE_HOST || 'catalogue'\nlet url: string = `${base}/x`;\nfunction f(a, b = 2) {\n  const local = a + '/y'\n  if (a == b) {}\n}\nclass C {\n  constructor(base) { this.base = base }\n}\n",
        );
        assert_eq!(
            got,
            vec![
                (
                    "catalogueHost".into(),
                    true,
                    None,
                    "process . env . CATALOGUE_HOST || 'catalogue'".into()
                ),
                ("url".into(), true, None, "`${base}/x`".into()),
                ("local".into(), false, None, "a + '/y'".into()),
                ("this.base".into(), false, None, "base".into()),
            ]
        );
    }

    #[test]
    fn go_java_python_and_continued_lines() {
        let go = names(
            Syntax::GO,
            &Rules::C_FAMILY,
            &StmtStyle::GO,
            "var ordersTopic string = getenv(\"T\",\n  \"orders\")\nfunc main() {\n  url := base +\n    \"/x\"\n  x = y == z\n}\n",
        );
        assert_eq!(go[0].0, "ordersTopic");
        assert!(go[0].1);
        assert!(go[0].3.ends_with("\"orders\" )"));
        assert_eq!(go[1], ("url".into(), false, None, "base + \"/x\"".into()));
        assert_eq!(go[2].0, "x");
        let java = names(
            Syntax::JAVA,
            &Rules::JVM,
            &StmtStyle::SEMICOLON,
            "class Topics {\n  public static final String ORDERS = \"orders\";\n  void f() { String u = base\n + \"/x\"; }\n}\n",
        );
        assert_eq!(
            java[0],
            (
                "ORDERS".into(),
                true,
                Some("Topics".into()),
                "\"orders\"".into()
            )
        );
        assert_eq!(java[1].0, "u");
        assert!(!java[1].1);
        let py = names(
            Syntax::PYTHON,
            &Rules::SCRIPT,
            &StmtStyle::INDENT,
            "USER = os.getenv('USER_HOST', 'user')\ndef f(x):\n    u = 'http://' + USER\n    g(a=1)\n",
        );
        assert_eq!(py.len(), 2);
        assert_eq!(py[0].0, "USER");
        assert!(py[0].1);
        assert_eq!(py[1].0, "u");
        assert!(!py[1].1);
    }

    #[test]
    fn lookups_scope_and_params_and_export() {
        let src = "const BASE = 'http://cart:8080'\nfunction get(id) {\n  const url = BASE + '/cart/' + id\n  return fetch(url)\n}\n";
        let lx = lex(Syntax::JS, src);
        let t = Tokens::new(&lx, &Rules::JS);
        let a = Assignments::scan(&t, &StmtStyle::NEWLINE);
        let fetch_arg = (0..t.len())
            .find(|&k| t.is(k, "url") && t.is_punct(k + 1, b')'))
            .unwrap();
        let v = eval(&t, (fetch_arg, fetch_arg + 1), &ExprRules::JS, &a);
        // The local is read; the top-level name stays a reference for the graph.
        assert_eq!(v.display(), "{BASE}/cart/{}");
        let mut facts = FileFacts::default();
        a.export(&t, &ExprRules::JS, &mut facts);
        assert_eq!(facts.bindings.len(), 1);
        assert_eq!(facts.bindings[0].name, "BASE");
    }

    #[test]
    fn go_parameters_are_named_before_their_types() {
        let src = "package p\nfunc get(base, id string, c *http.Client) {\n  u := base + \"/orders/\" + id\n  c.Get(u)\n}\n";
        let lx = lex(Syntax::GO, src);
        let t = Tokens::new(&lx, &Rules::C_FAMILY);
        let a = Assignments::scan(&t, &StmtStyle::GO);
        let at = (0..t.len()).rfind(|&k| t.is(k, "u")).unwrap();
        assert!(a.is_param("id", at) && a.is_param("base", at) && a.is_param("c", at));
        assert!(!a.is_param("string", at));
        let v = eval(&t, (at, at + 1), &ExprRules::GO, &a);
        assert_eq!(v.display(), "{}/orders/{}");
    }

    /// `(name, value as displayed, line)` of each call-site argument `src` exports.
    fn call_args_of(
        syntax: Syntax,
        rules: &Rules,
        style: &StmtStyle,
        er: &ExprRules,
        src: &str,
    ) -> Vec<(String, String, u32)> {
        let lx = lex(syntax, src);
        let t = Tokens::new(&lx, rules);
        let a = Assignments::scan(&t, style);
        let mut facts = FileFacts::default();
        a.export(&t, er, &mut facts);
        facts
            .call_args
            .iter()
            .map(|b| (b.name.clone(), b.value.display(), b.line))
            .collect()
    }

    #[test]
    fn url_arguments_of_calls_are_exported_and_declarations_are_not() {
        let js = "function get(url) {\n  return request.get(url);\n}\n\
helpers.simpleHttpRequest(endpoints.catalogueUrl + '/catalogue/' + id, res, next);\n\
getJson(`/orders/${id}`);\n\
cache.get(key);\n\
if (url) { log('x'); }\n\
class A {\n  fetch(path: string): Promise<void> {\n    return x;\n  }\n}\n";
        let s = |n: &str, v: &str, l: u32| (n.to_string(), v.to_string(), l);
        assert_eq!(
            call_args_of(
                Syntax::JS,
                &Rules::JS,
                &StmtStyle::NEWLINE,
                &ExprRules::JS,
                js
            ),
            vec![
                s(
                    "call simpleHttpRequest#0",
                    "{endpoints.catalogueUrl}/catalogue/{id}",
                    4
                ),
                s("call getJson#0", "/orders/{id}", 5),
            ]
        );
        let go = "package c\nfunc (c *Client) get(ctx context.Context, path string) error {\n\treturn nil\n}\nfunc (c *Client) Tags(ctx context.Context) error {\n\treturn c.get(ctx, \"/tags\")\n}\n";
        assert_eq!(
            call_args_of(
                Syntax::GO,
                &Rules::C_FAMILY,
                &StmtStyle::GO,
                &ExprRules::GO,
                go
            ),
            vec![s("call get#1", "/tags", 6)]
        );
        let cs = "class S {\n  Task<T> GetAsync<T>(string uri) { return null; }\n  void M() { _provider.GetAsync<Order[]>($\"{Base}/orders\"); }\n}\n";
        assert_eq!(
            call_args_of(
                Syntax::CSHARP,
                &Rules::CSHARP,
                &StmtStyle::SEMICOLON,
                &ExprRules::CSHARP,
                cs
            ),
            vec![s("call GetAsync#0", "{Base}/orders", 3)]
        );
    }

    #[test]
    fn urlish_words() {
        for w in [
            "url",
            "baseUrl",
            "CATALOGUE_URI",
            "endpoints",
            "OrdersEndpoint",
            "uRl",
        ] {
            assert!(urlish_word(w.as_bytes()), "{w}");
        }
        for w in ["", "u", "ur", "cursor", "user", "endpoin", "Uranus", "ÜRL"] {
            assert!(!urlish_word(w.as_bytes()), "{w}");
        }
    }

    #[test]
    fn a_parameter_of_a_named_function_is_what_its_callers_pass() {
        let src = "helpers.get = function (url, res) {\n  request.get(url);\n};\n\
const post = async (path, body) => {\n  return fetch(BASE + path);\n};\n\
export function put<T>(p: string) {\n  return fetch(p);\n}\n\
items.map(function (u) {\n  return fetch(u);\n});\n";
        let lx = lex(Syntax::JS, src);
        let t = Tokens::new(&lx, &Rules::JS);
        let a = Assignments::scan(&t, &StmtStyle::NEWLINE);
        let read = |name: &str, nth: usize| {
            let at = (0..t.len()).filter(|&k| t.is(k, name)).nth(nth).unwrap();
            let v = eval(&t, (at, at + 1), &ExprRules::JS, &a);
            v.parts
                .iter()
                .map(|p| match p {
                    Part::Ref { name, .. } => name.clone(),
                    Part::Dynamic => "{}".to_string(),
                    _ => "?".to_string(),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(read("url", 1), vec!["call get#0"]);
        assert_eq!(read("path", 1), vec!["call post#0"]);
        assert_eq!(read("p", 1), vec!["call put#0"]);
        // An anonymous function's parameter has no callers to read.
        assert_eq!(read("u", 1), vec!["{}"]);
    }

    #[test]
    fn nested_calls_are_read_for_url_arguments_in_linear_time() {
        // `f(f(f(…baseUrl…)))`: each call looked for a URL-like token through all it encloses
        // (4,000 deep, a 12 KB file: ~2.5 s unoptimised; 300 KB of it, minutes).
        let n = 20_000;
        let src = format!("{}baseUrl{}\n", "f(\n".repeat(n), ")".repeat(n));
        let started = std::time::Instant::now();
        let args = call_args_of(
            Syntax::JS,
            &Rules::JS,
            &StmtStyle::NEWLINE,
            &ExprRules::JS,
            &src,
        );
        assert!(started.elapsed().as_secs() < 3, "{:?}", started.elapsed());
        assert!(args.iter().any(|(name, ..)| name == "call f#0"), "{args:?}");
    }

    #[test]
    fn a_parameter_is_read_in_the_innermost_function_in_time_linear_in_the_functions() {
        // Functions nested in functions: `inner`'s parameter shadows `outer`'s, after
        // `inner`'s body `url` is `outer`'s again, outside both it is no parameter.
        let src = "function outer(url) {\n  function inner(x, url) {\n    fetch(url);\n  }\n  \
fetch(url);\n}\nfetch(url);\n";
        let lx = lex(Syntax::JS, src);
        let t = Tokens::new(&lx, &Rules::JS);
        let a = Assignments::scan(&t, &StmtStyle::NEWLINE);
        let uses: Vec<usize> = (0..t.len()).filter(|&k| t.is(k, "url")).collect();
        let params: Vec<_> = uses[2..].iter().map(|&k| a.call_param("url", k)).collect();
        assert_eq!(
            params,
            [
                Some("call inner#1".to_string()),
                Some("call outer#0".to_string()),
                None
            ]
        );
        // 30,000 nested helpers each reading its parameter: a scan of the function list per
        // read made this quadratic (~10 s unoptimised); a lookup is one index now (~0.3 s).
        let n = 30_000;
        let src = format!(
            "{}{}",
            "function g(url){ fetch(url);\n".repeat(n),
            "}\n".repeat(n)
        );
        let started = std::time::Instant::now();
        let lx = lex(Syntax::JS, &src);
        let t = Tokens::new(&lx, &Rules::JS);
        let a = Assignments::scan(&t, &StmtStyle::NEWLINE);
        let mut facts = FileFacts::default();
        a.export(&t, &ExprRules::JS, &mut facts);
        let last = (0..t.len()).rev().find(|&k| t.is(k, "url")).unwrap();
        assert_eq!(a.call_param("url", last).as_deref(), Some("call g#0"));
        assert!(started.elapsed().as_secs() < 3, "{:?}", started.elapsed());
    }

    #[test]
    fn typed_parameters_with_defaults_are_named_by_the_last_word() {
        let src = "<?php\nfunction f(string $sku, int $score = 5, $plain = 1, ?Client $c = null) {\n  $x = 1;\n}\n";
        let lx = lex(Syntax::PHP, src);
        let t = Tokens::new(&lx, &Rules::SCRIPT);
        let a = Assignments::scan(&t, &StmtStyle::SEMICOLON);
        let at = (0..t.len()).rfind(|&k| t.is(k, "$x")).unwrap();
        for p in ["$sku", "$score", "$plain", "$c"] {
            assert!(a.is_param(p, at), "{p}");
        }
        assert!(!a.is_param("int", at) && !a.is_param("Client", at));
    }

    #[test]
    fn junk_never_panics() {
        for src in [
            "=",
            "a =",
            "= b",
            "x := ",
            "{ = }",
            "(a = b",
            "a.b.c = = d",
            "é = ü",
            "$a->b = 1;",
            "-> = ",
        ] {
            for (syntax, rules, style) in [
                (Syntax::JS, Rules::JS, StmtStyle::NEWLINE),
                (Syntax::GO, Rules::C_FAMILY, StmtStyle::GO),
                (Syntax::PYTHON, Rules::SCRIPT, StmtStyle::INDENT),
                (Syntax::PHP, Rules::SCRIPT, StmtStyle::SEMICOLON),
            ] {
                let lx = lex(syntax, src);
                let t = Tokens::new(&lx, &rules);
                let a = Assignments::scan(&t, &style);
                let mut f = FileFacts::default();
                a.export(&t, &ExprRules::JS, &mut f);
            }
        }
    }
}
