//! Plain data: what one file contributes to the index.
//!
//! Extractors (`index::lang`) are pure functions from file text to a [`FileFacts`]; the
//! snapshot builder interns these into compact tables and the graph resolves them across files
//! and roots. Every fact carries the 1-based line it was seen on, so every answer can cite
//! `path:line`. Names are kept as written in the source; normalisation (case folding, topic
//! keys) happens at resolution time.

/// The language (or document kind) of a file, decided from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Language {
    /// `.go`
    Go,
    /// `.java`
    Java,
    /// `.kt`, `.kts`
    Kotlin,
    /// `.cs`, and Razor `.razor`, `.cshtml`
    CSharp,
    /// `.py`, `.pyi`
    Python,
    /// `.ts`, `.tsx`, `.mts`, `.cts`
    TypeScript,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`
    JavaScript,
    /// `.rs`
    Rust,
    /// `.c`
    C,
    /// `.h`, `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`
    Cpp,
    /// `.rb`, `.rake`
    Ruby,
    /// `.php`, `.phtml`
    Php,
    /// `.swift`
    Swift,
    /// `.scala`, `.sc`
    Scala,
    /// `.proto`: the gRPC contracts
    Protobuf,
    /// `.md`, `.markdown`: the team's docs
    Markdown,
    /// `.yaml`, `.yml`: configuration (Spring, compose, Kubernetes…)
    Yaml,
    /// `.properties`: Spring configuration
    Properties,
    /// `.csproj`, `.fsproj`, `.vbproj`: .NET project files (their project references)
    MsBuild,
}

impl Language {
    /// Every language, in a stable order (used for per-language counts).
    pub const ALL: [Language; 19] = [
        Language::Go,
        Language::Java,
        Language::Kotlin,
        Language::CSharp,
        Language::Python,
        Language::TypeScript,
        Language::JavaScript,
        Language::Rust,
        Language::C,
        Language::Cpp,
        Language::Ruby,
        Language::Php,
        Language::Swift,
        Language::Scala,
        Language::Protobuf,
        Language::Markdown,
        Language::Yaml,
        Language::Properties,
        Language::MsBuild,
    ];

    /// A short lowercase name, also used as the Markdown code-fence tag.
    pub fn name(self) -> &'static str {
        match self {
            Language::Go => "go",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::CSharp => "csharp",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::Rust => "rust",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Swift => "swift",
            Language::Scala => "scala",
            Language::Protobuf => "protobuf",
            Language::Markdown => "markdown",
            Language::Yaml => "yaml",
            Language::Properties => "properties",
            Language::MsBuild => "msbuild",
        }
    }

    /// The language of a path, from its extension (or name); `None` for files we do not index.
    pub fn of_path(path: &str) -> Option<Language> {
        // Byte scans rather than `char` searchers: this runs for every file listed and read.
        let name = match path.bytes().rposition(|b| b == b'/') {
            Some(slash) => &path[slash + 1..],
            None => path,
        };
        let ext = match name.bytes().rposition(|b| b == b'.') {
            Some(dot) if dot > 0 => &name[dot + 1..],
            _ => return None,
        };
        // Lowercased on the stack: this runs for every file the crawl lists, and again when
        // it is read. No known extension is longer than 10 bytes.
        let mut lower = [0u8; 10];
        let lower = lower.get_mut(..ext.len())?;
        lower.copy_from_slice(ext.as_bytes());
        lower.make_ascii_lowercase();
        let lang = match &*lower {
            b"go" => Language::Go,
            b"java" => Language::Java,
            b"kt" | b"kts" => Language::Kotlin,
            // Razor pages and components are read as C# ([`is_razor`]).
            b"cs" | b"razor" | b"cshtml" => Language::CSharp,
            b"py" | b"pyi" => Language::Python,
            b"ts" | b"tsx" | b"mts" | b"cts" => Language::TypeScript,
            b"js" | b"jsx" | b"mjs" | b"cjs" => Language::JavaScript,
            b"rs" => Language::Rust,
            b"c" => Language::C,
            b"h" | b"cc" | b"cpp" | b"cxx" | b"hpp" | b"hh" | b"hxx" => Language::Cpp,
            b"rb" | b"rake" => Language::Ruby,
            b"php" | b"phtml" => Language::Php,
            b"swift" => Language::Swift,
            b"scala" | b"sc" => Language::Scala,
            b"proto" => Language::Protobuf,
            b"md" | b"markdown" => Language::Markdown,
            b"yaml" | b"yml" => Language::Yaml,
            b"properties" => Language::Properties,
            b"csproj" | b"fsproj" | b"vbproj" => Language::MsBuild,
            _ => return None,
        };
        Some(lang)
    }
}

/// A Razor page or component (`.razor`, `.cshtml`, any case): markup with C# in it, indexed
/// as C#.
pub fn is_razor(path: &str) -> bool {
    let n = path.len();
    [".razor", ".cshtml"].iter().any(|ext| {
        n >= ext.len()
            && path
                .get(n - ext.len()..)
                .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    })
}

/// What kind of thing a declaration is. The order is the search ranking by kind (docs/ARCHITECTURE.md §3.2):
/// contracts first, plain code last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SymbolKind {
    /// A gRPC service (`.proto` `service`).
    Service,
    /// A gRPC method (`.proto` `rpc`), named `Service.Method`.
    Rpc,
    /// An HTTP route, named `METHOD /path`.
    Endpoint,
    /// A protobuf message.
    Message,
    Interface,
    Trait,
    /// An event topic or channel (AsyncAPI channel, declared topic constant).
    Topic,
    Class,
    Struct,
    Enum,
    /// A value of an enum (protobuf or language enum member).
    EnumValue,
    TypeAlias,
    Function,
    Method,
    Constructor,
    Constant,
    Variable,
    Field,
    /// A module, namespace or package declaration.
    Module,
    /// A Markdown section heading (docs are searched by `search_docs`, not `smart_search`).
    Section,
    /// A configuration key (Spring property, YAML key).
    Property,
}

impl SymbolKind {
    /// Every kind, in declaration (ranking) order: `ALL[k as usize] == k`.
    pub const ALL: [SymbolKind; 21] = [
        SymbolKind::Service,
        SymbolKind::Rpc,
        SymbolKind::Endpoint,
        SymbolKind::Message,
        SymbolKind::Interface,
        SymbolKind::Trait,
        SymbolKind::Topic,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::EnumValue,
        SymbolKind::TypeAlias,
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Constructor,
        SymbolKind::Constant,
        SymbolKind::Variable,
        SymbolKind::Field,
        SymbolKind::Module,
        SymbolKind::Section,
        SymbolKind::Property,
    ];

    /// The lowercase name used in tool arguments (`kind`) and output.
    pub fn name(self) -> &'static str {
        match self {
            SymbolKind::Service => "service",
            SymbolKind::Rpc => "rpc",
            SymbolKind::Endpoint => "endpoint",
            SymbolKind::Message => "message",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Topic => "topic",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::EnumValue => "enum_value",
            SymbolKind::TypeAlias => "type",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Constructor => "constructor",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::Field => "field",
            SymbolKind::Module => "module",
            SymbolKind::Section => "section",
            SymbolKind::Property => "property",
        }
    }
}

/// A declaration: a named thing with a span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// The declared name as written (`OrderService`, `handle_order`, `Orders.Create`).
    pub name: String,
    pub kind: SymbolKind,
    /// The line of the declaration's name (its signature line).
    pub line: u32,
    /// The last line of the declaration (closing brace, end of the indented block); equals
    /// `line` for one-line declarations.
    pub end_line: u32,
    /// The first line of a doc comment or decorator/annotation block directly above, if any.
    pub doc_line: Option<u32>,
    /// The enclosing type or namespace (`OrderService` for its method), if any.
    pub container: Option<String>,
}

/// An import, `use`, `require` or `#include`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The module path as written, without quotes (`github.com/acme/orders/pb`,
    /// `@acme/domain-user`, `com.acme.orders.OrderService`, `orders.v1`, `../util`).
    pub module: String,
    /// Names imported from it (`{ A, B as C }` gives `A`, `B`); empty for a whole-module import.
    pub names: Vec<String>,
    /// The local alias of the module (`import pb "…"`, `import * as x`, `import a.b as c`).
    pub alias: Option<String>,
    pub line: u32,
    /// True when the file re-exports what it imports (`export … from`, `pub use`).
    pub reexport: bool,
    /// Names of `names` bound under another local name, as `(imported, local)`:
    /// `{ B as C }`, `from m import B as C`, `use a::B as C` give `("B", "C")`.
    pub renamed: Vec<(String, String)>,
}

