#!/usr/bin/env python3
"""Generate the synthetic workload of SPEC §9.

Usage: gen_workload.py OUT_DIR FILES [--seed N] [--services 8] [--contracts] [--force]

Layout: OUT_DIR/services/svc-<k>/src/gen_<i>.<ext>, with the global index i = 0..FILES-1
filled service by service (svc-0 gets the first block, and so on). The language is i % 5 in
the fixed order Rust, Go, Python, TypeScript, Java. Each file holds one small declaration.
FILES is honoured exactly: when it does not divide by the service count, the first services
get one file more.

Every service directory also gets a tiny package.json, so zero-config layout detection sees
`services/*` as roots.

--contracts adds, on top of FILES (reported separately as extras):
  * a svc_<i>.proto beside every TypeScript file, whose class then has a
    @GrpcMethod('Svc<i>', 'Get<i>') handler;
  * `import com.acme.common.Shared;` in every Java file, one Shared.java declaring it in
    svc-0, and one homonym `Shared` per other service in a different package;
  * for every i % 100 == 0: a Spring config/application-<i>.yml and a docs/README_<i>.md.

The seed drives a random.Random that picks small, harmless variations in the file bodies
(a comment word, a string constant, an extra field), never the declaration names the
benchmark searches for. Same arguments => byte-identical output.

One summary line goes to stderr. Files are written directly (no subprocesses).
"""

import argparse
import os
import random
import shutil
import sys
import time

EXTS = ["rs", "go", "py", "ts", "java"]
WORDS = ["alpha", "bravo", "cedar", "delta", "ember", "fjord", "gale", "harbor",
         "iris", "juniper", "kelp", "lumen", "maple", "nova", "onyx", "pylon"]


def variation(rng):
    """Small per-file variations drawn from the seeded RNG (always drawn in the same order)."""
    return rng.choice(WORDS), rng.randrange(1000), rng.random() < 0.5


# --- one template per language --------------------------------------------------------------

def rust_file(i, rng):
    word, num, extra = variation(rng)
    field = "    pub retries: u32,\n" if extra else ""
    init = ", retries: 0" if extra else ""
    return (
        f"// generated ({word})\n"
        f"pub struct Service{i} {{\n"
        f"    pub name: String,\n"
        f"{field}"
        f"}}\n\n"
        f"impl Service{i} {{\n"
        f"    pub fn new(name: String) -> Self {{\n"
        f"        Self {{ name{init} }}\n"
        f"    }}\n\n"
        f"    pub fn handle_{i}(&self, input: &str) -> String {{\n"
        f"        format!(\"{word}-{num}:{{}}:{{}}\", self.name, input)\n"
        f"    }}\n"
        f"}}\n"
    )


def go_file(i, rng):
    word, num, extra = variation(rng)
    field = "\tRetries int\n" if extra else ""
    return (
        f"// generated ({word})\n"
        f"package pkg{i}\n\n"
        f"type Handler{i} struct {{\n"
        f"\tName string\n"
        f"{field}"
        f"}}\n\n"
        f"func NewHandler{i}(name string) *Handler{i} {{\n"
        f"\treturn &Handler{i}{{Name: name}}\n"
        f"}}\n\n"
        f"func (h *Handler{i}) Handle(input string) string {{\n"
        f"\treturn \"{word}-{num}:\" + h.Name + \":\" + input\n"
        f"}}\n"
    )


def python_file(i, rng):
    word, num, extra = variation(rng)
    field = "        self.retries = 0\n" if extra else ""
    return (
        f"# generated ({word})\n\n\n"
        f"class Worker{i}:\n"
        f"    def __init__(self, name):\n"
        f"        self.name = name\n"
        f"{field}\n"
        f"    def handle(self, payload):\n"
        f"        return \"{word}-{num}:\" + self.name + \":\" + str(payload)\n"
    )


def typescript_file(i, rng, contracts):
    word, num, extra = variation(rng)
    field = "  private retries = 0;\n" if extra else ""
    head = ""
    grpc = ""
    if contracts:
        head = "import { GrpcMethod } from '@nestjs/microservices';\n\n"
        grpc = (
            f"\n  @GrpcMethod('Svc{i}', 'Get{i}')\n"
            f"  get{i}(data: {{ id: string }}): {{ value: string }} {{\n"
            f"    return {{ value: this.handle(data.id) }};\n"
            f"  }}\n"
        )
    return (
        f"// generated ({word})\n"
        f"{head}"
        f"export class Component{i} {{\n"
        f"{field}"
        f"  constructor(private readonly name: string) {{}}\n\n"
        f"  handle(input: string): string {{\n"
        f"    return `{word}-{num}:${{this.name}}:${{input}}`;\n"
        f"  }}\n"
        f"{grpc}"
        f"}}\n"
    )


def java_file(i, rng, contracts):
    word, num, extra = variation(rng)
    field = "    private int retries = 0;\n" if extra else ""
    imp = "import com.acme.common.Shared;\n\n" if contracts else ""
    use = "Shared.tag() + " if contracts else ""
    return (
        f"// generated ({word})\n"
        f"package pkg{i};\n\n"
        f"{imp}"
        f"public class Handler{i} {{\n"
        f"    private final String name;\n"
        f"{field}\n"
        f"    public Handler{i}(String name) {{\n"
        f"        this.name = name;\n"
        f"    }}\n\n"
        f"    public String handle(String input) {{\n"
        f"        return {use}\"{word}-{num}:\" + name + \":\" + input;\n"
        f"    }}\n"
        f"}}\n"
    )


