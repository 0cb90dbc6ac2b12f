//! The one expression evaluator every extractor uses for what a string argument is: a topic
//! name, a URL, a constant's value. It reads a token range of the shared view
//! ([`Tokens`]) into a [`Value`] — literals, concatenation, interpolation, format calls,
//! environment and configuration lookups with their fallbacks, and names left to the graph —
//! with [`ExprRules`] saying how each language writes those.
//!
//! ```ignore
//! use mesh_mcp::index::facts::{Part, Value};
//! use mesh_mcp::index::lang::tokens::{Rules, Tokens};
//! use mesh_mcp::index::lang::value::{ExprRules, NoScope, eval};
//! use mesh_mcp::index::lex::{Syntax, lex};
//! let lx = lex(Syntax::JS, "'http://' + (process.env.CATALOGUE_HOST || 'catalogue') + ':8080/product/' + sku");
//! let t = Tokens::new(&lx, &Rules::JS);
//! let v = eval(&t, (0, t.len()), &ExprRules::JS, &NoScope);
//! assert_eq!(v.display(), "http://{env CATALOGUE_HOST}:8080/product/{sku}");
//! assert!(matches!(&v.parts[1], Part::Env { default: Some(d), .. } if d == "catalogue"));
//! ```

use super::tokens::{TokKind, Tokens};
use crate::index::facts::{Part, Value};

/// How deep the evaluator follows local names and nested expressions.
const MAX_DEPTH: u8 = 8;
/// How many sub-expressions one evaluation may visit: `a = b + b + b; b = c + c + c; …`
/// must stay linear.
const MAX_STEPS: u32 = 256;

/// How a language writes string interpolation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interp {
    /// None (Go, Java, C, C++).
    None,
    /// `` `…${expr}…` `` template literals (JavaScript, TypeScript).
    JsTemplate,
    /// `f"…{expr}…"` (Python).
    PythonF,
    /// `$"…{expr}…"` (C#).
    CSharp,
    /// `"…$name…${expr}…"` in every double-quoted string (Kotlin, Groovy, Dart), or after an
    /// `s`/`f` interpolator (Scala).
    Dollar,
    /// `"…\(expr)…"` (Swift).
    Swift,
    /// `"…#{expr}…"` in double quotes (Ruby).
    Ruby,
    /// `"…$name…{$expr}…"` in double quotes (PHP).
    Php,
    /// `format!("{}/{name}", a)` is a format call; plain strings are literal (Rust).
    Rust,
}

/// How a format function writes its placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// `%s`, `%d`, `%v`, `%+v`, `%q` … (`fmt.Sprintf`, `String.format`, `sprintf`).
    Printf,
    /// `{}` positional and `{name}` named (`format!`, Python `str.format`, SLF4J).
    Braces,
    /// `{0}`, `{1}` (C# `string.Format`, Java `MessageFormat.format`).
    Indexed,
}

/// The per-language vocabulary of the evaluator. Callee names are matched on the last one
/// or two segments of a dotted chain (`os.Getenv`, `Getenv`).
#[derive(Debug, Clone, Copy)]
pub struct ExprRules {
    /// Binary operators that concatenate strings (`+`; PHP `.`).
    pub concat: &'static [&'static str],
    /// Operators whose right side is the left side's fallback (`||`, `??`, `?:`, `or`).
    pub fallback: &'static [&'static str],
    pub interp: Interp,
    /// Calls that read an environment variable: (callee, index of the default argument).
    pub env_calls: &'static [(&'static str, Option<usize>)],
    /// Objects indexed or dotted by the variable name (`process.env.X`, `os.environ["X"]`).
    pub env_objects: &'static [&'static str],
    /// Calls that read a configuration key: (callee, index of the default argument).
    pub config_calls: &'static [(&'static str, Option<usize>)],
    /// Objects indexed by a configuration key (`app.config["X"]`, `Configuration["X"]`).
    pub config_objects: &'static [&'static str],
    /// Format functions: (callee, placeholder style). The format string is the first string
    /// argument; the values are the arguments after it.
    pub format_calls: &'static [(&'static str, Fmt)],
    /// Methods that give a fallback for the value before them (`.orElse("d")`,
    /// `.unwrap_or("d")`, `.getOrElse("d")`, `.get("k", "d")` is a config call).
    pub fallback_methods: &'static [&'static str],
    /// Calls that pass their argument through (`Optional.ofNullable(x)`, `String(x)`,
    /// `encodeURIComponent` is not one: it hides the value).
    pub wrappers: &'static [&'static str],
    /// Names that refer to the object itself in a member path (`this`, `self`, `$this`).
    pub self_names: &'static [&'static str],
}

const ENV_HELPER_DEFAULT: Option<usize> = Some(1);