impl Import {
    /// An import of the whole of `module` (no names, no renames, not re-exported) under
    /// `alias` at `line`: what most languages' `import`/`using`/`require` lines record.
    pub fn whole_module(module: String, alias: Option<String>, line: u32) -> Import {
        Import {
            module,
            names: Vec::new(),
            alias,
            line,
            reexport: false,
            renamed: Vec::new(),
        }
    }

    /// A plain import of `module` naming `names` at `line` (no alias, no renames): the
    /// shape snippet tests build by hand.
    #[cfg(test)]
    pub fn plain(module: &str, names: &[&str], line: u32) -> Import {
        Import {
            module: module.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            alias: None,
            line,
            reexport: false,
            renamed: Vec::new(),
        }
    }

    /// The name this import brought in under the local name `local`, if any:
    /// `C` for `{ B as C }` gives `B`; a name imported as itself gives itself;
    /// the original name of a renamed import is not bound, so `B` gives `None`.
    pub fn imported_as(&self, local: &str) -> Option<&str> {
        if let Some((imported, _)) = self.renamed.iter().find(|(_, l)| l == local) {
            return Some(imported);
        }
        let bound_elsewhere = self.renamed.iter().any(|(i, _)| i == local);
        self.names
            .iter()
            .find(|n| *n == local && !bound_elsewhere)
            .map(String::as_str)
    }

