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

/// Where a finding is: the element (`Order.total`, `Status.CANCELLED`), its number and its
/// line, in the current file or, for an element that is gone, in the base.
struct At {
    element: String,
    number: i64,
    line: u32,
    in_base: bool,
}

impl At {
    /// An element of the current file.
    fn current(element: String, number: impl Into<i64>, line: u32) -> At {
        At {
            element,
            number: number.into(),
            line,
            in_base: false,
        }
    }

    /// An element of the base that the current file no longer has.
    fn base(element: String, number: impl Into<i64>, line: u32) -> At {
        At {
            in_base: true,
            ..At::current(element, number, line)
        }
    }

    /// The finding of `rule` here.
    fn finding(&self, rule: Rule, detail: String, remediation: String) -> Finding {
        Finding {
            rule,
            element: self.element.clone(),
            number: self.number,
            line: self.line,
            in_base: self.in_base,
            detail,
            remediation,
        }
    }
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
    let base_oneofs: Vec<&str> = bm
        .fields
        .iter()
        .filter_map(|f| f.oneof.as_deref())
        .collect();
    let msg = MessagePair {
        s,
        bm,
        cm,
        base_oneofs: &base_oneofs,
    };
    let mut fields: Vec<&ProtoField> = cm.fields.iter().collect();
    crate::order::sort_by_key(&mut fields, |f| (f.number, f.line));
    for cf in fields {
        current_field(&msg, cf, report);
    }
    // Base fields whose name and number are both gone.
    let mut base_fields: Vec<&ProtoField> = bm.fields.iter().collect();
    crate::order::sort_by_key(&mut base_fields, |f| (f.number, f.line));
    for bf in base_fields {
        if cur_has_name(cm, &bf.name) || cm.fields.iter().any(|f| f.number == bf.number) {
            continue;
        }
        removed_field(bm, cm, bf, report);
    }
}

// Lookups scan the (short) field lists instead of building maps: the last field of a
// name or number wins, as it would in a map collected from the list. (Size: maps of
// these key types cost a B-tree and a sort instance each: the size budget, docs/ARCHITECTURE.md §7.)

/// The base field named `name` (the last of that name).
fn base_by_name<'m>(bm: &'m ProtoMessage, name: &str) -> Option<&'m ProtoField> {
    bm.fields.iter().rfind(|f| f.name == name)
}

/// The base field numbered `n` (the last of that number).
fn base_by_num(bm: &ProtoMessage, n: u32) -> Option<&ProtoField> {
    bm.fields.iter().rfind(|f| f.number == n)
}

/// Whether the current message has a field named `name`.
fn cur_has_name(cm: &ProtoMessage, name: &str) -> bool {
    cm.fields.iter().any(|f| f.name == name)
}

/// The checks of one field of the current message: renumbered, changed in place, or a name
/// the base did not have.
fn current_field(msg: &MessagePair, cf: &ProtoField, report: &mut WireReport) {
    let (bm, n) = (msg.bm, cf.number);
    let Some(bf) = base_by_name(bm, &cf.name) else {
        return new_name(msg, cf, report);
    };
    if bf.number != n {
        let took = base_by_num(bm, n)
            .filter(|o| o.name != cf.name)
            .map(|o| format!("; #{n} was `{}` in the base", o.name))
            .unwrap_or_default();
        let at = At::current(format!("{}.{}", bm.name, cf.name), n, cf.line);
        report.push(at.finding(
            Rule::FieldRenumbered,
            format!("#{} → #{n}{took}", bf.number),
            format!(
                "restore `{} = {};`: data written with #{} is no longer read into this \
                 field; to retire a number, add a new field and `reserved {};`",
                cf.name, bf.number, bf.number, bf.number
            ),
        ));
        return;
    }
    field_change(&FieldPair { msg, bf, cf }, report);
}

