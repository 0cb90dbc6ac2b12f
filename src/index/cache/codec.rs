//! The cache's payload encoding: a compact hand-written binary form of [`FileFacts`].
//!
//! It replaces serde_json, whose derived deserialisers for the fact types cost about 100 KB of
//! machine code (the size budget, docs/ARCHITECTURE.md §7) and whose text is larger and slower
//! to parse. The layout is positional: unsigned integers are LEB128 varints, signed ones
//! zig-zag varints, strings and lists a varint length then their items, an `Option` a varint 0 (`None`) or 1 then the value,
//! a `bool` one byte, an enum a varint tag then its fields in declaration order. Any change to
//! it bumps the cache's `SCHEMA_VERSION`. Decoding checks every length against the bytes left
//! and returns `None` on anything malformed (the row's checksum makes that rare).

use crate::index::facts::{
    Binding, DocSection, EnvSetting, EventFact, EventRole, FieldLabel, FileFacts, GrpcFact,
    HttpFact, Import, Part, Property, ProtoEnum, ProtoEnumValue, ProtoField, ProtoFile,
    ProtoMessage, ProtoRpc, ProtoService, Symbol, SymbolKind, Value,
};

/// The encoded form of `facts`.
pub fn encode(facts: &FileFacts) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    facts.put(&mut out);
    out
}

/// The facts `bytes` encode, or `None` when they are malformed or have bytes left over.
pub fn decode(bytes: &[u8]) -> Option<FileFacts> {
    let mut input = bytes;
    let facts = FileFacts::take(&mut input)?;
    input.is_empty().then_some(facts)
}

/// Every symbol kind, indexed by its encoded tag (its declaration position).
const SYMBOL_KINDS: [SymbolKind; 21] = SymbolKind::ALL;

const FIELD_LABELS: [FieldLabel; 4] = [
    FieldLabel::Singular,
    FieldLabel::Optional,
    FieldLabel::Required,
    FieldLabel::Repeated,
];

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take_varint(input: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// A varint tag or length, as a `usize`.
fn take_len(input: &mut &[u8]) -> Option<usize> {
    usize::try_from(take_varint(input)?).ok()
}

/// A value with a place in the encoding.
trait Encoded: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn take(input: &mut &[u8]) -> Option<Self>;
}

impl Encoded for u32 {
    fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, u64::from(*self));
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        u32::try_from(take_varint(input)?).ok()
    }
}

impl Encoded for i32 {
    fn put(&self, out: &mut Vec<u8>) {
        // Zig-zag: small magnitudes of either sign stay short.
        put_varint(out, u64::from(((*self << 1) ^ (*self >> 31)) as u32));
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let z = u32::take(input)?;
        Some(((z >> 1) as i32) ^ -((z & 1) as i32))
    }
}

impl Encoded for u8 {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        Some(byte)
    }
}

impl Encoded for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        match u8::take(input)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Encoded for String {
    fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        out.extend_from_slice(self.as_bytes());
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let len = take_len(input)?;
        if len > input.len() {
            return None;
        }
        let (text, rest) = input.split_at(len);
        *input = rest;
        String::from_utf8(text.to_vec()).ok()
    }
}

impl<T: Encoded> Encoded for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        match u8::take(input)? {
            0 => Some(None),
            1 => Some(Some(T::take(input)?)),
            _ => None,
        }
    }
}

impl<T: Encoded> Encoded for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for item in self {
            item.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        let len = take_len(input)?;
        // Every item takes at least one byte, so a longer list is malformed.
        if len > input.len() {
            return None;
        }
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            items.push(T::take(input)?);
        }
        Some(items)
    }
}

impl<A: Encoded, B: Encoded> Encoded for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some((A::take(input)?, B::take(input)?))
    }
}

impl Encoded for SymbolKind {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        SYMBOL_KINDS.get(usize::from(u8::take(input)?)).copied()
    }
}

impl Encoded for FieldLabel {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        FIELD_LABELS.get(usize::from(u8::take(input)?)).copied()
    }
}