    /// The local names this import binds in the file, in source order of `names`.
    pub fn local_names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| {
            self.renamed
                .iter()
                .find(|(i, _)| i == n)
                .map_or(n.as_str(), |(_, l)| l.as_str())
        })
    }
}

/// A gRPC fact seen in source code (not in a `.proto`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrpcFact {
    /// A type registered or declared as the server of a service (`RegisterOrdersServer(s, &impl{})`,
    /// `class X extends OrdersGrpc.OrdersImplBase`, `class X(OrdersServicer)`,
    /// `impl orders_server::Orders for X`). `impl_type` is the implementing type when known;
    /// its methods are the handlers.
    Server {
        service: String,
        impl_type: Option<String>,
        line: u32,
    },
    /// A single handler method bound explicitly to an RPC (`@GrpcMethod('Orders', 'Create')`,
    /// or a method of a known server type).
    Handler {
        service: String,
        method: String,
        line: u32,
    },
    /// A client constructed for a service (`NewOrdersClient(conn)`, `OrdersGrpc.newBlockingStub(ch)`,
    /// `OrdersStub(channel)`, `new Orders.OrdersClient(ch)`). `var` is the variable or field that
    /// holds it, when the extractor can tell.
    Client {
        service: String,
        var: Option<String>,
        line: u32,
    },
    /// A method called on a client (`client.CreateOrder(ctx, req)`). `service` is set when the
    /// receiver is known to hold a client of that service; otherwise (a Go call on a field the
    /// file does not type) the graph resolves the receiver against the `Client { var }` facts
    /// of the other files of the package.
    Call {
        service: Option<String>,
        receiver: String,
        method: String,
        line: u32,
    },
}

/// Whether an event site sends or receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventRole {
    /// The site publishes to the topic.
    Producer,
    /// The site subscribes to or reads the topic.
    Consumer,
}

/// One piece of a [`Value`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Literal text.
    Lit(String),
    /// A name defined elsewhere — a variable, constant, field or qualified constant
    /// (`ordersTopic`, `Topics.ORDER_CREATED`, `this.baseUrl`, `events.Topic`) — resolved at
    /// graph time through the [`Binding`]s of the file, its package and the files it imports.
    /// `default` is a literal the code falls back to (`base || "http://x"`).
    Ref {
        name: String,
        default: Option<String>,
    },
    /// An environment variable (`os.Getenv("T")`, `process.env.T ?? "t"`), with the literal
    /// default the code falls back to.
    Env {
        var: String,
        default: Option<String>,
    },
    /// A configuration key (`${retail.ui.endpoints.catalog}`, `app.config["CART_URL"]`,
    /// `Configuration["X"]`), resolved against the workspace's property files, with its default.
    Config {
        key: String,
        default: Option<String>,
    },
    /// A value only known at run time (a parameter, a call result). In a URL it stands for one
    /// path segment; a value made only of these is unresolvable.
    Dynamic,
}

