//! Test helpers and fixtures shared by the extractor's unit tests, and the tests of the whole
//! file: comments and strings, truncated and hostile input.

use super::*;
use crate::index::facts::EventRole;

pub(super) fn sym<'f>(f: &'f FileFacts, name: &str) -> &'f crate::index::facts::Symbol {
    f.symbols
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no symbol {name} in {:#?}", f.symbols))
}

pub(super) fn has_sym(f: &FileFacts, name: &str) -> bool {
    f.symbols.iter().any(|s| s.name == name)
}

pub(super) fn constant<'f>(f: &'f FileFacts, name: &str) -> Option<&'f str> {
    f.bindings
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.value.as_lit().unwrap_or("?"))
}

pub(super) fn routes(f: &FileFacts) -> Vec<(String, String, Option<String>, u32)> {
    f.http
        .iter()
        .filter_map(|h| match h {
            HttpFact::Route {
                method,
                path,
                handler,
                line,
            } => Some((method.clone(), path.clone(), handler.clone(), *line)),
            HttpFact::Call { .. } => None,
        })
        .collect()
}

pub(super) fn calls(f: &FileFacts) -> Vec<(Option<String>, String, u32)> {
    f.http
        .iter()
        .filter_map(|h| match h {
            HttpFact::Call { method, url, line } => Some((method.clone(), url.display(), *line)),
            HttpFact::Route { .. } => None,
        })
        .collect()
}

pub(super) fn events(f: &FileFacts) -> Vec<(EventRole, Value, String, u32)> {
    f.events
        .iter()
        .map(|e| (e.role, e.topic.clone(), e.via.clone(), e.line))
        .collect()
}

pub(super) fn lit(s: &str) -> Value {
    Value::lit(s.to_string())
}

pub(super) fn reference(s: &str) -> Value {
    Value::reference(s.to_string())
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
    for cut in (0..full.len())
        .filter(|&c| full.is_char_boundary(c))
        .step_by(7)
    {
        let _ = extract("src/x.tsx", &full[..cut]);
        let _ = extract("src/x.ts", &full[..cut]);
    }
    for src in [
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
    ] {
        let _ = extract("src/x.tsx", src);
    }
}

#[test]
fn junk_input_never_panics() {
    let alphabet: &[u8] = b"{}()[]<>/'\"`$@#*=;:,.?!&|\\\n abcXYZ019_-+classimportexportfunction";
    let mut seed = 0x2545_f491_u64;
    let junk: String = (0..200_000)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            alphabet[(seed % alphabet.len() as u64) as usize] as char
        })
        .collect();
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