impl ExprRules {
    /// JavaScript and TypeScript.
    pub const JS: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &["||", "??"],
        interp: Interp::JsTemplate,
        env_calls: &[],
        env_objects: &["process.env", "import.meta.env", "env"],
        config_calls: &[
            ("config.get", Some(1)),
            ("configService.get", Some(1)),
            ("this.configService.get", Some(1)),
            ("this.config.get", Some(1)),
        ],
        config_objects: &[],
        format_calls: &[("util.format", Fmt::Printf), ("format", Fmt::Printf)],
        fallback_methods: &[],
        wrappers: &["String", "encodeURI", "new URL"],
        self_names: &["this"],
    };

    /// Python.
    pub const PYTHON: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &["or"],
        interp: Interp::PythonF,
        env_calls: &[
            ("os.getenv", Some(1)),
            ("getenv", Some(1)),
            ("os.environ.get", Some(1)),
            ("environ.get", Some(1)),
            ("env", Some(1)),
            ("env.str", Some(1)),
        ],
        env_objects: &["os.environ", "environ"],
        config_calls: &[
            ("app.config.get", Some(1)),
            ("current_app.config.get", Some(1)),
            ("config.get", Some(1)),
            ("settings.get", Some(1)),
        ],
        config_objects: &["app.config", "current_app.config", "config", "settings"],
        format_calls: &[],
        fallback_methods: &[],
        wrappers: &["str"],
        self_names: &["self", "cls"],
    };

    /// Go.
    pub const GO: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &[],
        interp: Interp::None,
        env_calls: &[
            ("os.Getenv", None),
            ("Getenv", None),
            ("os.LookupEnv", None),
        ],
        env_objects: &[],
        config_calls: &[
            ("viper.GetString", None),
            ("viper.Get", None),
            ("cfg.GetString", None),
        ],
        config_objects: &[],
        format_calls: &[("fmt.Sprintf", Fmt::Printf), ("Sprintf", Fmt::Printf)],
        fallback_methods: &[],
        wrappers: &["string"],
        self_names: &[],
    };

    /// Java.
    pub const JAVA: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &[],
        interp: Interp::None,
        env_calls: &[
            ("System.getenv", None),
            ("getenv", None),
            ("System.getProperty", Some(1)),
            ("getProperty", Some(1)),
        ],
        env_objects: &[],
        config_calls: &[
            ("env.getProperty", Some(1)),
            ("environment.getProperty", Some(1)),
            ("config.getString", None),
        ],
        config_objects: &[],
        format_calls: &[
            ("String.format", Fmt::Printf),
            ("format", Fmt::Printf),
            ("formatted", Fmt::Printf),
            ("MessageFormat.format", Fmt::Indexed),
        ],
        fallback_methods: &["orElse", "getOrDefault", "orElseGet"],
        wrappers: &[
            "Optional.ofNullable",
            "Optional.of",
            "String.valueOf",
            "Objects.requireNonNullElse",
            "URI.create",
            "new URI",
            "new URL",
            "URI",
        ],
        self_names: &["this"],
    };

    /// Kotlin (and Groovy-like `$` templates).
    pub const KOTLIN: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &["?:"],
        interp: Interp::Dollar,
        env_calls: JAVA_ENV_CALLS,
        env_objects: &[],
        config_calls: ExprRules::JAVA.config_calls,
        config_objects: &[],
        format_calls: &[("String.format", Fmt::Printf), ("format", Fmt::Printf)],
        fallback_methods: &["orElse", "getOrDefault", "getOrElse"],
        wrappers: &["URI.create", "URI", "URL", "Optional.ofNullable"],
        self_names: &["this"],
    };

    /// Scala.
    pub const SCALA: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &[],
        interp: Interp::Dollar,
        env_calls: &[
            ("sys.env.get", None),
            ("sys.env", None),
            ("System.getenv", None),
        ],
        env_objects: &["sys.env"],
        config_calls: &[("config.getString", None), ("conf.getString", None)],
        config_objects: &[],
        format_calls: &[("format", Fmt::Printf)],
        fallback_methods: &["getOrElse", "orElse"],
        wrappers: &["Option"],
        self_names: &["this"],
    };

    /// C#.
    pub const CSHARP: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &["??"],
        interp: Interp::CSharp,
        env_calls: &[
            ("Environment.GetEnvironmentVariable", None),
            ("GetEnvironmentVariable", None),
        ],
        env_objects: &[],
        config_calls: &[
            ("Configuration.GetValue", Some(1)),
            ("configuration.GetValue", Some(1)),
            ("config.GetValue", Some(1)),
            ("GetValue", Some(1)),
            ("GetConnectionString", None),
        ],
        config_objects: &[
            "Configuration",
            "configuration",
            "builder.Configuration",
            "config",
            "_configuration",
            "_config",
        ],
        format_calls: &[
            ("string.Format", Fmt::Indexed),
            ("String.Format", Fmt::Indexed),
        ],
        fallback_methods: &[],
        wrappers: &["new Uri"],
        self_names: &["this"],
    };

    /// Swift.
    pub const SWIFT: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &["??"],
        interp: Interp::Swift,
        env_calls: &[],
        env_objects: &["ProcessInfo.processInfo.environment", "environment"],
        config_calls: &[],
        config_objects: &[],
        format_calls: &[("String", Fmt::Printf)],
        fallback_methods: &[],
        wrappers: &["URL", "URL(string:)"],
        self_names: &["self"],
    };

    /// Rust.
    pub const RUST: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &[],
        interp: Interp::Rust,
        env_calls: &[
            ("std::env::var", None),
            ("env::var", None),
            ("std::env::var_os", None),
            ("env!", None),
            ("option_env!", None),
        ],
        env_objects: &[],
        config_calls: &[],
        config_objects: &[],
        format_calls: &[("format!", Fmt::Braces)],
        fallback_methods: &["unwrap_or", "unwrap_or_else", "unwrap_or_default"],
        wrappers: &["String::from", "to_string", "to_owned"],
        self_names: &["self"],
    };

    /// C and C++.
    pub const CPP: ExprRules = ExprRules {
        concat: &["+"],
        fallback: &[],
        interp: Interp::None,
        env_calls: &[
            ("std::getenv", None),
            ("getenv", None),
            ("secure_getenv", None),
        ],
        env_objects: &[],
        config_calls: &[],
        config_objects: &[],
        format_calls: &[("fmt::format", Fmt::Braces), ("std::format", Fmt::Braces)],
        fallback_methods: &[],
        wrappers: &["std::string", "std::to_string"],
        self_names: &["this"],
    };

    /// Ruby.
    pub const RUBY: ExprRules = ExprRules {
        concat: &["+", "<<"],
        fallback: &["||"],
        interp: Interp::Ruby,
        env_calls: &[("ENV.fetch", Some(1))],
        env_objects: &["ENV"],
        config_calls: &[],
        config_objects: &["Rails.configuration", "settings"],
        format_calls: &[("format", Fmt::Printf), ("sprintf", Fmt::Printf)],
        fallback_methods: &[],
        wrappers: &["URI", "URI.parse"],
        self_names: &["self"],
    };

    /// PHP.
    pub const PHP: ExprRules = ExprRules {
        concat: &["."],
        fallback: &["?:", "??"],
        interp: Interp::Php,
        env_calls: &[("getenv", None), ("env", Some(1)), ("$_ENV", None)],
        env_objects: &["$_ENV", "$_SERVER"],
        config_calls: &[("config", Some(1))],
        config_objects: &[],
        format_calls: &[("sprintf", Fmt::Printf), ("vsprintf", Fmt::Printf)],
        fallback_methods: &[],
        wrappers: &[],
        self_names: &["$this", "self", "static"],
    };
}

const JAVA_ENV_CALLS: &[(&str, Option<usize>)] = &[
    ("System.getenv", None),
    ("getenv", None),
    ("System.getProperty", Some(1)),
];

/// What a name means at a position of the file: the evaluator asks it for the value of a
/// local variable or field before leaving the name to the graph.
pub trait Scope {
    /// The expression `name` was last given before token `at` in the scope that contains
    /// `at`, as a token range to evaluate, or `None`.
    fn lookup(&self, name: &str, at: usize) -> Option<(usize, usize)>;
    /// True when `name` is a parameter of the function around `at` (its value is run-time).
    fn is_param(&self, _name: &str, _at: usize) -> bool {
        false
    }
    /// When `name` is a parameter of a constructor around `at`, the name the graph resolves
    /// against the arguments of `new Class(…)` ([`super::bind::ctor_arg_name`]).
    fn ctor_param(&self, _name: &str, _at: usize) -> Option<String> {
        None
    }
    /// When `name` is a parameter of a named function around `at`, the name the graph
    /// resolves against the arguments of each call of it ([`super::bind::call_arg_name`]).
    fn call_param(&self, _name: &str, _at: usize) -> Option<String> {
        None
    }
    /// A function of the file by its name: its parameter names and the one expression it
    /// returns (`return $"{base}items?…"`, `=> base + "/x"`), so a helper that builds a URL or
    /// a topic is read with the caller's arguments.
    fn function(&self, _name: &str) -> Option<(Vec<String>, (usize, usize))> {
        None
    }
    /// The right-hand sides of the later assignments of `name` in blocks nested in the one of
    /// its assignment visible at `at`, which `at` is outside (`t := "d"; if v := os.Getenv("T");
    /// v != "" { t = v }`): values that replace it on some paths.
    fn reassigned(&self, _name: &str, _at: usize) -> Vec<(usize, usize)> {
        Vec::new()
    }
    /// A function of the file that returns one of a few expressions: its parameter names, its
    /// body and the returned ranges, read by their shape (an environment read with a
    /// fallback) rather than by its name.
    fn branches(&self, _name: &str) -> Option<super::bind::Branches> {
        None
    }
    /// The value of a name read in another token stream (an expression inside an
    /// interpolation is lexed on its own; its names are the file's).
    fn value_of(&self, _name: &str) -> Option<Value> {
        None
    }
}

/// The file's names, for an expression lexed on its own (inside `${…}`, `{…}`, `#{…}`):
/// each name is read in the file's token stream at the string's position.
struct Outer<'x, 't, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    rules: &'x ExprRules,
    scope: &'x dyn Scope,
    at: usize,
    overlay: &'x [(String, Value)],
    inlined: u8,
}

impl Scope for Outer<'_, '_, '_, '_> {
    fn lookup(&self, _name: &str, _at: usize) -> Option<(usize, usize)> {
        None
    }

    fn value_of(&self, name: &str) -> Option<Value> {
        let mut e = Evaluator {
            t: self.t,
            rules: self.rules,
            scope: self.scope,
            depth: 4,
            steps: MAX_STEPS / 2,
            overlay: self.overlay.to_vec(),
            inlined: self.inlined + 1,
        };
        Some(e.name(name, self.at))
    }
}

#[cfg(test)]
/// A scope that knows no names: every name is left to the graph.
pub struct NoScope;

#[cfg(test)]
impl Scope for NoScope {
    fn lookup(&self, _name: &str, _at: usize) -> Option<(usize, usize)> {
        None
    }
}

/// The longest expression the evaluator reads, in tokens: a URL or a topic is short, and a
/// longer range (an unclosed call running to the end of a file) is not one.
const MAX_TOKENS: usize = 512;