impl Part {
    /// A reference to what the callers of the function around the site pass
    /// ([`crate::index::lang::bind::call_arg_name`]).
    pub fn is_call_arg(&self) -> bool {
        matches!(self, Part::Ref { name, .. } if name.starts_with("call "))
    }

    /// Known only at run time, to the file: [`Part::Dynamic`], or a caller's argument.
    pub fn is_run_time(&self) -> bool {
        matches!(self, Part::Dynamic) || self.is_call_arg()
    }
}

/// A string-valued expression as written at a site: the literal text an extractor could read
/// and the names it leaves to the graph. Topic names, URLs and constants are values, so one
/// resolver (`index::graph`) turns every one of them into text for every language.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Value {
    pub parts: Vec<Part>,
}

impl Value {
    /// A literal.
    pub fn lit(s: impl Into<String>) -> Value {
        Value {
            parts: vec![Part::Lit(s.into())],
        }
    }

    /// A reference to a name resolved elsewhere.
    pub fn reference(name: impl Into<String>) -> Value {
        Value {
            parts: vec![Part::Ref {
                name: name.into(),
                default: None,
            }],
        }
    }

    /// An environment lookup with an optional literal default.
    pub fn env(var: impl Into<String>, default: Option<String>) -> Value {
        Value {
            parts: vec![Part::Env {
                var: var.into(),
                default,
            }],
        }
    }

    /// A configuration lookup with an optional literal default.
    pub fn config(key: impl Into<String>, default: Option<String>) -> Value {
        Value {
            parts: vec![Part::Config {
                key: key.into(),
                default,
            }],
        }
    }

    /// A value known only at run time.
    pub fn dynamic() -> Value {
        Value {
            parts: vec![Part::Dynamic],
        }
    }

    /// Appends a part, merging adjacent literals (and never two `Dynamic`s in a row).
    pub fn push(&mut self, part: Part) {
        match (self.parts.last_mut(), part) {
            (Some(Part::Lit(a)), Part::Lit(b)) => a.push_str(&b),
            (_, Part::Lit(b)) if b.is_empty() => {}
            (Some(Part::Dynamic), Part::Dynamic) => {}
            (_, p) => self.parts.push(p),
        }
    }

    /// Appends every part of `other`.
    pub fn extend(&mut self, other: Value) {
        for p in other.parts {
            self.push(p);
        }
    }

    /// The text when the value is one literal.
    pub fn as_lit(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Lit(s)] => Some(s),
            [] => Some(""),
            _ => None,
        }
    }

    /// The default of a value that is one environment lookup with a default.
    pub fn env_default(&self) -> Option<String> {
        match self.parts.as_slice() {
            [
                Part::Env {
                    default: Some(d), ..
                },
            ] => Some(d.clone()),
            _ => None,
        }
    }

    /// True when nothing in the value can ever be known statically (only run-time parts).
    pub fn is_dynamic(&self) -> bool {
        self.parts.iter().all(Part::is_run_time)
    }

    /// The value with every caller's argument ([`Part::is_call_arg`]) made a run-time part:
    /// only an HTTP call's URL is read at its helper's call sites.
    pub fn without_call_args(&mut self) {
        if self.parts.iter().any(Part::is_call_arg) {
            let parts = std::mem::take(&mut self.parts);
            for p in parts {
                self.push(if p.is_call_arg() { Part::Dynamic } else { p });
            }
        }
    }

    /// How the value reads in an answer: literals as written, `{NAME}` for names and
    /// variables, `{}` for run-time parts (`http://{CATALOGUE_HOST}:8080/product/{}`).
    pub fn display(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                // What the callers pass is a run-time part here (the graph reads each call).
                p if p.is_call_arg() => out.push_str("{}"),
                Part::Ref { name, .. } => {
                    out.push('{');
                    // A constructor's argument (`new Provider#0`) reads as what it is.
                    match crate::index::lang::bind::describe_ctor_arg(name) {
                        Some(d) => out.push_str(&d),
                        None => out.push_str(name),
                    }
                    out.push('}');
                }
                Part::Env { var, .. } => {
                    out.push_str("{env ");
                    out.push_str(var);
                    out.push('}');
                }
                Part::Config { key, .. } => {
                    out.push_str("{config ");
                    out.push_str(key);
                    out.push('}');
                }
                Part::Dynamic => out.push_str("{}"),
            }
        }
        out
    }
}

