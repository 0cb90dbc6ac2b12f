//! The wire-format compatibility diff of two versions of one `.proto` file: plain
//! [`ProtoFile`]s in, a list of findings out. No git, no I/O (`analyze_grpc` fetches the base).
//!
//! Messages and enums are matched by their dotted path (`Order.Item`); `oneof` members are
//! ordinary fields of the enclosing message, so they share its number space. Breaking rules:
//! a field number reused (including a number the base had `reserved`), a field renumbered, a
//! type changed across wire groups, a cardinality change the wire cannot absorb, a field or enum
//! value deleted without reserving its number, an enum value renumbered, an enum number reused,
//! and a field moved into an existing `oneof`. Wire groups: varint (`int32`, `int64`,
//! `uint32`, `uint64`, `bool` and enums of the same file), zig-zag (`sint32`, `sint64`),
//! 32-bit (`fixed32`, `sfixed32`), 64-bit (`fixed64`, `sfixed64`), `float`, `double`, and
//! length-delimited pairs `string`↔`bytes` and `bytes`↔message (a message only to itself).
//! `float`/`double` stand alone: they share a wire type with `fixed32`/`fixed64`, but a reader
//! reinterprets the bits as a different number. Warnings (not counted as breaking): in-place
//! renames (JSON and text formats carry names), a deleted field whose name is not reserved, a
//! type declared in another file whose change cannot be decided here, removed messages and
//! enums, and `oneof` moves that are only safe when writers set one member at a time.

use crate::index::facts::{FieldLabel, ProtoEnum, ProtoField, ProtoFile, ProtoMessage};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// A number now used by a different field (or one the base had reserved).
    FieldNumberReused,
    /// A field kept its name but changed its number.
    FieldRenumbered,
    /// A field's type moved to another wire group.
    FieldTypeChanged,
    /// singular ↔ repeated ↔ map, or `required` added/removed, in a way the wire cannot absorb.
    FieldCardinalityChanged,
    /// A field removed without reserving its number.
    FieldDeleted,
    /// A field moved into a `oneof` that already existed, or between `oneof`s.
    OneofMembershipChanged,
    /// An enum value kept its name but changed its number.
    EnumValueRenumbered,
    /// A new enum value took a number the base had reserved, or of a value retired by name.
    EnumNumberReused,
    /// An enum value removed without reserving its number.
    EnumValueDeleted,
    /// Warning: a field or enum value renamed in place (same number).
    Renamed,
    /// Warning: a field or enum value deleted with its number reserved but not its name.
    NameNotReserved,
    /// Warning: a type change involving a type declared in another file, or a type renamed.
    TypeUndecidable,
    /// Warning: a message or enum of the base is gone (removed or renamed).
    TypeRemoved,
    /// Warning: a field moved out of a `oneof`, or several fields into a new one.
    OneofMove,
}

impl Rule {
    /// A short lowercase description used in the rendered finding.
    pub fn label(self) -> &'static str {
        match self {
            Rule::FieldNumberReused => "field number reused",
            Rule::FieldRenumbered => "field renumbered",
            Rule::FieldTypeChanged => "incompatible type change",
            Rule::FieldCardinalityChanged => "cardinality change",
            Rule::FieldDeleted => "field deleted without `reserved`",
            Rule::OneofMembershipChanged => "oneof membership change",
            Rule::EnumValueRenumbered => "enum value renumbered",
            Rule::EnumNumberReused => "enum number reused",
            Rule::EnumValueDeleted => "enum value deleted without `reserved`",
            Rule::Renamed => "renamed in place",
            Rule::NameNotReserved => "name not reserved",
            Rule::TypeUndecidable => "type change not decidable here",
            Rule::TypeRemoved => "type removed or renamed",
            Rule::OneofMove => "oneof move",
        }
    }

    /// True for the rules that break the wire format (the rest are warnings).
    pub fn is_breaking(self) -> bool {
        !matches!(
            self,
            Rule::Renamed
                | Rule::NameNotReserved
                | Rule::TypeUndecidable
                | Rule::TypeRemoved
                | Rule::OneofMove
        )
    }
}

/// One finding of the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: Rule,
    /// The element concerned: `Order.total` (field), `Status.CANCELLED` (enum value),
    /// `Order.Item` (type).
    pub element: String,
    /// The field or enum number concerned (0 for a whole type).
    pub number: i64,
    /// The line of the element: in the current file, or in the base when `in_base`.
    pub line: u32,
    pub in_base: bool,
    /// What changed, in a sentence fragment (`int64 → string`).
    pub detail: String,
    /// What to do about it.
    pub remediation: String,
}

/// Everything the diff found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireReport {
    /// Findings tagged `WIRE_FORMAT_BREAKING_CHANGE`.
    pub breaking: Vec<Finding>,
    pub warnings: Vec<Finding>,
}

impl WireReport {
    fn push(&mut self, f: Finding) {
        if f.rule.is_breaking() {
            self.breaking.push(f);
        } else {
            self.warnings.push(f);
        }
    }
}

/// How a type travels on the wire, as far as this file can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TypeClass {
    /// int32, int64, uint32, uint64, bool.
    Varint,
    /// An enum declared in this file (its dotted path).
    Enum(String),
    ZigZag,
    Fixed32,
    Fixed64,
    Float,
    Double,
    String,
    Bytes,
    /// A message declared in this file (its dotted path).
    Message(String),
    /// A proto2 group declared in this file (its dotted path).
    Group(String),
    /// A name not declared in this file (imported): a message or an enum, we cannot tell.
    External(String),
}

impl TypeClass {
    fn is_length_delimited(&self) -> Option<bool> {
        match self {
            TypeClass::String | TypeClass::Bytes | TypeClass::Message(_) => Some(true),
            TypeClass::External(_) => None,
            _ => Some(false),
        }
    }
}

/// The outcome of comparing two types.
enum Compat {
    Same,
    Breaking,
    /// Not decidable from this file (or a renamed type); the reason.
    Undecidable(String),
}