/// Evaluates the expression in `range` of `t`.
pub fn eval(t: &Tokens, range: (usize, usize), rules: &ExprRules, scope: &dyn Scope) -> Value {
    if range.1.saturating_sub(range.0) > MAX_TOKENS {
        return Value::dynamic();
    }
    let mut e = Evaluator {
        t,
        rules,
        scope,
        depth: 0,
        steps: 0,
        overlay: Vec::new(),
        inlined: 0,
    };
    e.expr(range.0, range.1.min(t.len()))
}

struct Evaluator<'e, 't, 'l, 'a> {
    t: &'t Tokens<'l, 'a>,
    rules: &'e ExprRules,
    scope: &'e dyn Scope,
    depth: u8,
    steps: u32,
    /// The arguments of the helper being read (`param → value`), innermost last.
    overlay: Vec<(String, Value)>,
    /// How many helpers deep the evaluation is (at most two).
    inlined: u8,
}

/// The chain of names at the start of a primary expression, and where it ends.
struct NameChain {
    /// `os.environ.get`, `process.env.X`, `this.baseUrl`, `std::env::var`.
    path: String,
    end: usize,
}

impl Evaluator<'_, '_, '_, '_> {
    fn expr(&mut self, s: usize, e: usize) -> Value {
        if s >= e || self.depth > MAX_DEPTH || self.steps > MAX_STEPS {
            return Value::dynamic();
        }
        self.steps += 1;
        self.depth += 1;
        let v = self.expr_inner(s, e);
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self, s: usize, e: usize) -> Value {
        let t = self.t;
        // Trailing `;`, `,`, `!` (Kotlin `!!`, TS non-null) are not part of the value.
        let mut e = e;
        while e > s && matches!(t.punct(e - 1), b';' | b',' | b'!') {
            e -= 1;
        }
        let mut s = s;
        // Leading `await`, `new`, `&`, `*`: the value is the rest.
        while s < e && (t.kw(s, "await") || t.is_punct(s, b'&') || t.is_punct(s, b'*')) {
            s += 1;
        }
        if s >= e {
            return Value::dynamic();
        }
        // A ternary picks at run time; a Python conditional expression too.
        if self
            .find_top(s, e, "?")
            .is_some_and(|q| self.find_top(q, e, ":").is_some())
            && !self.rules.fallback.contains(&"?:")
        {
            return Value::dynamic();
        }
        for op in self.rules.fallback {
            if let Some(k) = self.find_top(s, e, op) {
                let left = self.expr(s, k);
                let right = self.expr(k + 1, e);
                return with_fallback(left, &right);
            }
        }
        let pieces = self.split_top(s, e, self.rules.concat);
        if pieces.len() > 1 {
            let mut v = Value::default();
            for (a, b) in pieces {
                v.extend(self.expr(a, b));
            }
            return v;
        }
        // Python `"…%s…" % (a, b)`.
        if self.rules.interp == Interp::PythonF
            && let Some(k) = self.find_top(s, e, "%")
            && t.is_str(s)
            && k == s + 1
        {
            let fmt = t.str_value(s).unwrap_or_default().into_owned();
            let args = if t.is_punct(k + 1, b'(') && t.close(k + 1) == Some(e - 1) {
                t.args(k + 1)
            } else {
                vec![(k + 1, e)]
            };
            return self.format(&fmt, Fmt::Printf, &args, s);
        }
        self.primary(s, e)
    }

    fn primary(&mut self, s: usize, e: usize) -> Value {
        let t = self.t;
        // `( expr )`
        if t.is_punct(s, b'(') && t.close(s) == Some(e - 1) {
            return self.expr(s + 1, e - 1);
        }
        if t.is_str(s) {
            let mut v = self.string(s);
            let mut j = s + 1;
            // Scala `s"…"` is an identifier then a string; here the string came first.
            // `"…".format(a, b)` (Python), `"…".formatted(a)` (Java 15), `.trim()` and the like.
            while j < e && t.is_punct(j, b'.') {
                let Some(m) = t.ident(j + 1) else { break };
                let open = j + 2;
                if !t.is_punct(open, b'(') {
                    break;
                }
                let close = t.close_or_end(open);
                let args = t.args(open);
                let lit = v.as_lit().map(str::to_string);
                v = match (m, lit) {
                    ("format", Some(f)) if self.rules.interp == Interp::PythonF => {
                        self.format(&f, Fmt::Braces, &args, s)
                    }
                    ("formatted", Some(f)) => self.format(&f, Fmt::Printf, &args, s),
                    (
                        "trim" | "strip" | "lower" | "upper" | "toLowerCase" | "toUpperCase"
                        | "into" | "to_string" | "to_owned" | "as_str" | "toString",
                        _,
                    ) => v,
                    _ => Value::dynamic(),
                };
                j = close + 1;
            }
            if j >= e {
                return v;
            }
            return Value::dynamic();
        }
        if t.kind(s) == Some(TokKind::Num) && e == s + 1 {
            return Value::lit(t.text(s));
        }
        // Scala interpolators: `s"…"`, `f"…"` glued to the string.
        if t.ident(s).is_some_and(|i| matches!(i, "s" | "f" | "raw"))
            && t.is_str(s + 1)
            && t.joined(s)
            && e == s + 2
        {
            return self.interpolated(s + 1, Interp::Dollar);
        }
        let new_kw = t.kw(s, "new");
        let s0 = if new_kw { s + 1 } else { s };
        let Some(chain) = self.name_chain(s0, e) else {
            return Value::dynamic();
        };
        let path = chain.path.as_str();
        let j = chain.end;
        // A whole expression that is a name: a local, a field, a constant, an env object.
        if j == e {
            if let Some(var) = self.env_member(path) {
                return Value::env(var, None);
            }
            return self.name(path, s);
        }
        // `name[...]`: env and config objects indexed by a string.
        if t.is_punct(j, b'[') && t.close(j) == Some(e - 1) {
            let key = self.single_string(j + 1, e - 1);
            if let Some(key) = key {
                if self.rules.env_objects.contains(&path) {
                    return Value::env(key, None);
                }
                if self.rules.config_objects.iter().any(|o| path_ends(path, o)) {
                    return Value::config(key, None);
                }
            }
            return Value::dynamic();
        }
        // A call: `callee(args)` possibly followed by `.method(args)` fallbacks.
        if t.is_punct(j, b'(') || (t.is_punct(j, b'!') && t.is_punct(j + 1, b'(')) {
            let macro_bang = t.is_punct(j, b'!');
            let open = if macro_bang { j + 1 } else { j };
            let close = t.close_or_end(open);
            let args = t.args(open);
            let callee = if macro_bang {
                format!("{path}!")
            } else if new_kw {
                format!("new {path}")
            } else {
                path.to_string()
            };
            let mut v = self.call(&callee, &args);
            let mut k = close + 1;
            // Postfix fallbacks and pass-through methods.
            while k < e {
                if t.is_punct(k, b'.') || t.is(k, "?.") {
                    let Some(m) = t.ident(k + 1) else {
                        return Value::dynamic();
                    };
                    let open = k + 2;
                    if !t.is_punct(open, b'(') {
                        // `.Value`, `.String()` — Go `os.Getenv("X")` has no such; stop.
                        return Value::dynamic();
                    }
                    let close = t.close_or_end(open);
                    let margs = t.args(open);
                    if self.rules.fallback_methods.contains(&m) {
                        let fb = match margs.first() {
                            Some(&(a, b)) => {
                                // `unwrap_or_else(|| "d".into())`, `orElseGet(() -> "d")`.
                                let (a, b) = strip_closure(t, a, b);
                                self.expr(a, b)
                            }
                            None => Value::dynamic(),
                        };
                        v = with_fallback(v, &fb);
                    } else if matches!(
                        m,
                        "toString"
                            | "to_string"
                            | "to_owned"
                            | "into"
                            | "trim"
                            | "unwrap"
                            | "expect"
                            | "String"
                            | "ToString"
                            | "orEmpty"
                    ) {
                    } else {
                        return Value::dynamic();
                    }
                    k = close + 1;
                } else if t.is_punct(k, b'?') || t.is_punct(k, b'!') {
                    k += 1;
                } else {
                    return Value::dynamic();
                }
            }
            return v;
        }
        Value::dynamic()
    }