/// The `via` of a consumer of an event the framework itself publishes (Spring Boot's
/// `ApplicationReadyEvent`, `ContextRefreshedEvent`): no code of the workspace produces it, so
/// answers say so instead of hunting for a producer, and the service picture leaves it out.
pub const FRAMEWORK_EVENT_VIA: &str = "framework lifecycle event";

/// What a consumer's `via` says after the library when the extractor knows the class that
/// handles the event (`event bus, handled by OrderPaidHandler`: a typed subscription
/// `AddSubscription<OrderPaid, OrderPaidHandler>()`, a `class X : IConsumer<OrderPaid>`): the
/// graph moves the consumer to that class's handler method (`index::handlers`).
pub const HANDLED_BY: &str = ", handled by ";

/// The handler class a consumer's `via` names after [`HANDLED_BY`], if any.
pub fn handler_in_via(via: &str) -> Option<&str> {
    let rest = &via[via.find(HANDLED_BY)? + HANDLED_BY.len()..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Short constructors of the gRPC facts tests build by hand.
#[cfg(test)]
impl GrpcFact {
    /// A server of `service` implemented by `impl_type` at `line`.
    pub fn server(service: &str, impl_type: Option<&str>, line: u32) -> GrpcFact {
        GrpcFact::Server {
            service: service.into(),
            impl_type: impl_type.map(str::to_string),
            line,
        }
    }

    /// A client of `service` held in `var` at `line`.
    pub fn client(service: &str, var: Option<&str>, line: u32) -> GrpcFact {
        GrpcFact::Client {
            service: service.into(),
            var: var.map(str::to_string),
            line,
        }
    }

    /// A call of `method` on the client of `service` held in `receiver`, at `line`.
    pub fn call(service: &str, receiver: &str, method: &str, line: u32) -> GrpcFact {
        GrpcFact::Call {
            service: Some(service.into()),
            receiver: receiver.into(),
            method: method.into(),
            line,
        }
    }
}

/// An event producer or consumer (Kafka and friends, or a configured custom pattern).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFact {
    pub role: EventRole,
    /// The topic, queue, routing key or channel as written (for typed event buses, the event
    /// type's name).
    pub topic: Value,
    /// The library or convention recognised (`kafkajs`, `sarama`, `@KafkaListener`, or the
    /// custom pattern's name).
    pub via: String,
    pub line: u32,
}

/// An HTTP route served, or an HTTP call made by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpFact {
    /// A route (`@GetMapping("/orders/{id}")`, `app.get('/orders/:id', h)`). `method` is upper
    /// case (`GET`), or `ANY` when the framework does not say; `path` is as written, joined with
    /// a class- or router-level prefix when the extractor can see it.
    Route {
        method: String,
        path: String,
        handler: Option<String>,
        line: u32,
    },
    /// A client call (`fetch("/orders/" + id)`, `http.Get(base + "/orders")`,
    /// `requests.get(f"{BASE}/x")`). `url` is the URL as written; the graph resolves its names
    /// and matches the path to routes.
    Call {
        method: Option<String>,
        url: Value,
        line: u32,
    },
    /// A router of another module mounted under a prefix (`app.use('/users', usersRouter)`,
    /// `app.include_router(items.router, prefix="/items")`): the graph prefixes the routes of
    /// that module's file. `router` is the expression as written (`usersRouter`,
    /// `items.router`), or the module specifier itself for an inline `require('./routes/users')`.
    Mount {
        prefix: String,
        router: String,
        line: u32,
    },
    /// A deployment's health check of its own service: a compose `healthcheck` that runs
    /// `curl http://localhost:8080/health`, a Kubernetes `httpGet` probe. It calls `path` on
    /// the service named `service` (a compose service or container; empty when the manifest
    /// does not say), so the route that serves it has a caller. `shown` is the check as written.
    Probe {
        service: String,
        path: String,
        shown: String,
        line: u32,
    },
    /// The API versions the routes declared on `line` of the same file serve (ASP.NET API
    /// versioning: `.HasApiVersion(1.0)` on the route or its group, narrowed by
    /// `.MapToApiVersion(2.0)`), as `major.minor` (`1.0`) or as written (`2023-01-01`). A
    /// route without one serves whatever version a caller asks for, or is not versioned.
    Versions { versions: Vec<String>, line: u32 },
    /// An in-app navigation of a web UI to a page of its own: a link in markup (`<a
    /// href="user/orders">`, `<NavLink href="cart">`, `href="~/grants"`) or a navigation call
    /// (`NavigationManager.NavigateTo($"item/{id}")`). `url` is the target as written (relative
    /// to the app's base when it has no leading `/`). The graph joins it to the `GET` route of
    /// the same root that serves it: a caller of that route, never a link between services.
    Navigate { url: Value, line: u32 },
    /// A class- or router-level prefix written as a name the file cannot read
    /// (`@RequestMapping(ApiPaths.ORDERS)` with the constant in another file): the routes
    /// declared on lines `first..=last` of the same file are listed without it, and the graph
    /// resolves `prefix` and serves them under it. `line` is where the prefix is written.
    Prefix {
        prefix: Value,
        first: u32,
        last: u32,
        line: u32,
    },
    /// A prefix the application puts in front of every route it serves (NestJS
    /// `app.setGlobalPrefix('api')`, ASP.NET `app.UsePathBase("/api")`): the graph serves the
    /// routes of every file of the same root under it. `prefix` is as written.
    AppPrefix { prefix: Value, line: u32 },
}