impl Encoded for EventRole {
    fn put(&self, out: &mut Vec<u8>) {
        (*self == EventRole::Consumer).put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(if bool::take(input)? {
            EventRole::Consumer
        } else {
            EventRole::Producer
        })
    }
}

/// Implements [`Encoded`] for a struct as its fields in order.
macro_rules! encoded_struct {
    ($name:ident { $($field:ident),* $(,)? }) => {
        impl Encoded for $name {
            fn put(&self, out: &mut Vec<u8>) {
                $(self.$field.put(out);)*
            }
            fn take(input: &mut &[u8]) -> Option<Self> {
                Some($name { $($field: Encoded::take(input)?),* })
            }
        }
    };
}

encoded_struct!(Symbol {
    name,
    kind,
    line,
    end_line,
    doc_line,
    container
});
encoded_struct!(Import {
    module,
    names,
    alias,
    line,
    reexport,
    renamed
});
encoded_struct!(EventFact {
    role,
    topic,
    via,
    line
});
encoded_struct!(Binding { name, value, line });
encoded_struct!(DocSection {
    title,
    level,
    line,
    end_line,
    text
});
encoded_struct!(Property { key, value, line });
encoded_struct!(EnvSetting {
    var,
    value,
    line,
    service,
    context
});
encoded_struct!(ProtoField {
    name,
    number,
    type_name,
    label,
    oneof,
    line
});
encoded_struct!(ProtoMessage {
    name,
    line,
    end_line,
    fields,
    reserved_numbers,
    reserved_names
});
encoded_struct!(ProtoEnumValue { name, number, line });
encoded_struct!(ProtoEnum {
    name,
    line,
    end_line,
    values,
    reserved_numbers,
    reserved_names
});
encoded_struct!(ProtoRpc {
    name,
    request,
    response,
    client_streaming,
    server_streaming,
    line
});
encoded_struct!(ProtoService {
    name,
    line,
    end_line,
    rpcs
});
encoded_struct!(ProtoFile {
    syntax,
    package,
    imports,
    options,
    services,
    messages,
    enums
});
encoded_struct!(FileFacts {
    package,
    generated,
    symbols,
    imports,
    grpc,
    events,
    http,
    bindings,
    proto,
    sections,
    properties,
    env_settings,
    call_args,
});

impl Encoded for GrpcFact {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            GrpcFact::Server {
                service,
                impl_type,
                line,
            } => {
                out.push(0);
                service.put(out);
                impl_type.put(out);
                line.put(out);
            }
            GrpcFact::Handler {
                service,
                method,
                line,
            } => {
                out.push(1);
                service.put(out);
                method.put(out);
                line.put(out);
            }
            GrpcFact::Client { service, var, line } => {
                out.push(2);
                service.put(out);
                var.put(out);
                line.put(out);
            }
            GrpcFact::Call {
                service,
                receiver,
                method,
                line,
            } => {
                out.push(3);
                service.put(out);
                receiver.put(out);
                method.put(out);
                line.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => GrpcFact::Server {
                service: Encoded::take(input)?,
                impl_type: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            1 => GrpcFact::Handler {
                service: Encoded::take(input)?,
                method: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            2 => GrpcFact::Client {
                service: Encoded::take(input)?,
                var: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            3 => GrpcFact::Call {
                service: Encoded::take(input)?,
                receiver: Encoded::take(input)?,
                method: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            _ => return None,
        })
    }
}

impl Encoded for Part {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Part::Lit(text) => {
                out.push(0);
                text.put(out);
            }
            Part::Ref { name, default } => {
                out.push(1);
                name.put(out);
                default.put(out);
            }
            Part::Env { var, default } => {
                out.push(2);
                var.put(out);
                default.put(out);
            }
            Part::Config { key, default } => {
                out.push(3);
                key.put(out);
                default.put(out);
            }
            Part::Dynamic => out.push(4),
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => Part::Lit(Encoded::take(input)?),
            1 => Part::Ref {
                name: Encoded::take(input)?,
                default: Encoded::take(input)?,
            },
            2 => Part::Env {
                var: Encoded::take(input)?,
                default: Encoded::take(input)?,
            },
            3 => Part::Config {
                key: Encoded::take(input)?,
                default: Encoded::take(input)?,
            },
            4 => Part::Dynamic,
            _ => return None,
        })
    }
}