/// Resolves a field type as written, from inside message `scope`, against the declarations of
/// `file` (protobuf scoping: innermost scope first, then outwards; a leading `.` or the file's
/// package prefix means fully qualified).
fn classify(file: &ProtoFile, scope: &str, written: &str, lookup: &Declared) -> TypeClass {
    match written {
        "int32" | "int64" | "uint32" | "uint64" | "bool" => return TypeClass::Varint,
        "sint32" | "sint64" => return TypeClass::ZigZag,
        "fixed32" | "sfixed32" => return TypeClass::Fixed32,
        "fixed64" | "sfixed64" => return TypeClass::Fixed64,
        "float" => return TypeClass::Float,
        "double" => return TypeClass::Double,
        "string" => return TypeClass::String,
        "bytes" => return TypeClass::Bytes,
        _ => {}
    }
    let absolute = written.starts_with('.');
    let mut name = written.trim_start_matches('.');
    let mut prefix = scope;
    if let Some(pkg) = file.package.as_deref().filter(|p| !p.is_empty())
        && let Some(rest) = name.strip_prefix(pkg).and_then(|r| r.strip_prefix('.'))
    {
        // Qualified with this file's package: look it up from the file level only.
        name = rest;
        prefix = "";
    } else if absolute {
        return TypeClass::External(name.to_string());
    }
    // Innermost scope first: `A.B` looks in `A.B.`, `A.`, then the file level.
    loop {
        let candidate = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        };
        if let Some(kind) = lookup.get(&candidate) {
            return match kind {
                DeclKind::Message => TypeClass::Message(candidate),
                DeclKind::Group => TypeClass::Group(candidate),
                DeclKind::Enum => TypeClass::Enum(candidate),
            };
        }
        if prefix.is_empty() {
            break;
        }
        prefix = prefix.rsplit_once('.').map_or("", |(p, _)| p);
    }
    TypeClass::External(written.trim_start_matches('.').to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclKind {
    Message,
    Group,
    Enum,
}

/// The messages, groups and enums a file declares, by dotted path. A list scanned from the end
/// (a later entry for a path wins, as an insert into a map would): files declare tens of
/// types, and a map of its own would be one more B-tree instance (the binary size budget,
/// docs/ARCHITECTURE.md §7).
struct Declared {
    kinds: Vec<(String, DeclKind)>,
}

impl Declared {
    fn of(file: &ProtoFile) -> Declared {
        let mut kinds = Vec::new();
        for m in &file.messages {
            kinds.push((m.name.clone(), DeclKind::Message));
        }
        // A proto2 group is a field whose type is a nested message declared on the same line.
        for m in &file.messages {
            for f in &m.fields {
                let nested = format!("{}.{}", m.name, f.type_name);
                if let Some(inner) = file.messages.iter().find(|x| x.name == nested)
                    && inner.line == f.line
                    && f.name == f.type_name.to_ascii_lowercase()
                {
                    kinds.push((nested, DeclKind::Group));
                }
            }
        }
        for e in &file.enums {
            kinds.push((e.name.clone(), DeclKind::Enum));
        }
        Declared { kinds }
    }

    fn get(&self, name: &str) -> Option<DeclKind> {
        self.kinds
            .iter()
            .rfind(|(k, _)| k == name)
            .map(|&(_, kind)| kind)
    }

    fn has(&self, name: &str) -> bool {
        self.kinds.iter().any(|(k, _)| k == name)
    }
}

/// Both versions with their declaration tables.
struct Sides<'a> {
    base: &'a ProtoFile,
    cur: &'a ProtoFile,
    base_decl: Declared,
    cur_decl: Declared,
}

impl Sides<'_> {
    fn compare_types(&self, a: &TypeClass, b: &TypeClass) -> Compat {
        use TypeClass::*;
        if a == b {
            return Compat::Same;
        }
        match (a, b) {
            (Varint | Enum(_), Varint | Enum(_)) => Compat::Same,
            (String, Bytes) | (Bytes, String) => Compat::Same,
            (Bytes, Message(_)) | (Message(_), Bytes) => Compat::Same,
            (Message(x), Message(y)) | (Group(x), Group(y)) => {
                if !self.cur_decl.has(x) && !self.base_decl.has(y) {
                    Compat::Undecidable(format!(
                        "`{x}` was renamed to `{y}`; the change is wire-compatible only if the two \
                         declarations are"
                    ))
                } else {
                    Compat::Breaking
                }
            }
            (External(x), External(y)) => {
                Compat::Undecidable(format!("`{x}` → `{y}`, both declared in other files"))
            }
            (External(x), other) | (other, External(x)) => match other {
                Varint | Enum(_) | Bytes | Message(_) => Compat::Undecidable(format!(
                    "`{x}` is declared in another file; whether it is a message or an enum \
                     decides the change"
                )),
                _ => Compat::Breaking,
            },
            _ => Compat::Breaking,
        }
    }
}

/// How many values a field holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Card {
    /// Plain or `optional` singular (explicit presence is not a wire change).
    Single,
    Required,
    Repeated,
    /// `map<K, V>`.
    Map(String, String),
}

fn card(f: &ProtoField) -> Card {
    if let Some(inner) = f
        .type_name
        .strip_prefix("map<")
        .and_then(|s| s.strip_suffix('>'))
        && let Some((k, v)) = inner.split_once(',')
    {
        return Card::Map(k.trim().to_string(), v.trim().to_string());
    }
    match f.label {
        FieldLabel::Singular | FieldLabel::Optional => Card::Single,
        FieldLabel::Required => Card::Required,
        FieldLabel::Repeated => Card::Repeated,
    }
}

fn card_label(c: &Card, type_name: &str) -> String {
    match c {
        Card::Single => format!("singular {type_name}"),
        Card::Required => format!("required {type_name}"),
        Card::Repeated => format!("repeated {type_name}"),
        Card::Map(..) => type_name.to_string(),
    }
}

fn in_ranges<T: PartialOrd + Copy>(ranges: &[(T, T)], n: T) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= n && n <= hi)
}

/// Compares two versions of one `.proto` file.
pub fn compare(base: &ProtoFile, current: &ProtoFile) -> WireReport {
    let sides = Sides {
        base,
        cur: current,
        base_decl: Declared::of(base),
        cur_decl: Declared::of(current),
    };
    let mut report = WireReport::default();
    for bm in &base.messages {
        match current.messages.iter().find(|m| m.name == bm.name) {
            Some(cm) => compare_message(&sides, bm, cm, &mut report),
            None => {
                if sides.base_decl.get(&bm.name) == Some(DeclKind::Group) {
                    continue; // reported through its field
                }
                report.push(type_removed(
                    "message",
                    &bm.name,
                    bm.line,
                    renamed_message(bm, current, &sides.base_decl),
                ));
            }
        }
    }
    for be in &base.enums {
        match current.enums.iter().find(|e| e.name == be.name) {
            Some(ce) => compare_enum(be, ce, &mut report),
            None => report.push(type_removed(
                "enum",
                &be.name,
                be.line,
                renamed_enum(be, current, &base.enums),
            )),
        }
    }
    report
}