/// Short constructors of the HTTP facts tests build by hand.
#[cfg(test)]
impl HttpFact {
    /// A route `method path` served by `handler` at `line`.
    pub fn route(method: &str, path: &str, handler: Option<&str>, line: u32) -> HttpFact {
        HttpFact::Route {
            method: method.into(),
            path: path.into(),
            handler: handler.map(str::to_string),
            line,
        }
    }

    /// A call with `method` of the literal URL `url` at `line`.
    pub fn call(method: Option<&str>, url: &str, line: u32) -> HttpFact {
        HttpFact::Call {
            method: method.map(str::to_string),
            url: Value::lit(url),
            line,
        }
    }
}

/// Short constructors of the event facts tests build by hand.
#[cfg(test)]
impl EventFact {
    /// A `role` of `topic` through `via` at `line`.
    pub fn at(role: EventRole, topic: Value, via: &str, line: u32) -> EventFact {
        EventFact {
            role,
            topic,
            via: via.into(),
            line,
        }
    }
}

impl HttpFact {
    /// The line the fact was seen on.
    pub fn line(&self) -> u32 {
        match self {
            HttpFact::Route { line, .. }
            | HttpFact::Call { line, .. }
            | HttpFact::Mount { line, .. }
            | HttpFact::Probe { line, .. }
            | HttpFact::Versions { line, .. }
            | HttpFact::Navigate { line, .. }
            | HttpFact::Prefix { line, .. }
            | HttpFact::AppPrefix { line, .. } => *line,
        }
    }
}

/// A name bound to a value at the top level of a file (a constant, a package or module
/// variable, a static field): what references elsewhere resolve against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The name, qualified by its container when it has one (`Topics.ORDER_CREATED`), as code
    /// elsewhere would reference it.
    pub name: String,
    pub value: Value,
    pub line: u32,
}

/// A Markdown section: a heading and its body up to the next heading of any level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocSection {
    pub title: String,
    /// Heading level 1–6 (the text before the first heading is level 1, titled by the file stem).
    pub level: u8,
    pub line: u32,
    pub end_line: u32,
    /// The section's text (heading included), with prompt-injection phrases neutralised; filled
    /// by the indexer, empty straight out of the extractor.
    pub text: String,
}