/// A current field whose name the base did not have: at a number the base used (a rename, or
/// the number reused), or at one the base reserved.
fn new_name(msg: &MessagePair, cf: &ProtoField, report: &mut WireReport) {
    let (s, bm, cm) = (msg.s, msg.bm, msg.cm);
    let m = &bm.name;
    let n = cf.number;
    let at = At::current(format!("{m}.{}", cf.name), n, cf.line);
    match base_by_num(bm, n) {
        Some(bf) => {
            let old_still_here = cur_has_name(cm, &bf.name);
            let old_retired = cm.reserved_names.iter().any(|r| r == &bf.name);
            let b_ty = classify(s.base, m, &bf.type_name, &s.base_decl);
            let c_ty = classify(s.cur, m, &cf.type_name, &s.cur_decl);
            let incompatible =
                card(bf) == card(cf) && matches!(s.compare_types(&b_ty, &c_ty), Compat::Breaking);
            if old_still_here || old_retired || incompatible {
                let why = if old_still_here {
                    format!("`{}` moved to another number", bf.name)
                } else if old_retired {
                    format!("`{}` was retired (its name is reserved)", bf.name)
                } else {
                    format!("{} → {}", bf.type_name, cf.type_name)
                };
                report.push(at.finding(
                    Rule::FieldNumberReused,
                    format!("#{n} was `{}` in the base ({why})", bf.name),
                    format!(
                        "give `{}` an unused number and add `reserved {n};` so old data \
                         written as `{}` is never read into it",
                        cf.name, bf.name
                    ),
                ));
                return;
            }
            report.push(at.finding(
                Rule::Renamed,
                format!("`{}` → `{}` at #{n}", bf.name, cf.name),
                format!(
                    "the binary format is unaffected, but JSON and text formats carry the \
                     name; keep `{}` if any client uses them",
                    bf.name
                ),
            ));
            field_change(&FieldPair { msg, bf, cf }, report);
        }
        None => {
            if in_ranges(&bm.reserved_numbers, n) {
                report.push(at.finding(
                    Rule::FieldNumberReused,
                    format!("#{n} was `reserved` in the base"),
                    format!(
                        "give `{}` an unused number and keep `reserved {n};`: old data may \
                         still carry #{n}",
                        cf.name
                    ),
                ));
            }
        }
    }
}

/// A base field whose name and number are both gone: deleted without reserving its number,
/// or with its number reserved but not its name.
fn removed_field(bm: &ProtoMessage, cm: &ProtoMessage, bf: &ProtoField, report: &mut WireReport) {
    let m = &bm.name;
    let n = bf.number;
    let at = At::base(format!("{m}.{}", bf.name), n, bf.line);
    let name_reserved = cm.reserved_names.iter().any(|r| r == &bf.name);
    if !in_ranges(&cm.reserved_numbers, n) {
        report.push(at.finding(
            Rule::FieldDeleted,
            format!("`{} {} = {n}` was removed", bf.type_name, bf.name),
            reserve_number(m, n, &bf.name, name_reserved),
        ));
    } else if !name_reserved {
        report.push(at.finding(
            Rule::NameNotReserved,
            format!("#{n} is reserved but the name `{}` is not", bf.name),
            format!(
                "add `reserved \"{}\";` so JSON and text formats never read the old name \
                 into a new field",
                bf.name
            ),
        ));
    }
}

/// The base and current versions of one message (`bm`, `cm`), with the base's `oneof` names:
/// what the checks of its fields compare.
struct MessagePair<'a> {
    s: &'a Sides<'a>,
    bm: &'a ProtoMessage,
    cm: &'a ProtoMessage,
    base_oneofs: &'a [&'a str],
}

/// The remediation of a deleted field or enum value `name = n` of `parent`: reserve its
/// number (and its name, unless already reserved) so neither is reused.
fn reserve_number(
    parent: &str,
    n: impl std::fmt::Display,
    name: &str,
    name_reserved: bool,
) -> String {
    let also_name = if name_reserved {
        String::new()
    } else {
        format!(" and `reserved \"{name}\";`")
    };
    format!("add `reserved {n};`{also_name} to `{parent}` so the number is never reused")
}

/// One field present in both versions of a message at one number (`bf` in the base, `cf` in
/// the current version): what [`field_change`] checks.
struct FieldPair<'a> {
    msg: &'a MessagePair<'a>,
    bf: &'a ProtoField,
    cf: &'a ProtoField,
}

impl FieldPair<'_> {
    /// A finding about the current field.
    fn finding(&self, rule: Rule, detail: String, remediation: String) -> Finding {
        let element = format!("{}.{}", self.msg.bm.name, self.cf.name);
        At::current(element, self.cf.number, self.cf.line).finding(rule, detail, remediation)
    }

    /// The field's type changed to one of another wire encoding.
    fn type_changed(&self) -> Finding {
        self.finding(
            Rule::FieldTypeChanged,
            format!(
                "{} → {} (different wire encodings)",
                self.bf.type_name, self.cf.type_name
            ),
            self.restore(),
        )
    }

    /// The remediation of a breaking change: restore the base's declaration, or retire the
    /// number.
    fn restore(&self) -> String {
        format!(
            "restore `{}` as `{}`, or add a new field with a new number and `reserved {};` for this one",
            self.cf.name,
            card_label(&card(self.bf), &self.bf.type_name),
            self.cf.number
        )
    }
}