fn type_removed(kind: &str, name: &str, line: u32, renamed_to: Option<String>) -> Finding {
    let detail = match &renamed_to {
        Some(new) => format!("{kind} `{name}` is gone; `{new}` has the same numbers (a rename?)"),
        None => format!("{kind} `{name}` is gone"),
    };
    Finding {
        rule: Rule::TypeRemoved,
        element: name.to_string(),
        number: 0,
        line,
        in_base: true,
        detail,
        remediation: format!(
            "fields of other files that still reference `{name}` stop compiling; a rename is \
             wire-compatible, but JSON and reflection see the new name"
        ),
    }
}

/// A new message of `current` with the same (number, type) pairs as the removed `bm`.
fn renamed_message(bm: &ProtoMessage, current: &ProtoFile, base_decl: &Declared) -> Option<String> {
    fn shape(m: &ProtoMessage) -> Vec<(u32, &str)> {
        let mut pairs: Vec<(u32, &str)> = m
            .fields
            .iter()
            .map(|f| (f.number, f.type_name.as_str()))
            .collect();
        crate::order::sort(&mut pairs);
        pairs.dedup();
        pairs
    }
    let want = shape(bm);
    if want.is_empty() {
        return None;
    }
    current
        .messages
        .iter()
        .find(|m| !base_decl.has(&m.name) && shape(m) == want)
        .map(|m| m.name.clone())
}

fn renamed_enum(be: &ProtoEnum, current: &ProtoFile, base_enums: &[ProtoEnum]) -> Option<String> {
    let shape = |e: &ProtoEnum| -> Vec<i32> {
        let mut numbers: Vec<i32> = e.values.iter().map(|v| v.number).collect();
        crate::order::sort(&mut numbers);
        numbers.dedup();
        numbers
    };
    let want = shape(be);
    current
        .enums
        .iter()
        .find(|e| !base_enums.iter().any(|b| b.name == e.name) && shape(e) == want)
        .map(|e| e.name.clone())
}

fn compare_message(s: &Sides, bm: &ProtoMessage, cm: &ProtoMessage, report: &mut WireReport) {
    let m = &bm.name;
    // Lookups scan the (short) field lists instead of building maps: the last field of a
    // name or number wins, as it would in a map collected from the list. (Size: maps of
    // these key types cost a B-tree and a sort instance each: the size budget, docs/ARCHITECTURE.md §7.)
    let base_by_name = |name: &str| bm.fields.iter().rfind(|f| f.name == name);
    let cur_has_name = |name: &str| cm.fields.iter().any(|f| f.name == name);
    let base_by_num = |n: u32| bm.fields.iter().rfind(|f| f.number == n);
    let cur_has_number = |n: u32| cm.fields.iter().any(|f| f.number == n);
    let base_oneofs: Vec<&str> = bm
        .fields
        .iter()
        .filter_map(|f| f.oneof.as_deref())
        .collect();

    let mut fields: Vec<&ProtoField> = cm.fields.iter().collect();
    crate::order::sort_by_key(&mut fields, |f| (f.number, f.line));
    for cf in fields {
        let element = format!("{m}.{}", cf.name);
        let n = cf.number;
        if let Some(bf) = base_by_name(&cf.name) {
            if bf.number != n {
                let took = base_by_num(n)
                    .filter(|o| o.name != cf.name)
                    .map(|o| format!("; #{n} was `{}` in the base", o.name))
                    .unwrap_or_default();
                report.push(Finding {
                    rule: Rule::FieldRenumbered,
                    element,
                    number: i64::from(n),
                    line: cf.line,
                    in_base: false,
                    detail: format!("#{} → #{n}{took}", bf.number),
                    remediation: format!(
                        "restore `{} = {};`: data written with #{} is no longer read into this \
                         field; to retire a number, add a new field and `reserved {};`",
                        cf.name, bf.number, bf.number, bf.number
                    ),
                });
                continue;
            }
            field_change(s, m, bf, cf, &base_oneofs, bm, cm, report);
            continue;
        }
        // A name the base did not have.
        match base_by_num(n) {
            Some(bf) => {
                let old_still_here = cur_has_name(&bf.name);
                let old_retired = cm.reserved_names.iter().any(|r| r == &bf.name);
                let b_ty = classify(s.base, m, &bf.type_name, &s.base_decl);
                let c_ty = classify(s.cur, m, &cf.type_name, &s.cur_decl);
                let incompatible = card(bf) == card(cf)
                    && matches!(s.compare_types(&b_ty, &c_ty), Compat::Breaking);
                if old_still_here || old_retired || incompatible {
                    let why = if old_still_here {
                        format!("`{}` moved to another number", bf.name)
                    } else if old_retired {
                        format!("`{}` was retired (its name is reserved)", bf.name)
                    } else {
                        format!("{} → {}", bf.type_name, cf.type_name)
                    };
                    report.push(Finding {
                        rule: Rule::FieldNumberReused,
                        element,
                        number: i64::from(n),
                        line: cf.line,
                        in_base: false,
                        detail: format!("#{n} was `{}` in the base ({why})", bf.name),
                        remediation: format!(
                            "give `{}` an unused number and add `reserved {n};` so old data \
                             written as `{}` is never read into it",
                            cf.name, bf.name
                        ),
                    });
                    continue;
                }
                report.push(Finding {
                    rule: Rule::Renamed,
                    element: element.clone(),
                    number: i64::from(n),
                    line: cf.line,
                    in_base: false,
                    detail: format!("`{}` → `{}` at #{n}", bf.name, cf.name),
                    remediation: format!(
                        "the binary format is unaffected, but JSON and text formats carry the \
                         name; keep `{}` if any client uses them",
                        bf.name
                    ),
                });
                field_change(s, m, bf, cf, &base_oneofs, bm, cm, report);
            }
            None => {
                if in_ranges(&bm.reserved_numbers, n) {
                    report.push(Finding {
                        rule: Rule::FieldNumberReused,
                        element,
                        number: i64::from(n),
                        line: cf.line,
                        in_base: false,
                        detail: format!("#{n} was `reserved` in the base"),
                        remediation: format!(
                            "give `{}` an unused number and keep `reserved {n};`: old data may \
                             still carry #{n}",
                            cf.name
                        ),
                    });
                }
            }
        }
    }
    // Base fields whose name and number are both gone.
    let mut base_fields: Vec<&ProtoField> = bm.fields.iter().collect();
    crate::order::sort_by_key(&mut base_fields, |f| (f.number, f.line));
    for bf in base_fields {
        if cur_has_name(&bf.name) || cur_has_number(bf.number) {
            continue;
        }
        let element = format!("{m}.{}", bf.name);
        let n = bf.number;
        let name_reserved = cm.reserved_names.iter().any(|r| r == &bf.name);
        if !in_ranges(&cm.reserved_numbers, n) {
            let also_name = if name_reserved {
                String::new()
            } else {
                format!(" and `reserved \"{}\";`", bf.name)
            };
            report.push(Finding {
                rule: Rule::FieldDeleted,
                element,
                number: i64::from(n),
                line: bf.line,
                in_base: true,
                detail: format!("`{} {} = {n}` was removed", bf.type_name, bf.name),
                remediation: format!(
                    "add `reserved {n};`{also_name} to `{m}` so the number is never reused"
                ),
            });
        } else if !name_reserved {
            report.push(Finding {
                rule: Rule::NameNotReserved,
                element,
                number: i64::from(n),
                line: bf.line,
                in_base: true,
                detail: format!("#{n} is reserved but the name `{}` is not", bf.name),
                remediation: format!(
                    "add `reserved \"{}\";` so JSON and text formats never read the old name \
                     into a new field",
                    bf.name
                ),
            });
        }
    }
}

