//! Test helpers and fixtures shared by the extractor's unit tests, and the tests of the whole
//! file: comments and strings, truncated and hostile input.

use super::*;
use crate::index::facts::EventRole;
use crate::index::lang::test_support::{self, extract_each, junk_chars64, sampled_prefixes};
pub(super) use crate::index::lang::test_support::{
    constant, has_sym, http_calls as calls, imports, lit, reference, routes, sym,
};

/// The file's events as (role, topic, via, line), `via` owned as the tests spell it.
pub(super) fn events(f: &FileFacts) -> Vec<(EventRole, Value, String, u32)> {
    let rows = test_support::events(f).into_iter();
    rows.map(|(r, t, v, l)| (r, t, v.to_string(), l)).collect()
}

pub(super) const CLASSES: &str = r#"/**
 * Handles orders.
 */
@Injectable()
@Scope({ durable: true })
export abstract class OrderService<T extends { id: string }>
    extends Base<T>
    implements Repo<T> {
  private readonly cache = new Map<string, T>();
  static readonly TOPIC = 'order.static';
  #secret = 1;

  constructor(private readonly repo: Repo<T>) {
    super();
  }

  /** Creates one. */
  async create(
    req: CreateOrderRequest,
    opts?: { dryRun: boolean },
  ): Promise<{ id: string }> {
    return { id: '1' };
  }

  get size(): number { return this.cache.size; }
  static *ids(): Generator<string> { yield 'a'; }
  abstract validate(x: T): boolean;
  onEvent = async (e: Event) => {
    this.log(e);
  };

  class Nested {}
}

export class Outer {
  inner = class {
    deep() {}
  };
  method() {
    class Local { local() {} }
  }
}
"#;

pub(super) const NEST: &str = r#"@Controller('orders')
export class OrdersController implements OnModuleInit {
  private orderService: OrderServiceClient;
  constructor(
    @Inject('ORDER_PACKAGE') private readonly client: ClientGrpc,
    @Inject('KAFKA') private readonly kafka: ClientKafka,
    private readonly payments: PaymentServiceClient,
  ) {}

  onModuleInit() {
    this.orderService = this.client.getService<OrderServiceClient>('OrderService');
  }

  @Get(':id')
  getOne(@Param('id') id: string) {
    return this.orderService.getOrder({ id });
  }

  @Post()
  @HttpCode(201)
  async create(@Body() dto: CreateDto) {
    await this.payments.charge(dto);
    this.kafka.emit(Topics.ORDER_CREATED, dto);
    return this.kafka.send('orders.reply', dto);
  }
}

@Controller()
@OrderServiceControllerMethods()
export class OrdersGrpc {
  @GrpcMethod('OrderService', 'CreateOrder')
  createOrder(data: CreateOrderRequest): CreateOrderResponse {
    return {};
  }

  @GrpcMethod('OrderService')
  getOrder(data: any) {}

  @GrpcMethod()
  listOrders() {}

  @EventPattern('order.created')
  async handleCreated(@Payload() data: any) {}

  @MessagePattern(TOPICS.ORDER_PAID)
  handlePaid() {}

  @EventPattern({ cmd: 'sum' })
  notKafka() {}
}
"#;

#[test]
fn code_in_comments_and_strings_is_ignored() {
    let src = r#"// export class Commented {}
/* app.get('/hidden', h); producer.send({ topic: 'no' }); */
const s = "class InString { } fetch('/nope')";
const t = `
  export function inTemplate() {}
  ${ "x" }
`;
/**
 * @GrpcMethod('OrderService', 'Nope')
 */
export class Real {}
"#;
    let f = extract("src/x.ts", src);
    let names: Vec<&str> = f.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["s", "t", "Real"]);
    assert!(f.http.is_empty() && f.events.is_empty() && f.grpc.is_empty());
    assert_eq!(sym(&f, "Real").doc_line, Some(8));
    assert_eq!(sym(&f, "t").end_line, 7);
}

#[test]
fn truncated_and_malformed_files_never_panic() {
    let full = format!("{CLASSES}\n{NEST}");
    sampled_prefixes(extract, "src/x.tsx", &full, 7);
    sampled_prefixes(extract, "src/x.ts", &full, 7);
    extract_each(
        extract,
        "src/x.tsx",
        &[
            "class",
            "class {",
            "export default",
            "import",
            "import {",
            "import { a",
            "export * from",
            "const",
            "const x =",
            "enum E {",
            "@",
            "@Get(",
            "server.addService(",
            "producer.send({ topic:",
            "fetch(`${",
            "<div>{",
            "a.b.c.d.e.f.g.h.i(",
            ")))}}}]]]",
            "<<<<>>>>",
            "function f(): { a: string",
        ],
    );
}

#[test]
fn junk_input_never_panics() {
    let alphabet: &[u8] = b"{}()[]<>/'\"`$@#*=;:,.?!&|\\\n abcXYZ019_-+classimportexportfunction";
    let junk = junk_chars64(alphabet, 0x2545_f491);
    let f = extract("src/junk.tsx", &junk);
    assert!(f.symbols.iter().all(|s| s.end_line >= s.line));
    let _ = extract("src/junk.ts", &junk);
    let deep = "(".repeat(50_000) + &"{".repeat(50_000) + &"<a>".repeat(20_000);
    let _ = extract("src/deep.tsx", &deep);
    // Unclosed nested calls and stray `<`: every pass stays linear.
    for pattern in [
        "producer.send({topic: ",
        "fetch(",
        "a<b, ",
        "x = <a>",
        "@a(",
    ] {
        let _ = extract("src/hostile.tsx", &pattern.repeat(20_000));
    }
}

#[test]
fn env_fallbacks_and_env_helpers_read_by_their_shape() {
    let src = r#"function setting(name: string, fallback: string): string {
  const v = process.env[name];
  if (!v) return fallback;
  return v;
}
const shipments = process.env.SHIPMENTS_TOPIC ?? "shipments";
export async function run() {
  await producer.send({ topic: setting("ALPHA_TOPIC", "alpha"), messages: [] });
  await producer.send({ topic: process.env.RETURNS_TOPIC || "returns", messages: [] });
  await producer.send({ topic: shipments, messages: [] });
}
"#;
    let f = extract("src/run.ts", src);
    let env = test_support::env;
    let topics: Vec<(EventRole, Value, u32)> = test_support::topics(&f);
    assert_eq!(
        topics,
        vec![
            (EventRole::Producer, env("ALPHA_TOPIC", Some("alpha")), 8),
            (
                EventRole::Producer,
                env("RETURNS_TOPIC", Some("returns")),
                9
            ),
            (EventRole::Producer, reference("shipments"), 10),
        ]
    );
    assert_eq!(
        test_support::bindings(&f),
        // A module constant keeps the literal the code falls back to.
        vec![("shipments", lit("shipments"))]
    );
}
