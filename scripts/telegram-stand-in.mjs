#!/usr/bin/env node
/**
 * A local stand-in for the Telegram Bot API (docs/notifications.md): it
 * listens on loopback only, answers `POST /bot<token>/sendMessage`, and prints
 * one JSON line per request to stdout — the chat id, the message text and the
 * status it answered — so a developer can watch notifications offline.
 *
 *   node scripts/telegram-stand-in.mjs [--port 8790] [--host 127.0.0.1] [--answers 429:3,500,ok]
 *
 * `--answers` scripts the first answers in order (`ok`, a status such as `500`,
 * or `429:<retry_after>`); after the list, every request gets `ok`. The bot
 * token in the path is never printed. Point the door at it with
 * TELEGRAM_API_ORIGIN=http://127.0.0.1:8790 in .dev.vars, or
 * `magnt dev --telegram-api-origin http://127.0.0.1:8790`.
 */
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "8790" },
    host: { type: "string", default: "127.0.0.1" },
    answers: { type: "string", default: "" },
  },
});

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
if (!LOOPBACK.has(values.host)) {
  process.stderr.write("telegram-stand-in: --host must be a loopback address (127.0.0.1, localhost or ::1)\n");
  process.exit(2);
}

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

server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const host = values.host === "::1" ? "[::1]" : values.host;
  process.stderr.write(`telegram-stand-in: listening on http://${host}:${typeof address === "object" && address ? address.port : values.port}\n`);
});

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