/// Type, cardinality and `oneof` checks of one field present in both versions at one number.
#[allow(clippy::too_many_arguments)]
fn field_change(
    s: &Sides,
    m: &str,
    bf: &ProtoField,
    cf: &ProtoField,
    base_oneofs: &[&str],
    bm: &ProtoMessage,
    cm: &ProtoMessage,
    report: &mut WireReport,
) {
    let element = format!("{m}.{}", cf.name);
    let n = cf.number;
    let (bc, cc) = (card(bf), card(cf));
    let b_ty = classify(s.base, m, &bf.type_name, &s.base_decl);
    let c_ty = classify(s.cur, m, &cf.type_name, &s.cur_decl);
    let finding = |rule: Rule, detail: String, remediation: String| Finding {
        rule,
        element: element.clone(),
        number: i64::from(n),
        line: cf.line,
        in_base: false,
        detail,
        remediation,
    };
    let restore = format!(
        "restore `{}` as `{}`, or add a new field with a new number and `reserved {n};` for this one",
        cf.name,
        card_label(&bc, &bf.type_name)
    );
    if bc != cc {
        let transition = format!(
            "{} → {}",
            card_label(&bc, &bf.type_name),
            card_label(&cc, &cf.type_name)
        );
        let verdict: Option<Compat> = match (&bc, &cc) {
            (Card::Map(k1, v1), Card::Map(k2, v2)) => Some(map_types(s, m, (k1, v1), (k2, v2))),
            (Card::Map(k, v), Card::Repeated) => Some(map_vs_entry(s, false, m, (k, v), &c_ty)),
            (Card::Repeated, Card::Map(k, v)) => Some(map_vs_entry(s, true, m, (k, v), &b_ty)),
            (Card::Map(..), _) | (_, Card::Map(..)) => Some(Compat::Breaking),
            (Card::Required, _) | (_, Card::Required) => Some(Compat::Breaking),
            // singular ↔ repeated: length-delimited types only.
            _ => match (b_ty.is_length_delimited(), c_ty.is_length_delimited()) {
                (Some(true), Some(true)) => None,
                (None, _) | (_, None) => Some(Compat::Undecidable(
                    "the type is declared in another file; singular ↔ repeated is compatible \
                     only for messages"
                        .into(),
                )),
                _ => Some(Compat::Breaking),
            },
        };
        match verdict {
            Some(Compat::Breaking) if matches!((&bc, &cc), (Card::Map(..), Card::Map(..))) => {
                report.push(finding(
                    Rule::FieldTypeChanged,
                    format!(
                        "{} → {} (different wire encodings)",
                        bf.type_name, cf.type_name
                    ),
                    restore.clone(),
                ));
                return;
            }
            Some(Compat::Breaking) => {
                let why = if matches!(bc, Card::Required) || matches!(cc, Card::Required) {
                    " (a reader that requires the field rejects messages without it)"
                } else {
                    ""
                };
                report.push(finding(
                    Rule::FieldCardinalityChanged,
                    format!("{transition}{why}"),
                    restore.clone(),
                ));
                return;
            }
            Some(Compat::Undecidable(why)) => {
                report.push(finding(
                    Rule::TypeUndecidable,
                    format!("{transition}: {why}"),
                    "check the declaration in the other file".into(),
                ));
                return;
            }
            Some(Compat::Same) => return,
            None => {}
        }
    }
    if !matches!(bc, Card::Map(..)) && !matches!(cc, Card::Map(..)) {
        match s.compare_types(&b_ty, &c_ty) {
            Compat::Same => {}
            Compat::Breaking => report.push(finding(
                Rule::FieldTypeChanged,
                format!(
                    "{} → {} (different wire encodings)",
                    bf.type_name, cf.type_name
                ),
                restore.clone(),
            )),
            Compat::Undecidable(why) => report.push(finding(
                Rule::TypeUndecidable,
                format!("{} → {}: {why}", bf.type_name, cf.type_name),
                "check that both types encode alike (same message, or enum ↔ integer)".into(),
            )),
        }
    }
    // `oneof` membership.
    match (bf.oneof.as_deref(), cf.oneof.as_deref()) {
        (a, b) if a == b => {}
        (None, Some(o)) => {
            if base_oneofs.contains(&o) {
                report.push(finding(
                    Rule::OneofMembershipChanged,
                    format!("moved into the existing oneof `{o}`"),
                    format!(
                        "move `{}` back out: setting it now clears the other members of `{o}` \
                         that older writers set alongside it",
                        cf.name
                    ),
                ));
            } else {
                let moved_in = cm
                    .fields
                    .iter()
                    .filter(|f| f.oneof.as_deref() == Some(o))
                    .filter(|f| {
                        bm.fields
                            .iter()
                            .any(|b| b.name == f.name && b.oneof.is_none())
                    })
                    .count();
                if moved_in > 1 {
                    report.push(finding(
                        Rule::OneofMove,
                        format!(
                            "moved with {} other field(s) into the new oneof `{o}`",
                            moved_in - 1
                        ),
                        "safe only if no writer ever sets more than one of them at once".into(),
                    ));
                }
            }
        }
        (Some(o), None) => report.push(finding(
            Rule::OneofMove,
            format!("moved out of the oneof `{o}`"),
            "older readers still keep only the last member of the oneof they see".into(),
        )),
        (Some(o1), Some(o2)) => {
            let whole_oneof_renamed = !base_oneofs.contains(&o2)
                && bm
                    .fields
                    .iter()
                    .filter(|f| f.oneof.as_deref() == Some(o1))
                    .all(|f| {
                        cm.fields
                            .iter()
                            .any(|c| c.name == f.name && c.oneof.as_deref() == Some(o2))
                    });
            if !whole_oneof_renamed {
                report.push(finding(
                    Rule::OneofMembershipChanged,
                    format!("moved from oneof `{o1}` to oneof `{o2}`"),
                    format!("move `{}` back into `{o1}`", cf.name),
                ));
            }
        }
        (None, None) => {}
    }
}

