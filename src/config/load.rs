//! Reading a config file: its sections and keys checked one by one, each mistake a
//! [`ConfigError`] naming the file, the line and the fix.

use super::detect::{default_name, detected_roots};
use super::roots::{ExpandError, check_prohibited, expand_vars};
use super::toml::{self, Item, Table, Value};
use super::{
    AuditConfig, CacheConfig, Config, ConfigError, CustomPattern, DocsConfig, Env, POLICY_MODES,
    PatternKind, PolicyConfig, canonical, workspace_dir,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Reading state for one config file.
pub(super) struct Ctx<'a> {
    pub(super) file: PathBuf,
    pub(super) base: PathBuf,
    pub(super) env: Env<'a>,
    pub(super) warnings: Vec<String>,
}

const TOP_KEYS: &[&str] = &["workspace", "docs", "patterns", "policy", "audit", "cache"];
const WORKSPACE_KEYS: &[&str] = &["name", "roots", "exclude"];
const DOCS_KEYS: &[&str] = &["enabled", "paths", "aliases", "stop_words"];
const PATTERN_KEYS: &[&str] = &["name", "kind", "files", "regex", "topic_group"];
const POLICY_KEYS: &[&str] = &["mode", "stop_rules"];
const AUDIT_KEYS: &[&str] = &["enabled"];
const CACHE_KEYS: &[&str] = &["enabled", "max_size_mb"];

