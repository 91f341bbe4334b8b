#!/usr/bin/env node
// [% .ID %]: a Curupira trigger extension, written by `registry init extension`.
//
// Trigger type "todo-item": every open item ("- [ ] ...") of a Markdown file, one task per
// item. The automation table names the file: { "path": "TODO.md" }.
//
// Protocol version 2: JSON-RPC 2.0 over stdin and stdout in length-prefixed frames (eight
// hex digits giving the UTF-8 body's byte length, then the body, no newline). stdout
// carries frames only; logs go to stderr. Check it with
//   registry conformance -- node index.mjs
// No dependencies: Node.js 18 or later.
import { readFileSync } from "node:fs";

const PROTOCOL_VERSION = 2;
const MAX_FRAME = 16 << 20; // the protocol's default frame limit
const TRIGGER = "todo-item";
const manifestText = readFileSync(new URL("./curupira-extension.toml", import.meta.url), "utf8");

if (process.argv.includes("--curupira-print-manifest")) {
  process.stdout.write(manifestText);
  process.exit(0);
}

// tomlString reads a top-level `key = "value"` from the manifest, so initialize answers
// with the name and version the manifest declares.
function tomlString(key) {
  const m = manifestText.match(new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, "m"));
  return m ? m[1] : "";
}

class RPCError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const schema = {
  type: "object",
  properties: {
    path: { type: "string", default: "TODO.md", description: "Markdown file whose open items (- [ ] ...) become tasks" },
  },
  required: ["path"],
  additionalProperties: false,
};

const seen = new Set(); // items already returned by this process

function checkTrigger(params) {
  if (!params || params.trigger_type !== TRIGGER) {
    throw new RPCError(-32602, `unknown trigger type ${JSON.stringify(params && params.trigger_type)}; this extension has ${TRIGGER}`);
  }
}

function checkTable(table) {
  if (!table || typeof table.path !== "string" || table.path.trim() === "") {
    throw new RPCError(-32003, 'the table needs path, the Markdown file to read, e.g. path = "TODO.md"');
  }
}

// openItems returns the unchecked items of the file at path, or [] when it cannot be read.
function openItems(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    process.stderr.write(`${TRIGGER}: cannot read ${path}: ${err.message}\n`);
    return [];
  }
  const items = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const m = line.match(/^\s*[-*] \[ \] (.+)$/);
    if (m) items.push({ line: String(i + 1), item: m[1].trim() });
  });
  return items;
}

const methods = {
  initialize(params) {
    const v = params && params.protocol_version;
    if (v !== PROTOCOL_VERSION) {
      throw new RPCError(-32001, `protocol version ${v} is not supported; this extension speaks ${PROTOCOL_VERSION}`);
    }
    return { protocol_version: PROTOCOL_VERSION, name: tomlString("name"), version: tomlString("version") };
  },
  describe() {
    return { triggers: [{ trigger_type: TRIGGER, description: "each open item (- [ ] ...) of a Markdown file" }] };
  },
  "trigger/schema"(params) {
    checkTrigger(params);
    return { schema, prompt_fields: ["item", "line"] };
  },
  "trigger/validate"(params) {
    checkTrigger(params);
    checkTable(params.table);
    return { ok: true };
  },
  "trigger/poll"(params) {
    checkTrigger(params);
    checkTable(params.table);
    for (const it of openItems(params.table.path)) {
      const key = `${params.table.path}:${it.item}`;
      if (seen.has(key)) continue;
      seen.add(key);
      return { values: [{ key: "item", value: it.item }, { key: "line", value: it.line }] };
    }
    return { values: null };
  },
  "trigger/onStarted"(params) {
    checkTrigger(params);
    return {};
  },
  "trigger/onFinished"(params) {
    checkTrigger(params);
    return {};
  },
  shutdown() {
    return null;
  },
};

function send(msg) {
  const body = Buffer.from(JSON.stringify(msg), "utf8");
  process.stdout.write(body.length.toString(16).padStart(8, "0"));
  process.stdout.write(body);
}

function handle(req) {
  const id = req && req.id !== undefined ? req.id : null;
  const method = req && methods[req.method];
  if (!method) {
    send({ jsonrpc: "2.0", id, error: { code: -32601, message: `method ${JSON.stringify(req && req.method)} not found` } });
    return;
  }
  try {
    send({ jsonrpc: "2.0", id, result: method(req.params) });
  } catch (err) {
    const code = err instanceof RPCError ? err.code : -32603;
    send({ jsonrpc: "2.0", id, error: { code, message: err.message } });
  }
  if (req.method === "shutdown") {
    process.stdout.end(() => process.exit(0));
  }
}

let buf = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  while (buf.length >= 8) {
    const size = Number.parseInt(buf.subarray(0, 8).toString("latin1"), 16);
    if (!/^[0-9a-fA-F]{8}$/.test(buf.subarray(0, 8).toString("latin1")) || size > MAX_FRAME) {
      // A broken or oversized frame leaves the stream unreadable: say why and stop.
      process.stderr.write(`${TRIGGER}: refusing a frame header ${JSON.stringify(buf.subarray(0, 8).toString("latin1"))} (limit ${MAX_FRAME} bytes)\n`);
      process.exit(1);
    }
    if (buf.length < 8 + size) return;
    const body = buf.subarray(8, 8 + size).toString("utf8");
    buf = buf.subarray(8 + size);
    let req;
    try {
      req = JSON.parse(body);
    } catch (err) {
      send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `parse error: ${err.message}` } });
      continue;
    }
    handle(req);
  }
});
process.stdin.on("end", () => process.exit(0));