/// Map ↔ map: keys and values must stay in the same wire group.
fn map_types(s: &Sides, m: &str, base: (&str, &str), cur: (&str, &str)) -> Compat {
    let k = s.compare_types(
        &classify(s.base, m, base.0, &s.base_decl),
        &classify(s.cur, m, cur.0, &s.cur_decl),
    );
    let v = s.compare_types(
        &classify(s.base, m, base.1, &s.base_decl),
        &classify(s.cur, m, cur.1, &s.cur_decl),
    );
    match (k, v) {
        (Compat::Breaking, _) | (_, Compat::Breaking) => Compat::Breaking,
        (Compat::Undecidable(w), _) | (_, Compat::Undecidable(w)) => Compat::Undecidable(w),
        _ => Compat::Same,
    }
}

/// Map ↔ `repeated Entry`: compatible only when `Entry` is exactly `key = 1` and `value = 2`
/// with types matching the map's. `entry_in_base` says which side holds the entry message.
fn map_vs_entry(
    s: &Sides,
    entry_in_base: bool,
    m: &str,
    (k, v): (&str, &str),
    entry: &TypeClass,
) -> Compat {
    let (entry_file, entry_decl, map_file, map_decl) = if entry_in_base {
        (s.base, &s.base_decl, s.cur, &s.cur_decl)
    } else {
        (s.cur, &s.cur_decl, s.base, &s.base_decl)
    };
    let name = match entry {
        TypeClass::Message(name) => name,
        TypeClass::External(_) => {
            return Compat::Undecidable(
                "the entry message is declared in another file; map ↔ repeated is compatible \
                 only with an entry of exactly `key = 1` and `value = 2`"
                    .into(),
            );
        }
        _ => return Compat::Breaking,
    };
    let Some(msg) = entry_file.messages.iter().find(|x| &x.name == name) else {
        return Compat::Breaking;
    };
    let key = msg.fields.iter().find(|f| f.number == 1);
    let value = msg.fields.iter().find(|f| f.number == 2);
    let (Some(key), Some(value)) = (key, value) else {
        return Compat::Breaking;
    };
    if msg.fields.len() != 2
        || key.label == FieldLabel::Repeated
        || value.label == FieldLabel::Repeated
    {
        return Compat::Breaking;
    }
    let same = |entry_ty: &str, map_ty: &str| {
        let a = classify(entry_file, &msg.name, entry_ty, entry_decl);
        let b = classify(map_file, m, map_ty, map_decl);
        matches!(s.compare_types(&a, &b), Compat::Same)
    };
    if same(&key.type_name, k) && same(&value.type_name, v) {
        Compat::Same
    } else {
        Compat::Breaking
    }
}