/// The largest config file read: a mesh-mcp.toml is a few KB; this keeps `--config
/// /dev/zero`-style mistakes from eating memory (devices and FIFOs are refused before that).
pub(super) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The text of a config file: a regular file (a FIFO, device or directory is refused without
/// blocking) of at most [`MAX_CONFIG_BYTES`], in UTF-8.
fn read_config(path: &Path) -> Result<String, ConfigError> {
    let unusable = |reason: String| ConfigError::Unusable {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = crate::index::crawl::read_regular(path, MAX_CONFIG_BYTES).map_err(|error| {
        match error.kind() {
            std::io::ErrorKind::InvalidInput => unusable(format!(
                "is {error}; point --config at a mesh-mcp.toml file (or leave it out to use \
                 .agents/mesh-mcp.toml, mesh-mcp.toml or zero-config)"
            )),
            std::io::ErrorKind::InvalidData => unusable(format!(
                "is over {} KiB, too large for a config file; check that it names your \
                 mesh-mcp.toml (`mesh-mcp init` writes one)",
                MAX_CONFIG_BYTES / 1024
            )),
            _ => ConfigError::Io {
                path: path.to_path_buf(),
                error,
            },
        }
    })?;
    String::from_utf8(bytes).map_err(|e| {
        unusable(format!(
            "is not UTF-8 text (invalid byte at offset {}); a config file is TOML in UTF-8",
            e.utf8_error().valid_up_to()
        ))
    })
}

pub(super) fn load_file(path: &Path, env: Env) -> Result<Config, ConfigError> {
    let text = read_config(path)?;
    // Canonicalise the directory, not the file: a symlinked config belongs where it is linked.
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = canonical(parent.unwrap_or(Path::new(".")))?;
    let file = dir.join(path.file_name().unwrap_or_default());
    let doc = toml::parse(&text).map_err(|e| ConfigError::Syntax {
        file: file.clone(),
        line: e.line,
        message: e.message,
    })?;
    let base = workspace_dir(&file);
    let mut cx = Ctx {
        file,
        base,
        env,
        warnings: Vec::new(),
    };
    let config = cx.build(&doc)?;
    tracing::debug!(target: "mesh::config", file = %cx.file.display(), roots = config.roots.len(), "config loaded");
    Ok(config)
}

impl Ctx<'_> {
    pub(super) fn bad(&self, line: u32, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::BadValue {
            file: self.file.clone(),
            line,
            key: key.to_string(),
            message: message.into(),
        }
    }

    fn check_keys(
        &self,
        section: &str,
        table: &Table,
        allowed: &'static [&'static str],
    ) -> Result<(), ConfigError> {
        match table.iter().find(|(k, _)| !allowed.contains(k)) {
            Some((key, item)) => Err(ConfigError::UnknownKey {
                file: self.file.clone(),
                line: item.line,
                section: section.to_string(),
                // Echoed in the message: bounded, a 100 KB key is not sent back whole.
                key: crate::protocol::echo_input(key),
                allowed,
            }),
            None => Ok(()),
        }
    }

    fn section<'t>(
        &self,
        doc: &'t Table,
        name: &str,
        allowed: &'static [&'static str],
    ) -> Result<Option<&'t Table>, ConfigError> {
        let Some(item) = doc.get(name) else {
            return Ok(None);
        };
        match &item.value {
            Value::Table(t) => {
                self.check_keys(name, t, allowed)?;
                Ok(Some(t))
            }
            other => Err(self.bad(
                item.line,
                name,
                format!(
                    "expected a [{name}] section, found {}; write the keys under a [{name}] \
                     header",
                    other.type_name()
                ),
            )),
        }
    }

    fn string(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<(String, u32)>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        match &item.value {
            Value::String(s) => Ok(Some((s.clone(), item.line))),
            other => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!(
                    "expected a string, found {}; put the value in quotes",
                    other.type_name()
                ),
            )),
        }
    }

    fn boolean(&self, section: &str, t: &Table, key: &str) -> Result<Option<bool>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        match &item.value {
            Value::Boolean(b) => Ok(Some(*b)),
            other => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!("expected true or false, found {}", other.type_name()),
            )),
        }
    }

    fn unsigned(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<(u64, u32)>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        match &item.value {
            Value::Integer(n) if *n >= 0 => Ok(Some((*n as u64, item.line))),
            Value::Integer(n) => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!("expected a non-negative integer, found {n}"),
            )),
            other => Err(self.bad(
                item.line,
                &format!("{section}.{key}"),
                format!("expected an integer, found {}", other.type_name()),
            )),
        }
    }

    fn strings(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<Vec<(String, u32)>>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        let full = format!("{section}.{key}");
        let Value::Array(items) = &item.value else {
            let hint = match &item.value {
                Value::String(s) => format!("; write {key} = [{s:?}]"),
                _ => String::new(),
            };
            return Err(self.bad(
                item.line,
                &full,
                format!(
                    "expected an array of strings, found {}{hint}",
                    item.value.type_name()
                ),
            ));
        };
        items
            .iter()
            .map(|i: &Item| match &i.value {
                Value::String(s) => Ok((s.clone(), i.line)),
                other => Err(self.bad(
                    i.line,
                    &full,
                    format!(
                        "expected an array of strings, found {} in it",
                        other.type_name()
                    ),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn string_map(
        &self,
        section: &str,
        t: &Table,
        key: &str,
    ) -> Result<Option<Vec<(String, String)>>, ConfigError> {
        let Some(item) = t.get(key) else {
            return Ok(None);
        };
        let full = format!("{section}.{key}");
        let Value::Table(map) = &item.value else {
            return Err(self.bad(
                item.line,
                &full,
                format!(
                    "expected a table of strings (`{key} = {{ word = \"text\" }}` or a \
                     [{full}] section), found {}",
                    item.value.type_name()
                ),
            ));
        };
        map.iter()
            .map(|(k, i)| match &i.value {
                Value::String(s) => Ok((k.to_string(), s.clone())),
                other => Err(self.bad(
                    i.line,
                    &format!("{full}.{k}"),
                    format!(
                        "expected a string, found {}; put the value in quotes",
                        other.type_name()
                    ),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    pub(super) fn expand(&self, text: &str, line: u32, key: &str) -> Result<String, ConfigError> {
        expand_vars(text, self.env).map_err(|e| match e {
            ExpandError::Unset(name) => ConfigError::UnsetVariable {
                file: self.file.clone(),
                line,
                name,
            },
            ExpandError::Syntax(message) => self.bad(line, key, message),
        })
    }

    fn build(&mut self, doc: &Table) -> Result<Config, ConfigError> {
        self.check_keys("", doc, TOP_KEYS)?;
        let workspace = self.section(doc, "workspace", WORKSPACE_KEYS)?;
        let empty = Table::default();
        let ws = workspace.unwrap_or(&empty);

        let name = match self.string("workspace", ws, "name")? {
            Some((n, line)) if n.trim().is_empty() => {
                return Err(self.bad(
                    line,
                    "workspace.name",
                    "the name is empty; remove the key to use the directory name",
                ));
            }
            Some((n, _)) => n,
            None => default_name(&self.base),
        };

        let roots = match self.strings("workspace", ws, "roots")? {
            Some(list) if list.is_empty() => {
                let line = ws.get("roots").map_or(1, |i| i.line);
                return Err(self.bad(
                    line,
                    "workspace.roots",
                    "the list is empty; list at least one directory, or remove the key to \
                     detect the layout automatically",
                ));
            }
            Some(list) => self.resolve_roots(&list)?,
            None => {
                let base = self.base.clone();
                check_prohibited(&base, self.env, Some((self.file.clone(), 1)))?;
                detected_roots(&base)
            }
        };

        let excludes = self
            .strings("workspace", ws, "exclude")?
            .unwrap_or_default()
            .into_iter()
            .map(|(p, line)| self.workspace_pattern(&p, line, "workspace.exclude"))
            .collect::<Result<Vec<_>, _>>()?;

        let docs = self.docs(doc)?;
        let patterns = self.patterns(doc)?;
        let policy = self.policy(doc)?;

        let mut audit = AuditConfig::default();
        if let Some(t) = self.section(doc, "audit", AUDIT_KEYS)? {
            audit.enabled = self.boolean("audit", t, "enabled")?.unwrap_or(true);
        }
        let mut cache = CacheConfig::default();
        if let Some(t) = self.section(doc, "cache", CACHE_KEYS)? {
            if let Some(enabled) = self.boolean("cache", t, "enabled")? {
                cache.enabled = enabled;
            }
            if let Some((mb, line)) = self.unsigned("cache", t, "max_size_mb")? {
                if mb == 0 {
                    return Err(self.bad(
                        line,
                        "cache.max_size_mb",
                        "0 MiB leaves no room; use `enabled = false` to switch the cache off",
                    ));
                }
                cache.max_size_mb = mb;
            }
        }

        Ok(Config {
            base_dir: self.base.clone(),
            config_file: Some(self.file.clone()),
            name,
            roots,
            excludes,
            docs,
            patterns,
            policy,
            audit,
            cache,
            warnings: std::mem::take(&mut self.warnings),
        })
    }

    fn docs(&mut self, doc: &Table) -> Result<DocsConfig, ConfigError> {
        let mut docs = DocsConfig::default();
        let Some(t) = self.section(doc, "docs", DOCS_KEYS)? else {
            return Ok(docs);
        };
        docs.enabled = self.boolean("docs", t, "enabled")?.unwrap_or(true);
        docs.paths = self
            .strings("docs", t, "paths")?
            .unwrap_or_default()
            .into_iter()
            .map(|(p, line)| self.workspace_pattern(&p, line, "docs.paths"))
            .collect::<Result<_, _>>()?;
        // Inserted one by one (the last of a repeated key wins, as with `collect()`), which
        // needs no sort instance for the pairs.
        docs.aliases = BTreeMap::new();
        docs.aliases
            .extend(self.string_map("docs", t, "aliases")?.unwrap_or_default());
        docs.stop_words = self
            .strings("docs", t, "stop_words")?
            .unwrap_or_default()
            .into_iter()
            .map(|(w, _)| w)
            .collect();
        if !docs.enabled
            && (!docs.paths.is_empty() || !docs.aliases.is_empty() || !docs.stop_words.is_empty())
        {
            self.warnings.push(format!(
                "{}: [docs] enabled = false, so paths, aliases and stop_words have no effect",
                self.file.display()
            ));
        }
        Ok(docs)
    }

    fn patterns(&self, doc: &Table) -> Result<Vec<CustomPattern>, ConfigError> {
        let Some(item) = doc.get("patterns") else {
            return Ok(Vec::new());
        };
        let Value::Array(elements) = &item.value else {
            return Err(self.bad(
                item.line,
                "patterns",
                format!(
                    "expected an array of tables, found {}; write each pattern under its own \
                     [[patterns]] header (double brackets)",
                    item.value.type_name()
                ),
            ));
        };
        let mut out: Vec<CustomPattern> = Vec::new();
        for el in elements {
            let Value::Table(t) = &el.value else {
                return Err(self.bad(
                    el.line,
                    "patterns",
                    format!(
                        "expected a table, found {}; use [[patterns]] sections",
                        el.value.type_name()
                    ),
                ));
            };
            self.check_keys("patterns", t, PATTERN_KEYS)?;
            let required = |key: &str| -> Result<(String, u32), ConfigError> {
                match self.string("patterns", t, key)? {
                    Some((v, line)) if v.is_empty() => {
                        Err(self.bad(line, &format!("patterns.{key}"), "the value is empty"))
                    }
                    Some(v) => Ok(v),
                    None => Err(self.bad(
                        el.line,
                        &format!("patterns.{key}"),
                        format!("missing required key `{key}` in this [[patterns]] entry"),
                    )),
                }
            };
            let (name, name_line) = required("name")?;
            if out.iter().any(|p| p.name == name) {
                return Err(self.bad(
                    name_line,
                    "patterns.name",
                    format!("pattern name `{name}` is used twice; give each pattern its own name"),
                ));
            }
            let (kind, kind_line) = required("kind")?;
            let kind = match kind.as_str() {
                "producer" => PatternKind::Producer,
                "consumer" => PatternKind::Consumer,
                other => {
                    return Err(self.bad(
                        kind_line,
                        "patterns.kind",
                        format!(
                            "`{other}` is not a pattern kind; allowed values: producer, consumer"
                        ),
                    ));
                }
            };
            let (regex, _) = required("regex")?;
            let file_glob = self.string("patterns", t, "files")?.map(|(g, _)| g);
            let topic_group = match self.unsigned("patterns", t, "topic_group")? {
                Some((n, line)) => usize::try_from(n).map_err(|_| {
                    self.bad(
                        line,
                        "patterns.topic_group",
                        "the capture group index is too large",
                    )
                })?,
                None => 1,
            };
            out.push(CustomPattern {
                name,
                kind,
                file_glob,
                regex,
                topic_group,
            });
        }
        Ok(out)
    }

    fn policy(&mut self, doc: &Table) -> Result<PolicyConfig, ConfigError> {
        let mut policy = PolicyConfig::default();
        let Some(t) = self.section(doc, "policy", POLICY_KEYS)? else {
            return Ok(policy);
        };
        if let Some((mode, line)) = self.string("policy", t, "mode")? {
            if !POLICY_MODES.contains(&mode.as_str()) {
                return Err(self.bad(
                    line,
                    "policy.mode",
                    format!(
                        "`{mode}` is not a policy mode; allowed values: {}",
                        POLICY_MODES.join(", ")
                    ),
                ));
            }
            policy.mode = mode;
        }
        policy.stop_rules = self
            .string_map("policy", t, "stop_rules")?
            .unwrap_or_default();
        if policy.mode == "allow_all" && !policy.stop_rules.is_empty() {
            self.warnings.push(format!(
                "{}: [policy] mode = \"allow_all\" never applies the {} stop rule(s); set mode = \
                 \"audit_warn\" or \"enforce_refusal\"",
                self.file.display(),
                policy.stop_rules.len()
            ));
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CONFIG_FILE_NAME;
    use crate::config::tests::{TempDir, labels, load, no_env};

    #[test]
    fn devices_fifos_directories_and_huge_files_are_refused_at_once() {
        let dir = TempDir::new("unusable");
        let fifo = dir.path().join("pipe.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let huge = dir.path().join("huge.toml");
        fs_write_len(&huge, MAX_CONFIG_BYTES as usize + 1);
        let binary = dir.path().join("bin.toml");
        std::fs::write(&binary, b"a = \"\xff\"\n").unwrap();
        let mut cases: Vec<(std::path::PathBuf, &str)> = vec![
            (
                "/dev/zero".into(),
                "is a device, not a regular file; point --config at",
            ),
            (
                dir.path().to_path_buf(),
                "is a directory, not a regular file",
            ),
            (huge, "is over 1024 KiB, too large for a config file"),
            (binary, "is not UTF-8 text"),
        ];
        if made.is_ok_and(|s| s.success()) {
            // No writer ever comes: a blocking open would hang the test here.
            cases.push((fifo, "is a FIFO (named pipe), not a regular file"));
        }
        for (path, want) in cases {
            let err = load_file(&path, &no_env).unwrap_err().to_string();
            assert!(
                err.starts_with(&path.display().to_string()) && err.contains(want),
                "{}: {err}",
                path.display()
            );
        }
        // At the limit it is read (and then parsed: all comments here).
        let big = dir.path().join("big.toml");
        fs_write_len(&big, MAX_CONFIG_BYTES as usize);
        assert!(load_file(&big, &no_env).is_ok());
    }

    /// Writes a TOML file of exactly `len` bytes (comment lines).
    fn fs_write_len(path: &std::path::Path, len: usize) {
        let mut text = String::with_capacity(len);
        while text.len() + 64 <= len {
            text.push_str(&format!("#{}\n", "x".repeat(62)));
        }
        text.push_str(&"#".repeat(len - text.len()));
        std::fs::write(path, text).unwrap();
    }

    const FULL: &str = r#"
[workspace]
name = "shop"
roots = ["services/*", "proto", "docs"]
exclude = ["**/fixtures/**", "./gen/"]

[docs]
enabled = true
paths = ["docs/**"]
aliases = { k8s = "kubernetes", dlq = "dead-letter-queue" }
stop_words = ["the", "a"]

[[patterns]]
name = "outbox"
kind = "producer"
files = "*.ts"
regex = 'outbox\.publish\(\s*"([^"]+)"'
topic_group = 1

[[patterns]]
name = "inbox"
kind = "consumer"
regex = 'inbox\.on\("([^"]+)"'

[policy]
mode = "enforce_refusal"
[policy.stop_rules]
deploy = "Infrastructure changes need a review by the platform team."
proto = "Contract first."

[audit]
enabled = false

[cache]
enabled = true
max_size_mb = 64
"#;

    #[test]
    fn full_example_is_read() {
        let d = TempDir::new("full");
        d.dir("services/orders")
            .dir("services/payments")
            .dir("proto")
            .dir("docs");
        d.file("services/README.md", "not a root");
        let c = load(&d, FULL).unwrap();
        assert_eq!(c.base_dir, d.path());
        assert_eq!(
            c.config_file.as_deref(),
            Some(d.path().join(CONFIG_FILE_NAME).as_path())
        );
        assert_eq!(c.name, "shop");
        assert_eq!(
            labels(&c),
            ["docs", "proto", "services/orders", "services/payments"]
        );
        assert_eq!(c.roots[2].path, d.path().join("services/orders"));
        assert_eq!(c.excludes, ["**/fixtures/**", "gen/"]);
        assert!(c.docs.enabled);
        assert_eq!(c.docs.paths, ["docs/**"]);
        assert_eq!(
            c.docs.aliases.get("dlq").map(String::as_str),
            Some("dead-letter-queue")
        );
        assert_eq!(c.docs.aliases.len(), 2);
        assert_eq!(c.docs.stop_words, ["the", "a"]);
        assert_eq!(
            c.patterns[0],
            CustomPattern {
                name: "outbox".into(),
                kind: PatternKind::Producer,
                file_glob: Some("*.ts".into()),
                regex: r#"outbox\.publish\(\s*"([^"]+)""#.into(),
                topic_group: 1,
            }
        );
        assert_eq!(c.patterns[1].kind, PatternKind::Consumer);
        assert_eq!(c.patterns[1].file_glob, None);
        assert_eq!(c.patterns[1].topic_group, 1);
        assert_eq!(c.policy.mode, "enforce_refusal");
        assert_eq!(c.policy.stop_rules[0].0, "deploy");
        assert_eq!(
            c.policy.stop_rules[1],
            ("proto".into(), "Contract first.".into())
        );
        assert!(!c.audit.enabled);
        assert_eq!(
            c.cache,
            CacheConfig {
                enabled: true,
                max_size_mb: 64
            }
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn defaults_when_sections_are_missing() {
        let d = TempDir::new("defaults");
        let c = load(&d, "[workspace]\nroots = [\".\"]\n").unwrap();
        assert_eq!(c.name, d.path().file_name().unwrap().to_string_lossy());
        assert_eq!(labels(&c), ["."]);
        assert_eq!(c.docs, DocsConfig::default());
        assert_eq!(c.policy.mode, "allow_all");
        assert!(c.audit.enabled);
        assert_eq!(
            c.cache,
            CacheConfig {
                enabled: crate::index::cache::ENABLED_BY_DEFAULT,
                max_size_mb: 256
            }
        );
        // No roots key: the layout is detected as in zero-config.
        d.file("services/a/go.mod", "module a");
        let c = load(&d, "[docs]\nstop_words = [\"the\"]\n").unwrap();
        assert_eq!(labels(&c), [".", "services/a"]);
    }

    #[test]
    fn unknown_keys_name_file_line_and_allowed_keys() {
        let d = TempDir::new("unknown");
        d.dir("services");
        let e = load(&d, "# c\n[workspace]\nname = \"x\"\n\n\n\nrots = [\"a\"]\n").unwrap_err();
        let file = d.path().join(CONFIG_FILE_NAME);
        assert_eq!(
            e.to_string(),
            format!(
                "{}:7: unknown key `rots` in [workspace]; allowed keys: name, roots, exclude",
                file.display()
            )
        );
        let e = load(&d, "[workspace]\nroots = [\".\"]\n[engines]\nx = 1\n").unwrap_err();
        assert!(
            matches!(&e, ConfigError::UnknownKey { line: 3, key, section, .. } if key == "engines" && section.is_empty()),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("allowed sections: workspace, docs, patterns, policy, audit, cache"),
            "{e}"
        );
        let e = load(&d, "[policy]\nmode = \"allow_all\"\n[policy.rules]\n").unwrap_err();
        assert!(
            e.to_string()
                .contains(":3: unknown key `rules` in [policy]; allowed keys: mode, stop_rules"),
            "{e}"
        );
        let e = load(
            &d,
            "[[patterns]]\nname = \"a\"\nkind = \"producer\"\nregex = \"x\"\nfile = \"*.ts\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains(":5: unknown key `file` in [patterns]; allowed keys: name, kind, files, regex, topic_group"), "{e}");
        let e = load(&d, "top = 1\n").unwrap_err();
        assert!(matches!(e, ConfigError::UnknownKey { line: 1, .. }), "{e}");
        let e = load(&d, "[cache]\nmax_size = 1\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("in [cache]; allowed keys: enabled, max_size_mb"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_are_explained() {
        let d = TempDir::new("bad");
        let cases: &[(&str, u32, &str)] = &[
            (
                "[policy]\nmode = \"strict\"\n",
                2,
                "allowed values: allow_all, audit_warn, enforce_refusal",
            ),
            (
                "[workspace]\nroots = \"services/*\"\n",
                2,
                "write roots = [\"services/*\"]",
            ),
            (
                "[workspace]\nroots = []\n",
                2,
                "list at least one directory",
            ),
            (
                "[workspace]\nroots = [\".\", 3]\n",
                2,
                "found an integer in it",
            ),
            ("[docs]\nenabled = \"yes\"\n", 2, "expected true or false"),
            (
                "[docs]\naliases = [\"a\"]\n",
                2,
                "expected a table of strings",
            ),
            ("[docs]\naliases = { a = 1 }\n", 2, "`docs.aliases.a`"),
            ("[cache]\nmax_size_mb = -1\n", 2, "non-negative"),
            ("[cache]\nmax_size_mb = 0\n", 2, "enabled = false"),
            (
                "[cache]\nmax_size_mb = 1.5\n",
                2,
                "expected an integer, found a float",
            ),
            ("workspace = 1\n", 1, "expected a [workspace] section"),
            (
                "[patterns]\nname = \"x\"\n",
                1,
                "[[patterns]] header (double brackets)",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"publisher\"\nregex = \"x\"\n",
                3,
                "allowed values: producer, consumer",
            ),
            (
                "\n[[patterns]]\nname = \"x\"\nkind = \"producer\"\n",
                2,
                "missing required key `regex`",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"producer\"\nregex = \"\"\n",
                4,
                "empty",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"producer\"\nregex = \"a\"\ntopic_group = -2\n",
                5,
                "non-negative",
            ),
            (
                "[[patterns]]\nname = \"x\"\nkind = \"producer\"\nregex = \"a\"\n[[patterns]]\nname = \"x\"\nkind = \"consumer\"\nregex = \"b\"\n",
                6,
                "used twice",
            ),
            ("[workspace]\nname = \"\"\n", 2, "name is empty"),
            ("[workspace]\nexclude = [\"../x\"]\n", 2, "cannot use `..`"),
        ];
        for (text, line, needle) in cases {
            let e = load(&d, text).expect_err(text);
            assert!(
                matches!(&e, ConfigError::BadValue { line: l, .. } if l == line),
                "{text}: {e}"
            );
            assert!(e.to_string().contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn syntax_errors_carry_file_and_line() {
        let d = TempDir::new("syntax");
        let e = load(&d, "[workspace]\nroots = [\"a\",\n  \"b\" \"c\"]\n").unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { line: 3, .. }), "{e}");
        let file = d.path().join(CONFIG_FILE_NAME);
        assert!(
            e.to_string()
                .starts_with(&format!("{}:3: expected `,` or `]`", file.display())),
            "{e}"
        );
        let e = load(&d, "[[patterns]]\nregex = \"outbox\\.publish\"\n").unwrap_err();
        assert!(e.to_string().contains(":2: unknown escape"), "{e}");
    }
    #[test]
    fn warnings_for_settings_without_effect() {
        let d = TempDir::new("warn");
        let c = load(&d, "[policy]\n[policy.stop_rules]\ndeploy = \"no\"\n[docs]\nenabled = false\nstop_words = [\"a\"]\n").unwrap();
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.contains("never applies the 1 stop rule"))
        );
        assert!(c.warnings.iter().any(|w| w.contains("have no effect")));
    }
}