impl Encoded for Value {
    fn put(&self, out: &mut Vec<u8>) {
        self.parts.put(out);
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(Value {
            parts: Encoded::take(input)?,
        })
    }
}

impl Encoded for HttpFact {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            HttpFact::Route {
                method,
                path,
                handler,
                line,
            } => {
                out.push(0);
                method.put(out);
                path.put(out);
                handler.put(out);
                line.put(out);
            }
            HttpFact::Call { method, url, line } => {
                out.push(1);
                method.put(out);
                url.put(out);
                line.put(out);
            }
            HttpFact::Mount {
                prefix,
                router,
                line,
            } => {
                out.push(2);
                prefix.put(out);
                router.put(out);
                line.put(out);
            }
            HttpFact::Probe {
                service,
                path,
                shown,
                line,
            } => {
                out.push(4);
                service.put(out);
                path.put(out);
                shown.put(out);
                line.put(out);
            }
            HttpFact::Versions { versions, line } => {
                out.push(3);
                versions.put(out);
                line.put(out);
            }
            HttpFact::Navigate { url, line } => {
                out.push(5);
                url.put(out);
                line.put(out);
            }
            HttpFact::Prefix {
                prefix,
                first,
                last,
                line,
            } => {
                out.push(6);
                prefix.put(out);
                first.put(out);
                last.put(out);
                line.put(out);
            }
            HttpFact::AppPrefix { prefix, line } => {
                out.push(7);
                prefix.put(out);
                line.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Option<Self> {
        Some(match u8::take(input)? {
            0 => HttpFact::Route {
                method: Encoded::take(input)?,
                path: Encoded::take(input)?,
                handler: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            1 => HttpFact::Call {
                method: Encoded::take(input)?,
                url: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            2 => HttpFact::Mount {
                prefix: Encoded::take(input)?,
                router: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            4 => HttpFact::Probe {
                service: Encoded::take(input)?,
                path: Encoded::take(input)?,
                shown: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            3 => HttpFact::Versions {
                versions: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            5 => HttpFact::Navigate {
                url: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            6 => HttpFact::Prefix {
                prefix: Encoded::take(input)?,
                first: Encoded::take(input)?,
                last: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            7 => HttpFact::AppPrefix {
                prefix: Encoded::take(input)?,
                line: Encoded::take(input)?,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> FileFacts {
        FileFacts {
            package: Some("acme.orders.v1".into()),
            generated: true,
            symbols: SYMBOL_KINDS
                .iter()
                .enumerate()
                .map(|(i, &kind)| Symbol {
                    name: format!("S{i} ünïcode"),
                    kind,
                    line: i as u32 * 1000,
                    end_line: u32::MAX,
                    doc_line: (i % 2 == 0).then_some(i as u32),
                    container: (i % 3 == 0).then(|| "Outer".to_string()),
                })
                .collect(),
            imports: vec![Import {
                module: "github.com/acme/orders/pb".into(),
                names: vec!["A".into(), "B".into()],
                alias: Some("pb".into()),
                line: 3,
                reexport: true,
                renamed: vec![("B".into(), "Bé".into())],
            }],
            grpc: vec![
                GrpcFact::server("Orders", None, 1),
                GrpcFact::Handler {
                    service: "Orders".into(),
                    method: "Create".into(),
                    line: 2,
                },
                GrpcFact::client("Orders", Some("c"), 3),
                GrpcFact::Call {
                    service: None,
                    receiver: "c".into(),
                    method: "Create".into(),
                    line: 4,
                },
            ],
            events: vec![
                EventFact::at(
                    EventRole::Producer,
                    Value::lit("orders.created"),
                    "kafkajs",
                    5,
                ),
                EventFact::at(
                    EventRole::Consumer,
                    Value::reference("Topics.X"),
                    "sarama",
                    6,
                ),
                EventFact::at(
                    EventRole::Consumer,
                    Value::env("TOPIC", Some("t".into())),
                    "env",
                    7,
                ),
            ],
            http: vec![
                HttpFact::route("GET", "/orders/{id}", Some("get"), 8),
                HttpFact::call(None, "/orders", 9),
                HttpFact::Mount {
                    prefix: "/api".into(),
                    router: "routes.router".into(),
                    line: 9,
                },
                HttpFact::Probe {
                    service: "orders".into(),
                    path: "/health".into(),
                    shown: "curl -f http://localhost:8080/health".into(),
                    line: 11,
                },
                HttpFact::Versions {
                    versions: vec!["1.0".into(), "2023-01-01 ß".into()],
                    line: 8,
                },
                HttpFact::Navigate {
                    url: Value::lit("item/42"),
                    line: 12,
                },
                HttpFact::Prefix {
                    prefix: Value::reference("ApiPaths.ORDERS"),
                    first: 3,
                    last: 40,
                    line: 2,
                },
                HttpFact::AppPrefix {
                    prefix: Value::env("API_PREFIX", Some("api".into())),
                    line: 13,
                },
            ],
            bindings: vec![Binding {
                name: "X".into(),
                value: Value::lit("x"),
                line: 10,
            }],
            proto: Some(ProtoFile {
                syntax: Some("proto3".into()),
                package: None,
                imports: vec!["a.proto".into()],
                options: vec![("go_package".into(), "pb".into())],
                services: vec![ProtoService {
                    name: "Orders".into(),
                    line: 1,
                    end_line: 4,
                    rpcs: vec![ProtoRpc {
                        name: "Create".into(),
                        request: "Req".into(),
                        response: "Res".into(),
                        client_streaming: false,
                        server_streaming: true,
                        line: 2,
                    }],
                }],
                messages: vec![ProtoMessage {
                    name: "Req".into(),
                    line: 5,
                    end_line: 9,
                    fields: FIELD_LABELS
                        .iter()
                        .map(|&label| ProtoField {
                            name: "id".into(),
                            number: 536_870_911,
                            type_name: "map<string,int64>".into(),
                            label,
                            oneof: Some("o".into()),
                            line: 6,
                        })
                        .collect(),
                    reserved_numbers: vec![(2, 2), (9, 11)],
                    reserved_names: vec!["old".into()],
                }],
                enums: vec![ProtoEnum {
                    name: "State".into(),
                    line: 10,
                    end_line: 12,
                    values: vec![ProtoEnumValue {
                        name: "NEG".into(),
                        number: -7,
                        line: 11,
                    }],
                    reserved_numbers: vec![(i32::MIN, -1), (0, i32::MAX)],
                    reserved_names: vec![],
                }],
            }),
            sections: vec![DocSection {
                title: "Intro".into(),
                level: 6,
                line: 1,
                end_line: 20,
                text: "# Intro\n\nText.".into(),
            }],
            properties: vec![Property {
                key: "a.b".into(),
                value: "***".into(),
                line: 2,
            }],
            env_settings: vec![EnvSetting {
                var: "KAFKA_TOPIC".into(),
                value: "orders".into(),
                line: 7,
                service: "orders".into(),
                context: Some("./orders".into()),
            }],
            call_args: vec![Binding {
                name: "call get#0".into(),
                value: Value::lit("/tags"),
                line: 14,
            }],
        }
    }

    #[test]
    fn round_trips_every_kind_of_fact() {
        let facts = sample();
        assert_eq!(decode(&encode(&facts)), Some(facts));
        let empty = FileFacts::default();
        assert_eq!(decode(&encode(&empty)), Some(empty));
    }

    #[test]
    fn symbol_kind_tags_follow_the_declaration_order() {
        for (i, kind) in SYMBOL_KINDS.iter().enumerate() {
            assert_eq!(*kind as usize, i);
        }
        for (i, label) in FIELD_LABELS.iter().enumerate() {
            assert_eq!(*label as usize, i);
        }
    }

    #[test]
    fn malformed_bytes_decode_to_none() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "truncated at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None, "trailing byte");
        assert_eq!(decode(&[0xff; 16]), None);
    }
}