fn compare_enum(be: &ProtoEnum, ce: &ProtoEnum, report: &mut WireReport) {
    let e = &be.name;
    let base_numbers_of = |name: &str| -> Vec<i32> {
        be.values
            .iter()
            .filter(|v| v.name == name)
            .map(|v| v.number)
            .collect()
    };
    let cur_has_name = |name: &str| ce.values.iter().any(|v| v.name == name);
    let cur_has_number = |n: i32| ce.values.iter().any(|v| v.number == n);
    for cv in &ce.values {
        let element = format!("{e}.{}", cv.name);
        let n = cv.number;
        let base_nums = base_numbers_of(&cv.name);
        if base_nums.contains(&n) {
            continue;
        }
        if let Some(&old) = base_nums.first() {
            let took = be
                .values
                .iter()
                .find(|v| v.number == n && v.name != cv.name)
                .map(|v| format!("; {n} was `{}` in the base", v.name))
                .unwrap_or_default();
            report.push(Finding {
                rule: Rule::EnumValueRenumbered,
                element,
                number: i64::from(n),
                line: cv.line,
                in_base: false,
                detail: format!("{old} → {n}{took}"),
                remediation: format!(
                    "restore `{} = {old};`: the number is what travels on the wire, so stored \
                     and in-flight {old}s now mean something else",
                    cv.name
                ),
            });
            continue;
        }
        // A new name.
        let olds: Vec<&str> = be
            .values
            .iter()
            .filter(|v| v.number == n)
            .map(|v| v.name.as_str())
            .collect();
        if olds.is_empty() {
            if in_ranges(&be.reserved_numbers, n) {
                report.push(Finding {
                    rule: Rule::EnumNumberReused,
                    element,
                    number: i64::from(n),
                    line: cv.line,
                    in_base: false,
                    detail: format!("{n} was `reserved` in the base"),
                    remediation: format!(
                        "give `{}` an unused number and keep `reserved {n};`",
                        cv.name
                    ),
                });
            }
            continue;
        }
        if olds.iter().any(|o| cur_has_name(o)) {
            // The old value moved elsewhere: reported as its renumbering.
            continue;
        }
        let retired: Vec<&&str> = olds
            .iter()
            .filter(|o| ce.reserved_names.iter().any(|r| r == **o))
            .collect();
        if let Some(old) = retired.first() {
            report.push(Finding {
                rule: Rule::EnumNumberReused,
                element,
                number: i64::from(n),
                line: cv.line,
                in_base: false,
                detail: format!("{n} was `{old}`, whose name is now reserved"),
                remediation: format!(
                    "give `{}` an unused number and add `reserved {n};`: stored {n}s mean `{old}`",
                    cv.name
                ),
            });
        } else {
            report.push(Finding {
                rule: Rule::Renamed,
                element,
                number: i64::from(n),
                line: cv.line,
                in_base: false,
                detail: format!("`{}` → `{}` at {n}", olds[0], cv.name),
                remediation: format!(
                    "the binary format is unaffected, but JSON and text formats carry the name; \
                     keep `{}` (or add it back with `option allow_alias = true;`) if any client \
                     uses them",
                    olds[0]
                ),
            });
        }
    }
    for bv in &be.values {
        if cur_has_name(&bv.name) || cur_has_number(bv.number) {
            continue;
        }
        let element = format!("{e}.{}", bv.name);
        let n = bv.number;
        let name_reserved = ce.reserved_names.iter().any(|r| r == &bv.name);
        if !in_ranges(&ce.reserved_numbers, n) {
            let also_name = if name_reserved {
                String::new()
            } else {
                format!(" and `reserved \"{}\";`", bv.name)
            };
            report.push(Finding {
                rule: Rule::EnumValueDeleted,
                element,
                number: i64::from(n),
                line: bv.line,
                in_base: true,
                detail: format!("`{} = {n}` was removed", bv.name),
                remediation: format!(
                    "add `reserved {n};`{also_name} to `{e}` so the number is never reused"
                ),
            });
        } else if !name_reserved {
            report.push(Finding {
                rule: Rule::NameNotReserved,
                element,
                number: i64::from(n),
                line: bv.line,
                in_base: true,
                detail: format!("{n} is reserved but the name `{}` is not", bv.name),
                remediation: format!("add `reserved \"{}\";`", bv.name),
            });
        }
    }
}