/// A configuration key from a Spring YAML or `.properties` file, flattened with dots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub key: String,
    /// The value, already masked when the key is sensitive.
    pub value: String,
    pub line: u32,
}

/// An environment variable a deployment file sets: `KAFKA_TOPIC: orders` under a compose
/// service's `environment:`, or `- name: KAFKA_TOPIC` / `value: orders` in a Kubernetes
/// container. It answers an `os.Getenv("KAFKA_TOPIC")` that has no default in the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSetting {
    pub var: String,
    /// The value, already masked when the variable names a secret.
    pub value: String,
    pub line: u32,
    /// The compose service, Kubernetes workload or ConfigMap the variable is set for.
    pub service: String,
    /// The compose service's build context as written (`./orders`), relative to the file's
    /// directory: the strongest hint at which source root the service is.
    pub context: Option<String>,
}

/// A protobuf field label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldLabel {
    /// proto3 implicit presence (no label).
    Singular,
    Optional,
    Required,
    Repeated,
}

/// A field of a protobuf message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoField {
    pub name: String,
    pub number: u32,
    /// The type as written (`string`, `int64`, `Order`, `.acme.Order`); for a map field,
    /// `map<K,V>` with no spaces.
    pub type_name: String,
    pub label: FieldLabel,
    /// The `oneof` this field belongs to, if any.
    pub oneof: Option<String>,
    pub line: u32,
}

/// A protobuf message, flattened: nested messages appear as their own entries with a dotted
/// path name (`Outer.Inner`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoMessage {
    /// Dotted path within the file (`Order`, `Order.Item`).
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    pub fields: Vec<ProtoField>,
    /// Reserved number ranges, inclusive (`reserved 2, 9 to 11;` gives (2,2) and (9,11)).
    pub reserved_numbers: Vec<(u32, u32)>,
    pub reserved_names: Vec<String>,
}

/// One value of a protobuf enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoEnumValue {
    pub name: String,
    pub number: i32,
    pub line: u32,
}

/// A protobuf enum (top level or nested, with a dotted path name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoEnum {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    pub values: Vec<ProtoEnumValue>,
    pub reserved_numbers: Vec<(i32, i32)>,
    pub reserved_names: Vec<String>,
}

/// One `rpc` of a protobuf service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoRpc {
    pub name: String,
    pub request: String,
    pub response: String,
    pub client_streaming: bool,
    pub server_streaming: bool,
    pub line: u32,
}

/// A protobuf `service`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoService {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    pub rpcs: Vec<ProtoRpc>,
}

/// Everything a `.proto` file declares: the contract the wire-format check compares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtoFile {
    pub syntax: Option<String>,
    pub package: Option<String>,
    pub imports: Vec<String>,
    /// File options as written (`go_package`, `java_package`, …), name → value.
    pub options: Vec<(String, String)>,
    pub services: Vec<ProtoService>,
    pub messages: Vec<ProtoMessage>,
    pub enums: Vec<ProtoEnum>,
}

/// What one file contributes to the index. `Default` is an empty file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFacts {
    /// The language-level package or namespace (`package orders`, `package com.acme.orders;`,
    /// `namespace Acme.Orders`, proto `package acme.orders.v1;`), if the file declares one.
    pub package: Option<String>,
    /// Generated code (`*.pb.go`, `*_pb2.py`, "Code generated … DO NOT EDIT"): its facts are kept
    /// for search but never counted as a gRPC caller or server.
    pub generated: bool,
    pub symbols: Vec<Symbol>,
    pub imports: Vec<Import>,
    pub grpc: Vec<GrpcFact>,
    pub events: Vec<EventFact>,
    pub http: Vec<HttpFact>,
    pub bindings: Vec<Binding>,
    pub proto: Option<ProtoFile>,
    pub sections: Vec<DocSection>,
    pub properties: Vec<Property>,
    /// Environment variables a deployment file sets for a service (docker-compose
    /// `environment:`, Kubernetes `env:` and ConfigMap `data:`).
    pub env_settings: Vec<EnvSetting>,
    /// The URL-like arguments of the file's calls, named [`crate::index::lang::bind::call_arg_name`]
    /// (`call get#0` = what `helpers.get("/tags", res)` passes): a helper of another file
    /// whose request URL is its parameter is a request of each of these sites.
    pub call_args: Vec<Binding>,
}