    /// The dotted (`.`, `::`, `->`, `?.`) chain of names starting at `s`, within `..e`.
    fn name_chain(&self, s: usize, e: usize) -> Option<NameChain> {
        let t = self.t;
        t.ident(s)?;
        let mut path = String::from(t.text(s));
        let mut j = s + 1;
        loop {
            if j + 1 < e && (t.is_punct(j, b'.') || t.is(j, "?.")) && t.ident(j + 1).is_some() {
                path.push('.');
                path.push_str(t.text(j + 1));
                j += 2;
            } else if j + 2 < e && t.op2(j, b"::") && t.ident(j + 2).is_some() {
                path.push_str("::");
                path.push_str(t.text(j + 2));
                j += 3;
            } else if j + 1 < e
                && (t.is(j, "::") || t.is(j, "->") || t.is(j, "?->"))
                && t.ident(j + 1).is_some()
            {
                path.push_str(if t.is(j, "::") { "::" } else { "." });
                path.push_str(t.text(j + 1));
                j += 2;
            } else if j + 2 < e
                && t.is_punct(j, b'-')
                && t.is_punct(j + 1, b'>')
                && t.joined(j)
                && t.ident(j + 2).is_some()
            {
                path.push('.');
                path.push_str(t.text(j + 2));
                j += 3;
            } else {
                break;
            }
        }
        Some(NameChain { path, end: j })
    }

    /// `process.env.X` and the like: the variable of an env object's member.
    fn env_member(&self, path: &str) -> Option<String> {
        for o in self.rules.env_objects {
            if let Some(rest) = path.strip_prefix(o).and_then(|r| r.strip_prefix('.'))
                && !rest.contains('.')
                && !rest.is_empty()
            {
                return Some(rest.to_string());
            }
        }
        None
    }

    /// A bare name or member path: a local the scope knows, a parameter (run-time), or a name
    /// left to the graph.
    fn name(&mut self, path: &str, at: usize) -> Value {
        if matches!(
            path,
            "null" | "nil" | "None" | "undefined" | "true" | "false"
        ) {
            return Value::dynamic();
        }
        let bare = self
            .rules
            .self_names
            .iter()
            .find_map(|s| path.strip_prefix(s).and_then(|r| r.strip_prefix('.')))
            .unwrap_or(path);
        // A parameter of the helper being read stands for the caller's argument.
        if let Some((_, v)) = self.overlay.iter().rev().find(|(n, _)| n == path) {
            return v.clone();
        }
        for candidate in [path, bare] {
            if let Some((a, b)) = self.scope.lookup(candidate, at)
                && a < b
                && b <= self.t.len()
            {
                let v = self.expr(a, b);
                // A literal replaced by an environment variable when it is set: the variable
                // with the literal as its default.
                if v.as_lit().is_some() {
                    for (x, y) in self.scope.reassigned(candidate, at) {
                        let o = self.expr(x, y);
                        if let [Part::Env { default: None, .. }] = o.parts.as_slice() {
                            return with_fallback(o, &v);
                        }
                    }
                }
                return v;
            }
        }
        if !path.contains('.') && !path.contains("::") && self.scope.is_param(path, at) {
            // A constructor's argument kept in a field is what `new Class(…)` passes; any
            // other function's parameter is what its callers pass.
            // (An interpolation `${path}` is read one level in, so only a constructor's
            // argument needs the outermost reading.)
            let ctor = self
                .scope
                .ctor_param(path, at)
                .filter(|_| self.inlined == 0);
            return match ctor.or_else(|| self.scope.call_param(path, at)) {
                Some(name) => Value::reference(name),
                None => Value::dynamic(),
            };
        }
        if let Some(v) = self.scope.value_of(path) {
            return v;
        }
        // A Python enum member's `.value` is the member itself to the graph.
        let path = match self.rules.interp {
            Interp::PythonF => path.strip_suffix(".value").unwrap_or(path),
            _ => path,
        };
        Value::reference(path.replace("::", "."))
    }

    /// A call's value: env and config lookups, format functions, pass-through wrappers, user
    /// helpers that read the environment (`getenv("X", "d")`, `envOr("X", "d")`).
    /// Reads a helper's body with `params` bound to the caller's `args` (parameters the caller
    /// did not pass are run-time), one helper deeper.
    fn inline<R>(
        &mut self,
        params: &[String],
        args: &[(usize, usize)],
        read: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let values: Vec<(String, Value)> = params
            .iter()
            .zip(args)
            .map(|(p, &(x, y))| (p.clone(), self.expr(x, y)))
            .collect();
        let mark = self.overlay.len();
        self.overlay.extend(values);
        for p in params.iter().skip(args.len()) {
            self.overlay.push((p.clone(), Value::dynamic()));
        }
        self.inlined += 1;
        let v = read(self);
        self.inlined -= 1;
        self.overlay.truncate(mark);
        v
    }

    fn call(&mut self, callee: &str, args: &[(usize, usize)]) -> Value {
        let last2 = last_segments(callee, 2);
        let last1 = last_segments(callee, 1);
        let lookup = |table: &[(&'static str, Option<usize>)]| {
            table
                .iter()
                .find(|(c, _)| *c == callee || *c == last2 || *c == last1)
                .copied()
        };
        if let Some((_, def)) = lookup(self.rules.env_calls) {
            let Some(var) = args.first().and_then(|&(a, b)| self.single_string(a, b)) else {
                return Value::dynamic();
            };
            let default = def
                .and_then(|i| args.get(i))
                .and_then(|&(a, b)| self.expr(a, b).as_lit().map(str::to_string));
            return Value::env(var, default);
        }
        if let Some((_, def)) = lookup(self.rules.config_calls) {
            // `GetValue<string>("X")`: the key is the first string argument.
            let Some(key) = args.first().and_then(|&(a, b)| self.single_string(a, b)) else {
                return Value::dynamic();
            };
            let default = def
                .and_then(|i| args.get(i))
                .and_then(|&(a, b)| self.expr(a, b).as_lit().map(str::to_string));
            return Value::config(key, default);
        }
        if let Some((_, fmt)) = self
            .rules
            .format_calls
            .iter()
            .find(|(c, _)| *c == callee || *c == last2 || *c == last1)
            .copied()
        {
            let Some(fi) = args
                .iter()
                .position(|&(a, b)| self.t.is_str(a) && b == a + 1)
            else {
                return Value::dynamic();
            };
            let f = self
                .t
                .str_value(args[fi].0)
                .unwrap_or_default()
                .into_owned();
            return self.format(&f, fmt, &args[fi + 1..], args[fi].0);
        }
        if self
            .rules
            .wrappers
            .iter()
            .any(|w| *w == callee || *w == last2 || *w == last1)
            && let Some(&(a, b)) = args.first()
        {
            return self.expr(a, b);
        }
        // Path and URL joins: `joinPath(base, "topology")`, `path.join(a, b)`, `urljoin(a, b)`,
        // `Path.Combine(a, b)`, `UriHelper.CombineUri(a, b)`, `url.JoinPath(a, b)`.
        let lower = last1.to_ascii_lowercase();
        if args.len() >= 2 && (lower.contains("join") || lower.contains("combine")) {
            let mut v = Value::default();
            for (k, &(a, b)) in args.iter().enumerate() {
                let next = self.expr(a, b);
                let ends = matches!(v.parts.last(), Some(Part::Lit(s)) if s.ends_with('/'));
                let starts = matches!(next.parts.first(), Some(Part::Lit(s)) if s.starts_with('/'));
                if k > 0 && !ends && !starts {
                    v.push(Part::Lit("/".into()));
                }
                v.extend(next);
            }
            return v;
        }
        // A helper of the file that returns one expression: read it with these arguments.
        if self.inlined < 2
            && !callee.contains('.')
            && !callee.contains("::")
            && let Some((params, (a, b))) = self.scope.function(callee)
            && params.len() >= args.len()
        {
            return self.inline(&params, args, |ev| ev.expr(a, b));
        }
        // A helper that reads the environment and falls back: `if v := os.Getenv(k); v != ""
        // { return v }; return d`, `v = os.environ.get(k); if v is None: return d; return v`.
        if self.inlined < 2
            && !callee.contains('.')
            && !callee.contains("::")
            && let Some((params, body, returns)) = self.scope.branches(callee)
            && params.len() >= args.len()
            && let Some(v) = self.inline(&params, args, |ev| ev.env_with_fallback(body, &returns))
        {
            return v;
        }
        // A helper whose name mentions env with a string name and an optional default:
        // `getenv("X", "d")`, `envOr("X", "d")`, `env_or_default("X", "d")`.
        if super::common::is_env_helper(last1)
            && !args.is_empty()
            && args.len() <= 2
            && let Some(var) = self.single_string(args[0].0, args[0].1)
            && var
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            let default = args
                .get(ENV_HELPER_DEFAULT.unwrap_or(1))
                .and_then(|&(a, b)| self.expr(a, b).as_lit().map(str::to_string));
            return Value::env(var, default);
        }
        Value::dynamic()
    }