# --- contract-mix extras --------------------------------------------------------------------

def proto_file(i):
    return (
        f"syntax = \"proto3\";\n\n"
        f"package svc{i};\n\n"
        f"service Svc{i} {{\n"
        f"  rpc Get{i}(Req{i}) returns (Res{i});\n"
        f"}}\n\n"
        f"message Req{i} {{\n  string id = 1;\n}}\n\n"
        f"message Res{i} {{\n  string value = 1;\n}}\n"
    )


def shared_java(package):
    return (
        f"package {package};\n\n"
        f"public class Shared {{\n"
        f"    public static String tag() {{\n"
        f"        return \"{package}\";\n"
        f"    }}\n"
        f"}}\n"
    )


def spring_yaml(i):
    return (
        f"server:\n"
        f"  port: {8000 + i % 1000}\n"
        f"spring:\n"
        f"  application:\n"
        f"    name: svc-{i}\n"
        f"  datasource:\n"
        f"    url: jdbc:postgresql://db-{i}:5432/app\n"
        f"    username: app\n"
        f"    password: secret-{i}\n"
        f"app:\n"
        f"  features: [a, b, c]\n"
        f"  ratio: 0.{i}\n"
    )


def readme(i):
    return (
        f"# Service {i}\n\n"
        f"This service answers `Svc{i}.Get{i}` for the storefront.\n\n"
        f"## Configuration\n\n"
        f"Set `spring.datasource.url` to the service database. Orders are published on the\n"
        f"topic `orders-{i}`.\n"
    )


def manifest(k):
    return f'{{\n  "name": "svc-{k}",\n  "version": "0.0.0",\n  "private": true\n}}\n'


# --- driver ---------------------------------------------------------------------------------

def write(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def split_counts(files, services):
    """Files per service: exact total, the first `files % services` services get one more."""
    base, extra = divmod(files, services)
    return [base + (1 if k < extra else 0) for k in range(services)]


def generate(out, files, seed, services, contracts):
    rng = random.Random(seed)
    root = os.path.join(out, "services")
    extras = 0
    idx = 0
    for k, count in enumerate(split_counts(files, services)):
        svc = os.path.join(root, f"svc-{k}")
        src = os.path.join(svc, "src")
        os.makedirs(src)
        write(os.path.join(svc, "package.json"), manifest(k))
        if contracts:
            os.makedirs(os.path.join(svc, "config"))
            os.makedirs(os.path.join(svc, "docs"))
            # Shared lives in svc-0 under the imported package; the other services get a
            # homonym in their own package, so a name-only match is ambiguous.
            pkg = "com.acme.common" if k == 0 else f"com.acme.svc{k}.common"
            sdir = os.path.join(src, *pkg.split("."))
            os.makedirs(sdir)
            write(os.path.join(sdir, "Shared.java"), shared_java(pkg))
            extras += 1
        for _ in range(count):
            i = idx
            idx += 1
            lang = i % 5
            path = os.path.join(src, f"gen_{i}.{EXTS[lang]}")
            if lang == 0:
                write(path, rust_file(i, rng))
            elif lang == 1:
                write(path, go_file(i, rng))
            elif lang == 2:
                write(path, python_file(i, rng))
            elif lang == 3:
                write(path, typescript_file(i, rng, contracts))
                if contracts:
                    write(os.path.join(src, f"svc_{i}.proto"), proto_file(i))
                    extras += 1
            else:
                write(path, java_file(i, rng, contracts))
            if contracts and i % 100 == 0:
                write(os.path.join(svc, "config", f"application-{i}.yml"), spring_yaml(i))
                write(os.path.join(svc, "docs", f"README_{i}.md"), readme(i))
                extras += 2
    return extras


def main(argv):
    ap = argparse.ArgumentParser(description="Generate the SPEC §9 synthetic workload.")
    ap.add_argument("out_dir")
    ap.add_argument("files", type=int)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--services", type=int, default=8)
    ap.add_argument("--contracts", action="store_true", help="add the contract mix")
    ap.add_argument("--force", action="store_true",
                    help="delete an existing OUT_DIR/services before generating")
    args = ap.parse_args(argv)
    if args.files < 1 or args.services < 1:
        ap.error("FILES and --services must be at least 1")

    root = os.path.join(args.out_dir, "services")
    if os.path.exists(root):
        if not args.force:
            print(f"gen_workload: {root} exists; pass --force to replace it", file=sys.stderr)
            return 2
        shutil.rmtree(root)
    os.makedirs(args.out_dir, exist_ok=True)

    t0 = time.monotonic()
    extras = generate(args.out_dir, args.files, args.seed, args.services, args.contracts)
    secs = time.monotonic() - t0
    print(f"generated {args.files} files (+{extras} contract-mix extras, "
          f"+{args.services} manifests) across {args.services} services under {root}/ "
          f"(seed {args.seed}) in {secs:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