/// Type, cardinality and `oneof` checks of one field present in both versions at one number.
fn field_change(p: &FieldPair, report: &mut WireReport) {
    let (s, m, bf, cf) = (p.msg.s, p.msg.bm.name.as_str(), p.bf, p.cf);
    let (bc, cc) = (card(bf), card(cf));
    let b_ty = classify(s.base, m, &bf.type_name, &s.base_decl);
    let c_ty = classify(s.cur, m, &cf.type_name, &s.cur_decl);
    if bc != cc && cardinality_change(p, (&bc, &cc), (&b_ty, &c_ty), report) {
        return;
    }
    if !matches!(bc, Card::Map(..)) && !matches!(cc, Card::Map(..)) {
        match s.compare_types(&b_ty, &c_ty) {
            Compat::Same => {}
            Compat::Breaking => report.push(p.type_changed()),
            Compat::Undecidable(why) => report.push(p.finding(
                Rule::TypeUndecidable,
                format!("{} → {}: {why}", bf.type_name, cf.type_name),
                "check that both types encode alike (same message, or enum ↔ integer)".into(),
            )),
        }
    }
    oneof_change(p, report);
}

/// A change of cardinality (singular, repeated, map, required): whether it was decided here
/// (a finding pushed, or compatible after all), so the field's other checks are skipped.
fn cardinality_change(
    p: &FieldPair,
    (bc, cc): (&Card, &Card),
    (b_ty, c_ty): (&TypeClass, &TypeClass),
    report: &mut WireReport,
) -> bool {
    let (s, m, bf, cf) = (p.msg.s, p.msg.bm.name.as_str(), p.bf, p.cf);
    let transition = format!(
        "{} → {}",
        card_label(bc, &bf.type_name),
        card_label(cc, &cf.type_name)
    );
    let verdict: Option<Compat> = match (bc, cc) {
        (Card::Map(k1, v1), Card::Map(k2, v2)) => Some(map_types(s, m, (k1, v1), (k2, v2))),
        (Card::Map(k, v), Card::Repeated) => Some(map_vs_entry(s, false, m, (k, v), c_ty)),
        (Card::Repeated, Card::Map(k, v)) => Some(map_vs_entry(s, true, m, (k, v), b_ty)),
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
        Some(Compat::Breaking) if matches!((bc, cc), (Card::Map(..), Card::Map(..))) => {
            report.push(p.type_changed());
            true
        }
        Some(Compat::Breaking) => {
            let why = if matches!(bc, Card::Required) || matches!(cc, Card::Required) {
                " (a reader that requires the field rejects messages without it)"
            } else {
                ""
            };
            report.push(p.finding(
                Rule::FieldCardinalityChanged,
                format!("{transition}{why}"),
                p.restore(),
            ));
            true
        }
        Some(Compat::Undecidable(why)) => {
            report.push(p.finding(
                Rule::TypeUndecidable,
                format!("{transition}: {why}"),
                "check the declaration in the other file".into(),
            ));
            true
        }
        Some(Compat::Same) => true,
        None => false,
    }
}