    /// The value of a body that reads one environment variable and returns either it or a
    /// fallback: the first environment read of the body, with the one literal any return
    /// gives as its default. `None` when the body reads no variable by a known name, or its
    /// returns offer more than one fallback.
    fn env_with_fallback(
        &mut self,
        body: (usize, usize),
        returns: &[(usize, usize)],
    ) -> Option<Value> {
        let t = self.t;
        let end = body.1.min(t.len());
        let mut var = None;
        let mut k = body.0;
        while k < end && var.is_none() {
            let starts = t.ident(k).is_some()
                && !(k > 0 && (t.is_punct(k - 1, b'.') || t.is(k - 1, "::") || t.is(k - 1, "->")));
            if !starts {
                k += 1;
                continue;
            }
            let Some(chain) = self.name_chain(k, end) else {
                k += 1;
                continue;
            };
            let j = chain.end;
            let path = chain.path.as_str();
            let last2 = last_segments(path, 2);
            let last1 = last_segments(path, 1);
            let is_call = self
                .rules
                .env_calls
                .iter()
                .any(|(c, _)| *c == path || *c == last2 || *c == last1)
                && t.is_punct(j, b'(');
            let is_index = self.rules.env_objects.contains(&path) && t.is_punct(j, b'[');
            if is_call || is_index || self.env_member(path).is_some() {
                let close = if is_call || is_index {
                    t.close_or_end(j) + 1
                } else {
                    j
                };
                if let [Part::Env { var: v, .. }] = self.primary(k, close.min(end)).parts.as_slice()
                {
                    var = Some(v.clone());
                }
                k = close.max(k + 1);
                continue;
            }
            k = j.max(k + 1);
        }
        let var = var?;
        let mut default: Option<String> = None;
        for &(a, b) in returns {
            let v = self.expr(a, b);
            match v.parts.as_slice() {
                [
                    Part::Env {
                        var: w,
                        default: Some(d),
                    },
                ] if *w == var => {
                    if default.as_ref().is_some_and(|x| x != d) {
                        return None;
                    }
                    default = Some(d.clone());
                }
                [Part::Lit(d)] if !d.is_empty() => {
                    if default.as_ref().is_some_and(|x| x != d) {
                        return None;
                    }
                    default = Some(d.clone());
                }
                // The variable read (`return v`, `return value`), or a run-time value.
                _ => {}
            }
        }
        Some(Value::env(var, default))
    }

    /// The value of a format call: placeholders replaced by the evaluated arguments; a name
    /// captured from the scope (`format!("{base}/x")`) is looked up at `at`, the format string.
    fn format(&mut self, f: &str, style: Fmt, args: &[(usize, usize)], at: usize) -> Value {
        let mut out = Value::default();
        let mut next = 0usize;
        let bytes = f.as_bytes();
        let mut lit = String::new();
        let mut i = 0;
        let arg_value = |this: &mut Self, idx: Option<usize>, name: Option<&str>| -> Value {
            if let Some(n) = name {
                // `{name}` / `{name=…}` keyword argument, or a captured variable (Rust).
                for &(a, b) in args {
                    if this.t.ident(a) == Some(n) && this.t.is_punct(a + 1, b'=') {
                        return this.expr(a + 2, b);
                    }
                }
                return this.name(n, at);
            }
            match idx.and_then(|k| args.get(k)) {
                Some(&(a, b)) => this.expr(a, b),
                None => Value::dynamic(),
            }
        };
        while i < bytes.len() {
            let c = bytes[i];
            match style {
                Fmt::Printf if c == b'%' => {
                    if bytes.get(i + 1) == Some(&b'%') {
                        lit.push('%');
                        i += 2;
                        continue;
                    }
                    // Flags, width, precision, then the verb.
                    let mut j = i + 1;
                    while j < bytes.len()
                        && (b"+-# 0.".contains(&bytes[j]) || bytes[j].is_ascii_digit())
                    {
                        j += 1;
                    }
                    if j < bytes.len() && bytes[j].is_ascii_alphabetic() {
                        out.push(Part::Lit(std::mem::take(&mut lit)));
                        let v = arg_value(self, Some(next), None);
                        next += 1;
                        out.extend(v);
                        i = j + 1;
                        continue;
                    }
                    lit.push('%');
                    i += 1;
                }
                Fmt::Braces | Fmt::Indexed if c == b'{' => {
                    if bytes.get(i + 1) == Some(&b'{') {
                        lit.push('{');
                        i += 2;
                        continue;
                    }
                    let Some(close) = f[i..].find('}').map(|k| i + k) else {
                        lit.push_str(&f[i..]);
                        break;
                    };
                    let inner = f[i + 1..close]
                        .split([':', '!'])
                        .next()
                        .unwrap_or("")
                        .trim();
                    out.push(Part::Lit(std::mem::take(&mut lit)));
                    let v = if inner.is_empty() {
                        let v = arg_value(self, Some(next), None);
                        next += 1;
                        v
                    } else if let Ok(k) = inner.parse::<usize>() {
                        arg_value(self, Some(k), None)
                    } else if inner
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                    {
                        arg_value(self, None, Some(inner))
                    } else {
                        Value::dynamic()
                    };
                    out.extend(v);
                    i = close + 1;
                }
                Fmt::Braces | Fmt::Indexed if c == b'}' && bytes.get(i + 1) == Some(&b'}') => {
                    lit.push('}');
                    i += 2;
                }
                _ => {
                    let ch = f[i..].chars().next().unwrap_or('\u{fffd}');
                    lit.push(ch);
                    i += ch.len_utf8().max(1);
                }
            }
        }
        out.push(Part::Lit(lit));
        out
    }

    /// A string literal token's value: its text, or its interpolation parts when the
    /// language interpolates this kind of literal.
    fn string(&mut self, i: usize) -> Value {
        let t = self.t;
        let text = t.text(i);
        let interp = match self.rules.interp {
            Interp::JsTemplate if text.starts_with('`') => Interp::JsTemplate,
            Interp::PythonF
                if text
                    .bytes()
                    .take_while(|b| *b != b'"' && *b != b'\'')
                    .any(|b| b == b'f' || b == b'F') =>
            {
                Interp::PythonF
            }
            Interp::CSharp if text.bytes().take_while(|b| *b != b'"').any(|b| b == b'$') => {
                Interp::CSharp
            }
            Interp::Dollar if !text.starts_with('\'') => Interp::Dollar,
            Interp::Swift => Interp::Swift,
            Interp::Ruby if text.starts_with('"') => Interp::Ruby,
            Interp::Php if text.starts_with('"') => Interp::Php,
            Interp::Rust => Interp::Rust,
            _ => Interp::None,
        };
        match interp {
            Interp::None | Interp::Rust => {
                Value::lit(t.str_value(i).unwrap_or_default().into_owned())
            }
            _ => self.interpolated(i, interp),
        }
    }