impl FileFacts {
    /// Records a declaration spanning lines `line..=end_line` (an end before the start is read
    /// as the start); returns its index.
    pub(crate) fn push_symbol(
        &mut self,
        name: &str,
        kind: SymbolKind,
        (line, end_line): (u32, u32),
        doc_line: Option<u32>,
        container: Option<String>,
    ) -> usize {
        self.symbols.push(Symbol {
            name: name.to_string(),
            kind,
            line,
            end_line: end_line.max(line),
            doc_line,
            container,
        });
        self.symbols.len() - 1
    }

    /// Records a call of `method` on a gRPC client of `service` held in `receiver`, at `line`.
    pub(crate) fn push_grpc_call(
        &mut self,
        service: String,
        receiver: String,
        method: String,
        line: u32,
    ) {
        self.grpc.push(GrpcFact::Call {
            service: Some(service),
            receiver,
            method,
            line,
        });
    }

    /// The routes the file serves as (method, path, handler, line), in `http` order: the one
    /// place that picks them out of the other HTTP facts.
    pub(crate) fn routes(&self) -> impl Iterator<Item = (&str, &str, Option<&str>, u32)> {
        self.http.iter().filter_map(|h| match h {
            HttpFact::Route {
                method,
                path,
                handler,
                line,
            } => Some((method.as_str(), path.as_str(), handler.as_deref(), *line)),
            HttpFact::Call { .. }
            | HttpFact::Mount { .. }
            | HttpFact::Probe { .. }
            | HttpFact::Versions { .. }
            | HttpFact::Navigate { .. }
            | HttpFact::Prefix { .. }
            | HttpFact::AppPrefix { .. } => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_from_path() {
        assert_eq!(Language::of_path("a/b/main.go"), Some(Language::Go));
        assert_eq!(Language::of_path("x.TSX"), Some(Language::TypeScript));
        assert_eq!(Language::of_path("lib/x.mjs"), Some(Language::JavaScript));
        assert_eq!(Language::of_path("orders.proto"), Some(Language::Protobuf));
        assert_eq!(Language::of_path("Makefile"), None);
        assert_eq!(Language::of_path(".md"), None);
        assert_eq!(Language::of_path("photo.png"), None);
        assert_eq!(
            Language::of_path("Pages/Item.razor"),
            Some(Language::CSharp)
        );
        assert!(is_razor("Views/Home/Index.CSHTML") && is_razor("a/B.razor"));
        assert!(!is_razor("a/B.cs") && !is_razor("razor") && !is_razor("é"));
    }

    #[test]
    fn an_import_knows_the_local_name_of_each_name() {
        let imp = Import {
            module: "./config".into(),
            names: vec!["BASE".into(), "TIMEOUT".into()],
            alias: None,
            line: 1,
            reexport: false,
            renamed: vec![("BASE".into(), "API".into())],
        };
        assert_eq!(imp.imported_as("API"), Some("BASE"));
        assert_eq!(imp.imported_as("TIMEOUT"), Some("TIMEOUT"));
        // The original name of a renamed import is not bound in the file.
        assert_eq!(imp.imported_as("BASE"), None);
        assert_eq!(imp.imported_as("other"), None);
        assert_eq!(imp.local_names().collect::<Vec<_>>(), ["API", "TIMEOUT"]);
    }

    #[test]
    fn the_handler_class_is_read_back_from_a_via() {
        assert_eq!(
            handler_in_via("event bus, handled by OrderPaidHandler"),
            Some("OrderPaidHandler")
        );
        assert_eq!(
            handler_in_via("MassTransit, handled by Größe_Mailer; registered at a.cs:3"),
            Some("Größe_Mailer")
        );
        assert_eq!(handler_in_via("event bus"), None);
        assert_eq!(handler_in_via("event bus, handled by "), None);
    }

    #[test]
    fn kind_order_ranks_contracts_first() {
        assert!(SymbolKind::Service < SymbolKind::Message);
        assert!(SymbolKind::Message < SymbolKind::Class);
        assert!(SymbolKind::Class < SymbolKind::Function);
    }
}