/// `oneof` membership: a field moved into, out of or between oneofs.
fn oneof_change(p: &FieldPair, report: &mut WireReport) {
    let (bm, cm, bf, cf, base_oneofs) = (p.msg.bm, p.msg.cm, p.bf, p.cf, p.msg.base_oneofs);
    match (bf.oneof.as_deref(), cf.oneof.as_deref()) {
        (a, b) if a == b => {}
        (None, Some(o)) => {
            if base_oneofs.contains(&o) {
                report.push(p.finding(
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
                    report.push(p.finding(
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
        (Some(o), None) => report.push(p.finding(
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
                report.push(p.finding(
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
        let n = cv.number;
        let at = At::current(format!("{e}.{}", cv.name), n, cv.line);
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
            report.push(at.finding(
                Rule::EnumValueRenumbered,
                format!("{old} → {n}{took}"),
                format!(
                    "restore `{} = {old};`: the number is what travels on the wire, so stored \
                     and in-flight {old}s now mean something else",
                    cv.name
                ),
            ));
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
                report.push(at.finding(
                    Rule::EnumNumberReused,
                    format!("{n} was `reserved` in the base"),
                    format!(
                        "give `{}` an unused number and keep `reserved {n};`",
                        cv.name
                    ),
                ));
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
            report.push(at.finding(
                Rule::EnumNumberReused,
                format!("{n} was `{old}`, whose name is now reserved"),
                format!(
                    "give `{}` an unused number and add `reserved {n};`: stored {n}s mean `{old}`",
                    cv.name
                ),
            ));
        } else {
            report.push(at.finding(
                Rule::Renamed,
                format!("`{}` → `{}` at {n}", olds[0], cv.name),
                format!(
                    "the binary format is unaffected, but JSON and text formats carry the name; \
                     keep `{}` (or add it back with `option allow_alias = true;`) if any client \
                     uses them",
                    olds[0]
                ),
            ));
        }
    }
    for bv in &be.values {
        if cur_has_name(&bv.name) || cur_has_number(bv.number) {
            continue;
        }
        let n = bv.number;
        let at = At::base(format!("{e}.{}", bv.name), n, bv.line);
        let name_reserved = ce.reserved_names.iter().any(|r| r == &bv.name);
        if !in_ranges(&ce.reserved_numbers, n) {
            report.push(at.finding(
                Rule::EnumValueDeleted,
                format!("`{} = {n}` was removed", bv.name),
                reserve_number(e, n, &bv.name, name_reserved),
            ));
        } else if !name_reserved {
            report.push(at.finding(
                Rule::NameNotReserved,
                format!("{n} is reserved but the name `{}` is not", bv.name),
                format!("add `reserved \"{}\";`", bv.name),
            ));
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

    /// The warnings of comparing [`BASE`] with `cur`, which must have no breaking finding.
    #[track_caller]
    fn warnings_only(cur: &str) -> Vec<Finding> {
        let r = compare(&parse(BASE), &parse(cur));
        assert!(r.breaking.is_empty(), "{:?}", r.breaking);
        r.warnings
    }

    /// A finding as the tables write it: (rule, element, number).
    type Expected = (Rule, &'static str, i64);

    /// One edit of [`BASE`] (replacements for [`with`]) and the findings it must give: the
    /// breaking ones, and the warnings (`None`: not checked).
    type Case = (
        &'static [(&'static str, &'static str)],
        &'static [Expected],
        Option<&'static [Expected]>,
    );

    /// Checks every case of a table.
    fn check(cases: &[Case]) {
        let keys = |e: &[Expected]| -> Keys { e.iter().map(|&(r, el, n)| b(r, el, n)).collect() };
        for (edits, breaking, warnings) in cases {
            let (br, warn) = diff(BASE, &with(edits));
            assert_eq!(br, keys(breaking), "{edits:?}");
            if let Some(w) = warnings {
                assert_eq!(warn, keys(w), "{edits:?}");
            }
        }
    }

    /// No finding at all.
    const NONE: Option<&[Expected]> = Some(&[]);

    #[test]
    fn identical_files_have_no_findings() {
        assert_eq!(diff(BASE, BASE), (vec![], vec![]));
        // Comments, order, options and `optional` do not matter.
        check(&[(
            &[
                (
                    "string note = 3;",
                    "// a note\n  optional string note = 3 [deprecated = true];",
                ),
                (
                    "string id = 1;\n  int64 amount = 2;",
                    "int64 amount = 2;\n  string id = 1;",
                ),
            ],
            &[],
            NONE,
        )]);
    }

    #[test]
    fn renumbered_field_is_one_finding() {
        check(&[(
            &[("string note = 3;", "string note = 10;")],
            &[(Rule::FieldRenumbered, "Order.note", 10)],
            None,
        )]);
    }

    /// A deleted field must leave its number reserved, and its name too.
    #[test]
    fn deleted_field_needs_reserved_number() {
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            (&[("string note = 3;", "")], &[(Rule::FieldDeleted, "Order.note", 3)], NONE),
            (&[("string note = 3;", "reserved 3; reserved \"note\";")], &[], NONE),
            (&[("string note = 3;", "reserved 3;")], &[], Some(&[(Rule::NameNotReserved, "Order.note", 3)])),
            // A range covers it too.
            (&[("string note = 3;", "reserved 3 to 4, \"note\";")], &[], NONE),
        ];
        check(CASES);
    }

    /// A number that meant another field (deleted, reserved or moved) must not be reused.
    #[test]
    fn reused_numbers_are_breaking() {
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            // A deleted field's number taken by a new field of another type.
            (&[("int64 amount = 2;", "string total = 2;")], &[(Rule::FieldNumberReused, "Order.total", 2)], None),
            // A reserved number taken.
            (&[("reserved 9, 20 to 25;", "reserved 20 to 25;\n  bool urgent = 9;")], &[(Rule::FieldNumberReused, "Order.urgent", 9)], None),
            (&[("reserved 9, 20 to 25;", "reserved 9;\n  bool urgent = 22;")], &[(Rule::FieldNumberReused, "Order.urgent", 22)], None),
            // The old name retired but the number reused.
            (&[("string note = 3;", "string remark = 3;\n  reserved \"note\";")], &[(Rule::FieldNumberReused, "Order.remark", 3)], None),
            // A renumbered field and a new field in its old slot: two problems.
            (
                &[("string note = 3;", "string note = 11;\n  string memo = 3;")],
                &[(Rule::FieldNumberReused, "Order.memo", 3), (Rule::FieldRenumbered, "Order.note", 11)],
                None,
            ),
        ];
        check(CASES);
    }

    /// A new name at the same number is wire-compatible, so only a warning.
    #[test]
    fn rename_in_place_is_a_warning() {
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            (&[("string note = 3;", "string comment = 3;")], &[], Some(&[(Rule::Renamed, "Order.comment", 3)])),
            (&[("STATUS_DONE = 2;", "STATUS_CLOSED = 2;")], &[], Some(&[(Rule::Renamed, "Status.STATUS_CLOSED", 2)])),
        ];
        check(CASES);
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

    /// A type written qualified or nested is the same type.
    #[test]
    fn qualified_and_nested_type_names_resolve() {
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            (&[("repeated Item items = 5;", "repeated .acme.orders.v1.Order.Item items = 5;")], &[], NONE),
            (&[("Status status = 4;", "acme.orders.v1.Status status = 4;")], &[], NONE),
        ];
        check(CASES);
    }

    /// Singular, repeated, map and required: which changes the wire tolerates.
    #[test]
    fn cardinality() {
        const LABELS: &str = "map<string, string> labels = 6;";
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            // Scalars: singular ↔ repeated breaks.
            (&[("int64 amount = 2;", "repeated int64 amount = 2;")], &[(Rule::FieldCardinalityChanged, "Order.amount", 2)], None),
            // Strings and messages absorb it.
            (&[("string note = 3;", "repeated string note = 3;")], &[], NONE),
            (&[("repeated Item items = 5;", "Item items = 5;")], &[], NONE),
            // optional ↔ plain is no change.
            (&[("int64 amount = 2;", "optional int64 amount = 2;")], &[], NONE),
            // map ↔ singular always breaks.
            (&[(LABELS, "string labels = 6;")], &[(Rule::FieldCardinalityChanged, "Order.labels", 6)], None),
            // map ↔ repeated entry with exactly key = 1 and value = 2 is compatible …
            (
                &[(LABELS, "repeated LabelsEntry labels = 6;\n  message LabelsEntry { string key = 1; string value = 2; }")],
                &[],
                NONE,
            ),
            // … but not with another shape.
            (
                &[(LABELS, "repeated LabelsEntry labels = 6;\n  message LabelsEntry { string key = 1; string value = 3; }")],
                &[(Rule::FieldCardinalityChanged, "Order.labels", 6)],
                None,
            ),
            // map value type across groups.
            (&[(LABELS, "map<string, int32> labels = 6;")], &[(Rule::FieldTypeChanged, "Order.labels", 6)], None),
            (&[(LABELS, "map<string, bytes> labels = 6;")], &[], NONE),
        ];
        check(CASES);
        // proto2 required added.
        let base = "syntax = \"proto2\";\nmessage M { optional int32 x = 1; }\n";
        let cur = "syntax = \"proto2\";\nmessage M { required int32 x = 1; }\n";
        assert_eq!(
            diff(base, cur).0,
            vec![b(Rule::FieldCardinalityChanged, "M.x", 1)]
        );
    }

    /// Enum values follow the field rules: numbers are what travel.
    #[test]
    fn enums() {
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            (&[("STATUS_DONE = 2;", "STATUS_DONE = 5;")], &[(Rule::EnumValueRenumbered, "Status.STATUS_DONE", 5)], None),
            (&[("STATUS_DONE = 2;", "")], &[(Rule::EnumValueDeleted, "Status.STATUS_DONE", 2)], None),
            (&[("STATUS_DONE = 2;", "reserved 2; reserved \"STATUS_DONE\";")], &[], NONE),
            (&[("reserved 7;", "STATUS_LOST = 7;")], &[(Rule::EnumNumberReused, "Status.STATUS_LOST", 7)], None),
            (
                &[("STATUS_DONE = 2;", "STATUS_LOST = 2;\n  reserved \"STATUS_DONE\";")],
                &[(Rule::EnumNumberReused, "Status.STATUS_LOST", 2)],
                None,
            ),
            // Swapping two numbers: each renumbering once.
            (
                &[("STATUS_OPEN = 1;\n  STATUS_DONE = 2;", "STATUS_OPEN = 2;\n  STATUS_DONE = 1;")],
                &[(Rule::EnumValueRenumbered, "Status.STATUS_OPEN", 2), (Rule::EnumValueRenumbered, "Status.STATUS_DONE", 1)],
                None,
            ),
        ];
        check(CASES);
        // A removed enum is listed as a warning; a renamed one names its successor.
        let cur = with(&[
            ("enum Status {", "enum State {"),
            ("Status status = 4;", "State status = 4;"),
        ]);
        let warnings = warnings_only(&cur);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].rule, Rule::TypeRemoved);
        assert!(
            warnings[0].detail.contains("`State`"),
            "{}",
            warnings[0].detail
        );
    }

    /// Moves into, out of and between oneofs.
    #[test]
    fn oneofs_share_the_message_number_space() {
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            // A oneof member renumbered onto a deleted plain field's number.
            (&[("string note = 3;", ""), ("string iban = 8;", "string iban = 3;")], &[(Rule::FieldRenumbered, "Order.iban", 3)], None),
            // Moving a field into the existing oneof breaks; into a new oneof alone is safe.
            (
                &[("string note = 3;", ""), ("string iban = 8;", "string iban = 8;\n    string note = 3;")],
                &[(Rule::OneofMembershipChanged, "Order.note", 3)],
                None,
            ),
            (&[("string note = 3;", "oneof remark { string note = 3; }")], &[], NONE),
            // Renaming a whole oneof is no change; a member out of it is a warning.
            (&[("oneof payment {", "oneof pay_with {")], &[], NONE),
            (&[("    string iban = 8;\n  }", "  }\n  string iban = 8;")], &[], Some(&[(Rule::OneofMove, "Order.iban", 8)])),
        ];
        check(CASES);
        // Two fields into a new oneof: a warning each.
        let cur = with(&[(
            "string id = 1;\n  int64 amount = 2;",
            "oneof key { string id = 1; int64 amount = 2; }",
        )]);
        let (br, warn) = diff(BASE, &cur);
        assert!(br.is_empty(), "{br:?}");
        assert_eq!(warn.len(), 2, "{warn:?}");
    }

    /// Nested messages are compared by their path, not their last name.
    #[test]
    fn nested_messages_are_matched_by_path() {
        const ITEM: &str = "message Item { string sku = 1; int32 qty = 2; }";
        #[rustfmt::skip]
        const CASES: &[Case] = &[
            (&[(ITEM, "message Item { string sku = 1; string qty = 2; }")], &[(Rule::FieldTypeChanged, "Order.Item.qty", 2)], None),
            (&[(ITEM, "message Item { string sku = 1; }")], &[(Rule::FieldDeleted, "Order.Item.qty", 2)], None),
        ];
        check(CASES);
        // Moving the nested type out to the top level changes the field's message type.
        let cur = with(&[
            (ITEM, ""),
            (
                "enum Status {",
                "message Item { string sku = 1; int32 qty = 2; }\nenum Status {",
            ),
        ]);
        let warnings = warnings_only(&cur);
        for (rule, element) in [
            (Rule::TypeUndecidable, "Order.items"),
            (Rule::TypeRemoved, "Order.Item"),
        ] {
            assert!(
                warnings
                    .iter()
                    .any(|w| w.rule == rule && w.element == element),
                "{rule:?} {element}: {warnings:?}"
            );
        }
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