    /// The parts of an interpolated literal: text between the substitutions, and each
    /// substitution evaluated as a name (`${base}`, `{self.url}`, `$host`).
    fn interpolated(&mut self, i: usize, interp: Interp) -> Value {
        let t = self.t;
        let Some(lit) = t.str_lit(i) else {
            return Value::dynamic();
        };
        let raw = lit.raw;
        let mut out = Value::default();
        let b = raw.as_bytes();
        let mut text = String::new();
        let mut k = 0;
        while k < b.len() {
            let (open_len, close) = match interp {
                Interp::JsTemplate if raw[k..].starts_with("${") => (2, b'}'),
                Interp::PythonF | Interp::CSharp if b[k] == b'{' => {
                    if b.get(k + 1) == Some(&b'{') {
                        text.push('{');
                        k += 2;
                        continue;
                    }
                    (1, b'}')
                }
                Interp::PythonF | Interp::CSharp if b[k] == b'}' && b.get(k + 1) == Some(&b'}') => {
                    text.push('}');
                    k += 2;
                    continue;
                }
                Interp::Dollar | Interp::Php if raw[k..].starts_with("${") => (2, b'}'),
                Interp::Php if raw[k..].starts_with("{$") => (1, b'}'),
                Interp::Dollar | Interp::Php
                    if b[k] == b'$'
                        && b.get(k + 1)
                            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') =>
                {
                    // `$name` (Kotlin, Scala, PHP: `$obj->prop` too).
                    let mut j = k + 1;
                    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                        j += 1;
                    }
                    // PHP reads one property in a simple substitution (`"$order->id"`), and
                    // its variables keep their `$`, so they are the names code uses.
                    let php = interp == Interp::Php;
                    if php
                        && raw[j..].starts_with("->")
                        && b.get(j + 2)
                            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                    {
                        j += 2;
                        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                            j += 1;
                        }
                    }
                    let name = &raw[if php { k } else { k + 1 }..j];
                    out.push(Part::Lit(std::mem::take(&mut text)));
                    let v = self.interp_name(name, i);
                    out.extend(v);
                    k = j;
                    continue;
                }
                Interp::Swift if raw[k..].starts_with("\\(") => (2, b')'),
                Interp::Ruby if raw[k..].starts_with("#{") => (2, b'}'),
                _ => {
                    if b[k] == b'\\' && k + 1 < b.len() && interp != Interp::Swift {
                        // Escapes: keep the escaped character.
                        let ch = raw[k + 1..].chars().next().unwrap_or('\\');
                        text.push(match ch {
                            'n' => '\n',
                            't' => '\t',
                            c => c,
                        });
                        k += 1 + ch.len_utf8();
                        continue;
                    }
                    let ch = raw[k..].chars().next().unwrap_or('\u{fffd}');
                    text.push(ch);
                    k += ch.len_utf8().max(1);
                    continue;
                }
            };
            // Find the balancing close.
            let open_b = b[k + open_len - 1];
            let mut depth = 1usize;
            let mut j = k + open_len;
            while j < b.len() {
                if b[j] == open_b && open_b != close {
                    depth += 1;
                } else if b[j] == close {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            if j >= b.len() {
                text.push_str(&raw[k..]);
                break;
            }
            let inner = raw[k + open_len..j].trim();
            // Python/C# format specs: `{x:>10}`, `{x!r}`, `{x,5}`.
            let inner = match interp {
                // A format spec or alignment after a depth-0 `:`, `!` or `,` (`{x:>10}`,
                // `{x!r}`, `{x,5}`); a call's own commas are inside its parentheses.
                Interp::PythonF | Interp::CSharp => {
                    let mut depth = 0i32;
                    let mut cut = inner.len();
                    for (k, c) in inner.char_indices() {
                        match c {
                            '(' | '[' | '{' => depth += 1,
                            ')' | ']' | '}' => depth -= 1,
                            ':' | '!' | ',' if depth == 0 => {
                                cut = k;
                                break;
                            }
                            _ => {}
                        }
                    }
                    inner[..cut].trim()
                }
                _ => inner,
            };
            let php_name;
            let inner = match interp {
                // `{$x}`, `${x}`: the PHP variable `$x`, named as in code.
                Interp::Php => {
                    php_name = format!("${}", inner.trim_start_matches('$'));
                    php_name.as_str()
                }
                _ => inner.trim_start_matches('$'),
            };
            out.push(Part::Lit(std::mem::take(&mut text)));
            let v = self.interp_name(inner, i);
            out.extend(v);
            k = j + 1;
        }
        out.push(Part::Lit(text));
        out
    }

    /// A substitution's value: a name or member path (`base`, `this.url`, `config.BASE`,
    /// `process.env.X`), looked up like any name; anything else is run-time.
    fn interp_name(&mut self, inner: &str, at: usize) -> Value {
        let inner = inner.replace("->", ".").replace("?.", ".");
        if inner.is_empty()
            || !inner.bytes().all(|c| {
                c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$' || c >= 0x80
            })
            || inner.starts_with(|c: char| c.is_ascii_digit())
        {
            return self.interp_expr(&inner, at);
        }
        if let Some(var) = self.env_member(&inner) {
            return Value::env(var, None);
        }
        self.name(&inner, at)
    }

    /// An expression inside an interpolation (`{UriHelper.CombineUri(base, Api)}`,
    /// `${process.env["X"]}`, `{os.environ['X']}`): lexed on its own and read with the file's
    /// names, at most a few levels deep.
    fn interp_expr(&mut self, inner: &str, at: usize) -> Value {
        use crate::index::lex::{Syntax, lex};
        if inner.len() > 512 || self.inlined >= 2 {
            return Value::dynamic();
        }
        let (syntax, rules) = match self.rules.interp {
            Interp::JsTemplate => (Syntax::JS, super::tokens::Rules::JS),
            Interp::PythonF => (Syntax::PYTHON, super::tokens::Rules::SCRIPT),
            Interp::CSharp => (Syntax::CSHARP, super::tokens::Rules::CSHARP),
            Interp::Dollar => (Syntax::KOTLIN, super::tokens::Rules::JVM),
            Interp::Swift => (Syntax::SWIFT, super::tokens::Rules::SWIFT),
            Interp::Ruby => (Syntax::RUBY, super::tokens::Rules::SCRIPT),
            Interp::Php => (Syntax::PHP, super::tokens::Rules::SCRIPT),
            Interp::Rust | Interp::None => (Syntax::C, super::tokens::Rules::C_FAMILY),
        };
        let lx = lex(syntax, inner);
        let t = Tokens::new(&lx, &rules);
        let outer = Outer {
            t: self.t,
            rules: self.rules,
            scope: self.scope,
            at,
            overlay: &self.overlay,
            inlined: self.inlined,
        };
        let mut e = Evaluator {
            t: &t,
            rules: self.rules,
            scope: &outer,
            depth: self.depth + 1,
            steps: self.steps,
            overlay: Vec::new(),
            inlined: self.inlined + 1,
        };
        let v = e.expr(0, t.len());
        self.steps = e.steps;
        v
    }

    /// The value of `a..b` when it is one plain string literal.
    fn single_string(&self, a: usize, b: usize) -> Option<String> {
        // A parameter of the helper being read that the caller gave a literal.
        if b == a + 1
            && let Some(n) = self.t.ident(a)
            && let Some((_, v)) = self.overlay.iter().rev().find(|(p, _)| p == n)
        {
            return v.as_lit().map(str::to_string);
        }
        (b == a + 1 && self.t.is_str(a))
            .then(|| self.t.str_value(a).map(|v| v.into_owned()))
            .flatten()
    }

    /// The first token of `s..e` at bracket depth 0 equal to `op`.
    fn find_top(&self, s: usize, e: usize, op: &str) -> Option<usize> {
        let t = self.t;
        let mut j = s;
        while j < e {
            if t.is_opener(j) {
                j = t.skip_group(j);
                continue;
            }
            if t.is(j, op) {
                return Some(j);
            }
            j += 1;
        }
        None
    }

