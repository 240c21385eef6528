#!/usr/bin/env node
/**
 * A local stand-in for the Telegram Bot API (docs/notifications.md): it
 * listens on loopback only, answers `POST /bot<token>/sendMessage`, and prints
 * one JSON line per request to stdout — the chat id, the message text and the
 * status it answered — so a developer can watch notifications offline.
 *
 *   node scripts/telegram-stand-in.mjs [--port 0] [--host 127.0.0.1] [--answers 429:3,500,ok]
 *
 * `--port` defaults to 0: a free port, printed (on stderr) when it listens.
 * `--answers` scripts the first answers in order (`ok`, a status such as `500`,
 * or `429:<retry_after>`); after the list, every request gets `ok`. The bot
 * token in the path is never printed. `npm start -- --owner` runs it by itself;
 * alone, point the door at the origin it prints with TELEGRAM_API_ORIGIN in
 * .dev.vars, or `magnt dev --telegram-api-origin <origin>`.
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const USAGE = `Usage: node scripts/telegram-stand-in.mjs [options]

A loopback stand-in for the Telegram Bot API: answers
POST /bot<token>/sendMessage and prints one JSON line per request on stdout
(the token masked).

Options:
  --port <n>        port to listen on (default 0: a free port, printed when
                    listening)
  --host <addr>     127.0.0.1 (default), localhost or ::1
  --answers <list>  the first answers in order: ok, a status such as 500, or
                    429:<retry_after>
  -h, --help        show this help

Then point the door at the origin it prints: TELEGRAM_API_ORIGIN in .dev.vars,
or npm start -- --telegram-api-origin <origin> (npm start -- --owner runs it by
itself).`;

function fail(message) {
  // The message and one line pointing to --help, as magnt's own usage errors (08 §3).
  process.stderr.write(`telegram-stand-in: ${message}\nRun "node scripts/telegram-stand-in.mjs --help" for usage.\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      answers: { type: "string", default: "" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
} catch (error) {
  fail(error.message);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
if (!LOOPBACK.has(values.host)) fail("--host must be a loopback address (127.0.0.1, localhost or ::1)");
if (!/^[0-9]{1,5}$/.test(values.port) || Number(values.port) > 65535) fail("--port must be a port number (0 for a free one)");

const script = values.answers
  .split(",")
  .map((entry) => entry.trim())
  .filter((entry) => entry !== "");
let nextMessageId = 1;

function answerFor(entry) {
  if (entry === undefined || entry === "ok") {
    const messageId = nextMessageId++;
    return { status: 200, body: { ok: true, result: { message_id: messageId, date: Math.floor(Date.now() / 1000), text: "" } } };
  }
  const [status, retryAfter] = entry.split(":");
  const code = Number(status);
  const body = { ok: false, error_code: code, description: `stand-in answer ${code}` };
  if (code === 429) body.parameters = { retry_after: retryAfter === undefined ? 1 : Number(retryAfter) };
  return { status: code, body };
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const path = (request.url ?? "").replace(/^\/bot[^/]*/, "/bot<token>");
    let body = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = null;
    }
    const isSend = request.method === "POST" && /^\/bot[^/]+\/sendMessage$/.test(request.url ?? "");
    const answer = isSend ? answerFor(script.shift()) : { status: 404, body: { ok: false, error_code: 404, description: "Not Found" } };
    process.stdout.write(
      `${JSON.stringify({ time: new Date().toISOString(), method: request.method, path, status: answer.status, chat_id: body?.chat_id ?? null, text: body?.text ?? null })}\n`,
    );
    response.writeHead(answer.status, { "content-type": "application/json" });
    response.end(JSON.stringify(answer.body));
  });
});

server.on("error", (error) => {
  process.stderr.write(
    error.code === "EADDRINUSE"
      ? `telegram-stand-in: port ${values.port} on ${values.host} is already in use: pass another --port (or --port 0 for a free one)\n`
      : `telegram-stand-in: cannot listen on ${values.host}:${values.port}: ${error.code ?? error.message}\n`,
  );
  process.exit(1);
});

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const host = values.host === "::1" ? "[::1]" : values.host;
  process.stderr.write(`telegram-stand-in: listening on http://${host}:${typeof address === "object" && address ? address.port : values.port}\n`);
});

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