/// A reason not to compare a version: unbalanced braces, parentheses or brackets, or an
/// unterminated string or block comment (the extractor is tolerant and would compare a
/// half-parsed file; a syntax error must give no partial findings). `None` when it looks sound.
pub fn syntax_problem(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut stack: Vec<(u8, u32)> = Vec::new();
    let mut line: u32 = 1;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => line += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = line;
                i += 2;
                loop {
                    if i + 1 >= bytes.len() {
                        return Some(format!("a block comment opened on line {start} never ends"));
                    }
                    if bytes[i] == b'\n' {
                        line += 1;
                    }
                    if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let quote = b;
                i += 1;
                loop {
                    match bytes.get(i) {
                        None | Some(b'\n') => {
                            return Some(format!("a string on line {line} is not closed"));
                        }
                        Some(b'\\') => i += 2,
                        Some(&c) if c == quote => break,
                        Some(_) => i += 1,
                    }
                }
            }
            b'{' | b'(' | b'[' | b'<' => stack.push((b, line)),
            b'}' | b')' | b']' | b'>' => {
                let open = match b {
                    b'}' => b'{',
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'<',
                };
                match stack.pop() {
                    Some((o, _)) if o == open => {}
                    Some((o, l)) => {
                        return Some(format!(
                            "`{}` on line {line} does not close the `{}` opened on line {l}",
                            b as char, o as char
                        ));
                    }
                    None => {
                        return Some(format!("`{}` on line {line} closes nothing", b as char));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    stack
        .last()
        .map(|(o, l)| format!("the `{}` opened on line {l} is never closed", *o as char))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::lang::protobuf;

    fn parse(text: &str) -> ProtoFile {
        protobuf::extract("x.proto", text).proto.unwrap()
    }

    type Keys = Vec<(Rule, String, i64)>;

    /// (rule, element, number) of every finding: (breaking, warnings).
    fn diff(base: &str, cur: &str) -> (Keys, Keys) {
        let r = compare(&parse(base), &parse(cur));
        let key = |f: &Finding| (f.rule, f.element.clone(), f.number);
        (
            r.breaking.iter().map(key).collect(),
            r.warnings.iter().map(key).collect(),
        )
    }

    fn b(rule: Rule, element: &str, number: i64) -> (Rule, String, i64) {
        (rule, element.to_string(), number)
    }

    const BASE: &str = r#"
syntax = "proto3";
package acme.orders.v1;
message Order {
  string id = 1;
  int64 amount = 2;
  string note = 3;
  Status status = 4;
  repeated Item items = 5;
  map<string, string> labels = 6;
  oneof payment {
    string card = 7;
    string iban = 8;
  }
  reserved 9, 20 to 25;
  reserved "legacy";
  message Item { string sku = 1; int32 qty = 2; }
}
enum Status {
  STATUS_UNSPECIFIED = 0;
  STATUS_OPEN = 1;
  STATUS_DONE = 2;
  reserved 7;
}
"#;

    fn with(replacements: &[(&str, &str)]) -> String {
        let mut s = BASE.to_string();
        for (from, to) in replacements {
            assert!(s.contains(from), "{from}");
            s = s.replacen(from, to, 1);
        }
        s
    }

    #[test]
    fn identical_files_have_no_findings() {
        assert_eq!(diff(BASE, BASE), (vec![], vec![]));
        // Comments, order, options and `optional` do not matter.
        let cur = with(&[
            (
                "string note = 3;",
                "// a note\n  optional string note = 3 [deprecated = true];",
            ),
            (
                "string id = 1;\n  int64 amount = 2;",
                "int64 amount = 2;\n  string id = 1;",
            ),
        ]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
    }

    #[test]
    fn renumbered_field_is_one_finding() {
        let cur = with(&[("string note = 3;", "string note = 10;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldRenumbered, "Order.note", 10)]
        );
    }

    #[test]
    fn deleted_field_needs_reserved_number() {
        let cur = with(&[("string note = 3;", "")]);
        assert_eq!(
            diff(BASE, &cur),
            (vec![b(Rule::FieldDeleted, "Order.note", 3)], vec![])
        );
        let cur = with(&[("string note = 3;", "reserved 3; reserved \"note\";")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        let cur = with(&[("string note = 3;", "reserved 3;")]);
        assert_eq!(
            diff(BASE, &cur),
            (vec![], vec![b(Rule::NameNotReserved, "Order.note", 3)])
        );
        // A range covers it too.
        let cur = with(&[("string note = 3;", "reserved 3 to 4, \"note\";")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
    }

    #[test]
    fn reused_numbers_are_breaking() {
        // A deleted field's number taken by a new field of another type.
        let cur = with(&[("int64 amount = 2;", "string total = 2;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldNumberReused, "Order.total", 2)]
        );
        // A reserved number taken.
        let cur = with(&[(
            "reserved 9, 20 to 25;",
            "reserved 20 to 25;\n  bool urgent = 9;",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldNumberReused, "Order.urgent", 9)]
        );
        let cur = with(&[("reserved 9, 20 to 25;", "reserved 9;\n  bool urgent = 22;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldNumberReused, "Order.urgent", 22)]
        );
        // The old name retired but the number reused.
        let cur = with(&[(
            "string note = 3;",
            "string remark = 3;\n  reserved \"note\";",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldNumberReused, "Order.remark", 3)]
        );
        // A renumbered field and a new field in its old slot: two problems.
        let cur = with(&[("string note = 3;", "string note = 11;\n  string memo = 3;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![
                b(Rule::FieldNumberReused, "Order.memo", 3),
                b(Rule::FieldRenumbered, "Order.note", 11),
            ]
        );
    }

    #[test]
    fn rename_in_place_is_a_warning() {
        let cur = with(&[("string note = 3;", "string comment = 3;")]);
        assert_eq!(
            diff(BASE, &cur),
            (vec![], vec![b(Rule::Renamed, "Order.comment", 3)])
        );
        let cur = with(&[("STATUS_DONE = 2;", "STATUS_CLOSED = 2;")]);
        assert_eq!(
            diff(BASE, &cur),
            (vec![], vec![b(Rule::Renamed, "Status.STATUS_CLOSED", 2)])
        );
    }

    #[test]
    fn type_groups() {
        for (from, to, breaking) in [
            ("int64 amount = 2;", "int32 amount = 2;", false),
            ("int64 amount = 2;", "uint64 amount = 2;", false),
            ("int64 amount = 2;", "bool amount = 2;", false),
            ("int64 amount = 2;", "Status amount = 2;", false),
            ("int64 amount = 2;", "sint64 amount = 2;", true),
            ("int64 amount = 2;", "fixed64 amount = 2;", true),
            ("int64 amount = 2;", "double amount = 2;", true),
            ("int64 amount = 2;", "string amount = 2;", true),
            ("string note = 3;", "bytes note = 3;", false),
            ("string note = 3;", "Item note = 3;", true),
            ("string note = 3;", "int32 note = 3;", true),
        ] {
            let cur = with(&[(from, to)]);
            let expect = if breaking {
                let name = to.split_whitespace().nth(1).unwrap();
                let number: i64 = to
                    .split('=')
                    .nth(1)
                    .unwrap()
                    .trim_end_matches(';')
                    .trim()
                    .parse()
                    .unwrap();
                vec![b(Rule::FieldTypeChanged, &format!("Order.{name}"), number)]
            } else {
                vec![]
            };
            assert_eq!(diff(BASE, &cur), (expect, vec![]), "{from} → {to}");
        }
        // 32-bit and 64-bit fixed groups, zig-zag, and float alone.
        let pair = |a: &str, b2: &str| {
            let base = format!("syntax = \"proto3\";\nmessage M {{ {a} x = 1; }}\n");
            let cur = format!("syntax = \"proto3\";\nmessage M {{ {b2} x = 1; }}\n");
            diff(&base, &cur).0.len()
        };
        assert_eq!(pair("fixed32", "sfixed32"), 0);
        assert_eq!(pair("fixed64", "sfixed64"), 0);
        assert_eq!(pair("sint32", "sint64"), 0);
        assert_eq!(pair("fixed32", "fixed64"), 1);
        assert_eq!(pair("float", "fixed32"), 1);
        assert_eq!(pair("float", "double"), 1);
        assert_eq!(pair("bytes", "M"), 0);
        // A type from another file: undecidable, a warning.
        let base = "syntax = \"proto3\";\nmessage M { bytes x = 1; }\n";
        let cur = "syntax = \"proto3\";\nimport \"t.proto\";\nmessage M { google.protobuf.Timestamp x = 1; }\n";
        assert_eq!(
            diff(base, cur),
            (vec![], vec![b(Rule::TypeUndecidable, "M.x", 1)])
        );
        // … but an imported type for a string is breaking (neither a message nor an enum fits).
        let base = "syntax = \"proto3\";\nmessage M { string x = 1; }\n";
        assert_eq!(diff(base, cur).0, vec![b(Rule::FieldTypeChanged, "M.x", 1)]);
    }

    #[test]
    fn qualified_and_nested_type_names_resolve() {
        let cur = with(&[(
            "repeated Item items = 5;",
            "repeated .acme.orders.v1.Order.Item items = 5;",
        )]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        let cur = with(&[("Status status = 4;", "acme.orders.v1.Status status = 4;")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
    }

    #[test]
    fn cardinality() {
        // Scalars: singular ↔ repeated breaks.
        let cur = with(&[("int64 amount = 2;", "repeated int64 amount = 2;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldCardinalityChanged, "Order.amount", 2)]
        );
        // Strings and messages absorb it.
        let cur = with(&[("string note = 3;", "repeated string note = 3;")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        let cur = with(&[("repeated Item items = 5;", "Item items = 5;")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        // optional ↔ plain is no change.
        let cur = with(&[("int64 amount = 2;", "optional int64 amount = 2;")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        // map ↔ singular always breaks.
        let cur = with(&[("map<string, string> labels = 6;", "string labels = 6;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldCardinalityChanged, "Order.labels", 6)]
        );
        // map ↔ repeated entry with exactly key = 1 and value = 2 is compatible …
        let cur = with(&[(
            "map<string, string> labels = 6;",
            "repeated LabelsEntry labels = 6;\n  message LabelsEntry { string key = 1; string value = 2; }",
        )]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        // … but not with another shape.
        let cur = with(&[(
            "map<string, string> labels = 6;",
            "repeated LabelsEntry labels = 6;\n  message LabelsEntry { string key = 1; string value = 3; }",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldCardinalityChanged, "Order.labels", 6)]
        );
        // map value type across groups.
        let cur = with(&[(
            "map<string, string> labels = 6;",
            "map<string, int32> labels = 6;",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldTypeChanged, "Order.labels", 6)]
        );
        let cur = with(&[(
            "map<string, string> labels = 6;",
            "map<string, bytes> labels = 6;",
        )]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        // proto2 required added.
        let base = "syntax = \"proto2\";\nmessage M { optional int32 x = 1; }\n";
        let cur = "syntax = \"proto2\";\nmessage M { required int32 x = 1; }\n";
        assert_eq!(
            diff(base, cur).0,
            vec![b(Rule::FieldCardinalityChanged, "M.x", 1)]
        );
    }

    #[test]
    fn enums() {
        let cur = with(&[("STATUS_DONE = 2;", "STATUS_DONE = 5;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::EnumValueRenumbered, "Status.STATUS_DONE", 5)]
        );
        let cur = with(&[("STATUS_DONE = 2;", "")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::EnumValueDeleted, "Status.STATUS_DONE", 2)]
        );
        let cur = with(&[("STATUS_DONE = 2;", "reserved 2; reserved \"STATUS_DONE\";")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        let cur = with(&[("reserved 7;", "STATUS_LOST = 7;")]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::EnumNumberReused, "Status.STATUS_LOST", 7)]
        );
        let cur = with(&[(
            "STATUS_DONE = 2;",
            "STATUS_LOST = 2;\n  reserved \"STATUS_DONE\";",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::EnumNumberReused, "Status.STATUS_LOST", 2)]
        );
        // Swapping two numbers: each renumbering once.
        let cur = with(&[(
            "STATUS_OPEN = 1;\n  STATUS_DONE = 2;",
            "STATUS_OPEN = 2;\n  STATUS_DONE = 1;",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![
                b(Rule::EnumValueRenumbered, "Status.STATUS_OPEN", 2),
                b(Rule::EnumValueRenumbered, "Status.STATUS_DONE", 1),
            ]
        );
        // A removed enum is listed as a warning; a renamed one names its successor.
        let cur = with(&[
            ("enum Status {", "enum State {"),
            ("Status status = 4;", "State status = 4;"),
        ]);
        let r = compare(&parse(BASE), &parse(&cur));
        assert!(r.breaking.is_empty(), "{:?}", r.breaking);
        assert_eq!(r.warnings.len(), 1);
        assert_eq!(r.warnings[0].rule, Rule::TypeRemoved);
        assert!(
            r.warnings[0].detail.contains("`State`"),
            "{}",
            r.warnings[0].detail
        );
    }

    #[test]
    fn oneofs_share_the_message_number_space() {
        // A oneof member renumbered onto a deleted plain field's number.
        let cur = with(&[
            ("string note = 3;", ""),
            ("string iban = 8;", "string iban = 3;"),
        ]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldRenumbered, "Order.iban", 3)]
        );
        // Moving a field into the existing oneof breaks; into a new oneof alone is safe.
        let cur = with(&[
            ("string note = 3;", ""),
            ("string iban = 8;", "string iban = 8;\n    string note = 3;"),
        ]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::OneofMembershipChanged, "Order.note", 3)]
        );
        let cur = with(&[("string note = 3;", "oneof remark { string note = 3; }")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        // Two fields into a new oneof: a warning each.
        let cur = with(&[(
            "string id = 1;\n  int64 amount = 2;",
            "oneof key { string id = 1; int64 amount = 2; }",
        )]);
        let (br, warn) = diff(BASE, &cur);
        assert!(br.is_empty(), "{br:?}");
        assert_eq!(warn.len(), 2, "{warn:?}");
        // Renaming a whole oneof is no change; a member out of it is a warning.
        let cur = with(&[("oneof payment {", "oneof pay_with {")]);
        assert_eq!(diff(BASE, &cur), (vec![], vec![]));
        let cur = with(&[("    string iban = 8;\n  }", "  }\n  string iban = 8;")]);
        assert_eq!(
            diff(BASE, &cur),
            (vec![], vec![b(Rule::OneofMove, "Order.iban", 8)])
        );
    }

    #[test]
    fn nested_messages_are_matched_by_path() {
        let cur = with(&[(
            "message Item { string sku = 1; int32 qty = 2; }",
            "message Item { string sku = 1; string qty = 2; }",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldTypeChanged, "Order.Item.qty", 2)]
        );
        let cur = with(&[(
            "message Item { string sku = 1; int32 qty = 2; }",
            "message Item { string sku = 1; }",
        )]);
        assert_eq!(
            diff(BASE, &cur).0,
            vec![b(Rule::FieldDeleted, "Order.Item.qty", 2)]
        );
        // Moving the nested type out to the top level changes the field's message type.
        let cur = with(&[
            ("message Item { string sku = 1; int32 qty = 2; }", ""),
            (
                "enum Status {",
                "message Item { string sku = 1; int32 qty = 2; }\nenum Status {",
            ),
        ]);
        let r = compare(&parse(BASE), &parse(&cur));
        assert!(r.breaking.is_empty(), "{:?}", r.breaking);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.rule == Rule::TypeUndecidable && w.element == "Order.items"),
            "{:?}",
            r.warnings
        );
        assert!(
            r.warnings
                .iter()
                .any(|w| w.rule == Rule::TypeRemoved && w.element == "Order.Item"),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn syntax_problems_are_found() {
        assert_eq!(syntax_problem(BASE), None);
        assert_eq!(syntax_problem("message A { string s = 1; // }\n}"), None);
        assert_eq!(syntax_problem("option x = \"}\";"), None);
        assert!(
            syntax_problem("message A {\n string s = 1;\n")
                .unwrap()
                .contains("line 1")
        );
        assert!(
            syntax_problem("message A { }\n}")
                .unwrap()
                .contains("closes nothing")
        );
        assert!(
            syntax_problem("message A { string s = \"x; }")
                .unwrap()
                .contains("not closed")
        );
        assert!(syntax_problem("/* open").unwrap().contains("never ends"));
        assert!(syntax_problem(&"{".repeat(100_000)).is_some());
    }
}