    /// `s..e` split at depth-0 tokens equal to any of `ops` (a leading unary `+` is not a
    /// split).
    fn split_top(&self, s: usize, e: usize, ops: &[&str]) -> Vec<(usize, usize)> {
        let t = self.t;
        let mut out = Vec::new();
        let mut a = s;
        let mut j = s;
        while j < e {
            if t.is_opener(j) {
                j = t.skip_group(j);
                continue;
            }
            if j > a && ops.iter().any(|op| t.is(j, op)) && !t.joined_eq(j) {
                out.push((a, j));
                a = j + 1;
            }
            j += 1;
        }
        out.push((a, e));
        out
    }
}

impl Tokens<'_, '_> {
    /// True when token `i` is glued to a following `=` (`+=`, `.=`), which is an assignment,
    /// not a concatenation.
    fn joined_eq(&self, i: usize) -> bool {
        self.joined(i) && self.is_punct(i + 1, b'=')
    }
}

/// The last `n` segments of a dotted or `::` path (`a.b.c`, 2 → `b.c`).
fn last_segments(path: &str, n: usize) -> &str {
    let mut cut = path.len();
    let mut seen = 0;
    let b = path.as_bytes();
    let mut i = path.len();
    while i > 0 {
        i -= 1;
        if b[i] == b'.' || (b[i] == b':' && i > 0 && b[i - 1] == b':') {
            seen += 1;
            if seen == n {
                cut = i + 1;
                break;
            }
        }
    }
    if seen < n { path } else { &path[cut..] }
}

/// True when `path` is `object` or ends with `.object` (`self.app.config` / `app.config`).
fn path_ends(path: &str, object: &str) -> bool {
    path == object || path.ends_with(&format!(".{object}"))
}

/// A closure written as a fallback (`|| "d"`, `() -> "d"`, `{ "d" }`): its body.
fn strip_closure(t: &Tokens, a: usize, b: usize) -> (usize, usize) {
    if t.is(a, "||") {
        return (a + 1, b);
    }
    if t.is_punct(a, b'|') && t.is_punct(a + 1, b'|') {
        return (a + 2, b);
    }
    // `|_| "d"`, `|e| "d"` (Rust `unwrap_or_else` on a `Result`).
    if t.is_punct(a, b'|') && t.ident(a + 1).is_some() && t.is_punct(a + 2, b'|') {
        return (a + 3, b);
    }
    if t.is_punct(a, b'(') && t.close(a) == Some(a + 1) && (t.is(a + 2, "->") || t.is(a + 2, "=>"))
    {
        return (a + 3, b);
    }
    if t.is_punct(a, b'{') && t.close(a) == Some(b - 1) {
        return (a + 1, b - 1);
    }
    (a, b)
}

/// `left` with `right` as its fallback: an env lookup, a config key or a name gains the
/// literal default; a run-time value falls back to the literal, which is what a static
/// reader can know.
pub fn with_fallback(left: Value, right: &Value) -> Value {
    let Some(d) = right.as_lit().map(str::to_string) else {
        return left;
    };
    match left.parts.as_slice() {
        [Part::Env { var, default: None }] => Value::env(var.clone(), Some(d)),
        [Part::Config { key, default: None }] => Value::config(key.clone(), Some(d)),
        // A caller's argument with a fallback: the fallback (a run-time value's default).
        [p] if p.is_run_time() => Value::lit(d),
        [
            Part::Ref {
                name,
                default: None,
            },
        ] => Value {
            parts: vec![Part::Ref {
                name: name.clone(),
                default: Some(d),
            }],
        },
        [Part::Dynamic] | [] => Value::lit(d),
        _ => left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::tokens::Rules;
    use crate::index::lex::{Syntax, lex};

    /// A language as the evaluator reads it: how it is lexed, tokenised and evaluated.
    type Lang = (Syntax, Rules, ExprRules);

    const JS: Lang = (Syntax::JS, Rules::JS, ExprRules::JS);
    const PYTHON: Lang = (Syntax::PYTHON, Rules::SCRIPT, ExprRules::PYTHON);
    const GO: Lang = (Syntax::GO, Rules::C_FAMILY, ExprRules::GO);
    const JAVA: Lang = (Syntax::JAVA, Rules::JVM, ExprRules::JAVA);
    const KOTLIN: Lang = (Syntax::KOTLIN, Rules::JVM, ExprRules::KOTLIN);
    const SCALA: Lang = (Syntax::SCALA, Rules::JVM, ExprRules::SCALA);
    const CSHARP: Lang = (Syntax::CSHARP, Rules::CSHARP, ExprRules::CSHARP);
    const RUST: Lang = (Syntax::RUST, Rules::C_FAMILY, ExprRules::RUST);
    const PHP: Lang = (Syntax::PHP, Rules::SCRIPT, ExprRules::PHP);
    const RUBY: Lang = (Syntax::RUBY, Rules::SCRIPT, ExprRules::RUBY);
    const SWIFT: Lang = (Syntax::SWIFT, Rules::SWIFT, ExprRules::SWIFT);

    /// The value of `src` read whole as an expression of `lang`, as displayed.
    fn ev((syntax, rules, expr): &Lang, src: &str) -> String {
        let lx = lex(*syntax, src);
        let t = Tokens::new(&lx, rules);
        eval(&t, (0, t.len()), expr, &NoScope).display()
    }

    /// Asserts that each (expression, value as displayed) of `cases` reads so in `lang`.
    #[track_caller]
    fn assert_displays(lang: &Lang, cases: &[(&str, &str)]) {
        for &(src, want) in cases {
            assert_eq!(ev(lang, src), want, "{src}");
        }
    }

    /// Asserts that each (expression, variable, default) of `cases` reads in `lang` as that
    /// one environment lookup with its default.
    #[track_caller]
    fn assert_env_defaults(lang: &Lang, cases: &[(&str, &str, &str)]) {
        for &(src, var, default) in cases {
            let lx = lex(lang.0, src);
            let t = Tokens::new(&lx, &lang.1);
            let v = eval(&t, (0, t.len()), &lang.2, &NoScope);
            let want = [Part::Env {
                var: var.into(),
                default: Some(default.into()),
            }];
            assert_eq!(v.parts, want, "{src}");
        }
    }

    #[test]
    fn javascript_concatenation_templates_and_env_fallbacks() {
        assert_displays(
            &JS,
            &[
                ("'/orders/' + id", "/orders/{id}"),
                ("`${BASE}/orders/${order.id}`", "{BASE}/orders/{order.id}"),
                ("`${process.env.CART_URL}/cart`", "{env CART_URL}/cart"),
            ],
        );
        assert_env_defaults(
            &JS,
            &[
                ("process.env.T || 'orders'", "T", "orders"),
                ("process.env['T'] ?? \"orders\"", "T", "orders"),
            ],
        );
        assert_displays(
            &JS,
            &[
                ("this.baseUrl + '/x'", "{this.baseUrl}/x"),
                ("cond ? 'a' : 'b'", "{}"),
                ("fetchUrl()", "{}"),
                ("util.format('%s/items/%d', base, id)", "{base}/items/{id}"),
            ],
        );
    }

    #[test]
    fn python_fstrings_format_percent_and_environ() {
        assert_displays(
            &PYTHON,
            &[
                ("f\"{BASE}/orders/{oid}\"", "{BASE}/orders/{oid}"),
                (
                    "'http://{user}:8080/check/{id}'.format(user=USER, id=id)",
                    "http://{USER}:8080/check/{id}",
                ),
                ("'http://%s/x/%s' % (HOST, y)", "http://{HOST}/x/{y}"),
                (
                    "\"http://{}/accounts\".format(os.environ.get(\"X_ADDR\"))",
                    "http://{env X_ADDR}/accounts",
                ),
            ],
        );
        assert_env_defaults(
            &PYTHON,
            &[
                ("os.getenv('USER_HOST', 'user')", "USER_HOST", "user"),
                ("os.environ.get('T') or 'topic'", "T", "topic"),
            ],
        );
        assert_displays(
            &PYTHON,
            &[
                ("os.environ['T']", "{env T}"),
                ("app.config['CART_URL'] + '/x'", "{config CART_URL}/x"),
                ("f'{{literal}}/{x}'", "{literal}/{x}"),
            ],
        );
    }

    #[test]
    fn go_sprintf_getenv_and_helpers() {
        assert_displays(
            &GO,
            &[
                (
                    "fmt.Sprintf(\"http://%s/price/%d\", addr, id)",
                    "http://{addr}/price/{id}",
                ),
                ("os.Getenv(\"X\") + \"/y\"", "{env X}/y"),
            ],
        );
        assert_env_defaults(
            &GO,
            &[("getEnv(\"TOPIC\", \"invoices\")", "TOPIC", "invoices")],
        );
        assert_displays(
            &GO,
            &[
                ("cfg.Endpoint + \"/x\"", "{cfg.Endpoint}/x"),
                ("path.Join(base, \"topology\")", "{base}/topology"),
            ],
        );
    }

    #[test]
    fn jvm_format_optional_and_elvis() {
        assert_displays(
            &JAVA,
            &[(
                "String.format(\"http://%s/shipping/\", getenv(\"CART_ENDPOINT\", \"cart\"))",
                "http://{env CART_ENDPOINT}/shipping/",
            )],
        );
        assert_env_defaults(
            &JAVA,
            &[(
                "Optional.ofNullable(System.getenv(\"T\")).orElse(\"t\")",
                "T",
                "t",
            )],
        );
        assert_env_defaults(
            &KOTLIN,
            &[("System.getenv(\"T\") ?: \"invoices\"", "T", "invoices")],
        );
        assert_displays(
            &KOTLIN,
            &[("\"$base/orders/${order.id}\"", "{base}/orders/{order.id}")],
        );
        assert_displays(&SCALA, &[("s\"$base/x\"", "{base}/x")]);
    }

    #[test]
    fn csharp_interpolation_config_and_rust_php_ruby_swift() {
        assert_displays(
            &CSHARP,
            &[
                (
                    "$\"{remoteServiceBaseUrl}items/{id}\"",
                    "{remoteServiceBaseUrl}items/{id}",
                ),
                (
                    "Configuration[\"CatalogUrl\"] + \"/x\"",
                    "{config CatalogUrl}/x",
                ),
                ("string.Format(\"{0}/api/{1}\", a, b)", "{a}/api/{b}"),
            ],
        );
        assert_displays(
            &RUST,
            &[
                ("format!(\"{}/estimate\", base)", "{base}/estimate"),
                ("format!(\"{base}/x/{id}\")", "{base}/x/{id}"),
            ],
        );
        assert_env_defaults(
            &RUST,
            &[("std::env::var(\"T\").unwrap_or(\"t\".into())", "T", "t")],
        );
        assert_displays(
            &PHP,
            &[
                (
                    "sprintf('%s/product/%s', $this->catalogueUrl, $sku)",
                    "{$this.catalogueUrl}/product/{$sku}",
                ),
                // PHP variables keep their `$` (`$base` is what code and the tracker call it).
                ("\"$base/x/{$id}\"", "{$base}/x/{$id}"),
                (
                    "\"{$this->baseUrl}/orders/$order->id/items\"",
                    "{$this.baseUrl}/orders/{$order.id}/items",
                ),
            ],
        );
        assert_env_defaults(
            &PHP,
            &[(
                "getenv('CATALOGUE_URL') ?: 'http://catalogue:8080'",
                "CATALOGUE_URL",
                "http://catalogue:8080",
            )],
        );
        assert_displays(&RUBY, &[("\"#{BASE}/orders/#{id}\"", "{BASE}/orders/{id}")]);
        assert_env_defaults(&RUBY, &[("ENV.fetch('T', 'orders')", "T", "orders")]);
        assert_displays(&SWIFT, &[("\"\\(baseURL)/orders\"", "{baseURL}/orders")]);
    }

    #[test]
    fn helpers_that_return_a_url_are_read_with_the_callers_arguments() {
        use crate::index::lang::bind::{Assignments, StmtStyle};
        let src = r#"class CatalogService {
    private readonly string remoteServiceBaseUrl = "api/catalog/";
    public Task Get(int page) {
        var uri = GetAllCatalogItemsUri(remoteServiceBaseUrl, page);
        return httpClient.GetFromJsonAsync(uri);
    }
    private static string GetAllCatalogItemsUri(string baseUri, int pageIndex)
    {
        return $"{baseUri}items?pageIndex={pageIndex}";
    }
    private static string ItemUri(string baseUri, int id) => $"{baseUri}items/{id}";
    public Task Item(int id) => httpClient.GetFromJsonAsync(ItemUri(remoteServiceBaseUrl, id));
}
"#;
        let lx = lex(Syntax::CSHARP, src);
        let t = Tokens::new(&lx, &Rules::CSHARP);
        let asg = Assignments::scan(&t, &StmtStyle::SEMICOLON);
        let arg_of = |line: u32| {
            let open = (0..t.len())
                .find(|&k| t.is(k, "GetFromJsonAsync") && t.line(k) == line)
                .unwrap()
                + 1;
            t.args(open)[0]
        };
        let v = eval(&t, arg_of(5), &ExprRules::CSHARP, &asg);
        assert_eq!(v.display(), "{remoteServiceBaseUrl}items?pageIndex={}");
        let v = eval(&t, arg_of(12), &ExprRules::CSHARP, &asg);
        assert_eq!(v.display(), "{remoteServiceBaseUrl}items/{}");
    }

    #[test]
    fn expressions_inside_interpolations_are_read() {
        assert_displays(
            &CSHARP,
            &[(
                "$\"{UriHelper.CombineUri(baseUrl, ApiUrlBase)}?{ApiVersion}\"",
                "{baseUrl}/{ApiUrlBase}?{ApiVersion}",
            )],
        );
        assert_displays(
            &JS,
            &[
                ("`${process.env['CART']}/cart`", "{env CART}/cart"),
                ("`${a ? b : c}/x`", "{}/x"),
            ],
        );
        assert_displays(&PYTHON, &[("f\"{os.environ['HOST']}/x\"", "{env HOST}/x")]);
    }

    #[test]
    fn non_ascii_and_truncated_input_never_panics() {
        for src in [
            "f\"{é}/ü{\"",
            "`${",
            "\"$",
            "'%",
            "format!(\"{\"",
            "$\"{",
            "\"#{",
            "\"\\(",
            "a +",
            "+ a",
            "(",
            "os.getenv(",
            "process.env.",
            "x ?? ",
            "\"é\" + ü",
            "s\"$é\"",
            "'{}'.format(",
        ] {
            for (syntax, rules, expr) in [JS, PYTHON, GO, KOTLIN, CSHARP, RUST, PHP, RUBY, SWIFT] {
                let lx = lex(syntax, src);
                let t = Tokens::new(&lx, &rules);
                for a in 0..=t.len() {
                    for b in a..=t.len() {
                        let _ = eval(&t, (a, b), &expr, &NoScope);
                    }
                }
            }
        }
    }

    /// The example in the documentation above (private items have no doctests).
    #[test]
    fn documented_example_1() {
        use crate::index::facts::Part;
        use crate::index::lang::tokens::{Rules, Tokens};
        use crate::index::lang::value::{ExprRules, NoScope, eval};
        use crate::index::lex::{Syntax, lex};
        let lx = lex(
            Syntax::JS,
            "'http://' + (process.env.CATALOGUE_HOST || 'catalogue') + ':8080/product/' + sku",
        );
        let t = Tokens::new(&lx, &Rules::JS);
        let v = eval(&t, (0, t.len()), &ExprRules::JS, &NoScope);
        assert_eq!(
            v.display(),
            "http://{env CATALOGUE_HOST}:8080/product/{sku}"
        );
        assert!(matches!(&v.parts[1], Part::Env { default: Some(d), .. } if d == "catalogue"));
    }
}
