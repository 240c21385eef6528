/**
 * An in-process stand-in for the Telegram Bot API on loopback, for the suites
 * that run the real local door (`npm run test:crash`, test/e2e/cron-overlap).
 * It answers `POST /bot<token>/sendMessage` with `ok` and a fresh
 * `message_id`, and records every request whose body arrived whole — the
 * moment Telegram would have delivered the message to the owner's chat,
 * whether or not its answer ever reaches the Worker.
 *
 * Each recorded send is keyed by the source id the message carries (its
 * `id: <contact_id>` line, 05 §7) and its delivery reference (`ref:
 * <outbox tail>#<attempts>`), so a suite counts deliveries per source.
 *
 * `delayMs` holds each answer back (a real Bot API answers in tens to hundreds
 * of milliseconds): it widens the window in which a message has been delivered
 * but the Worker has not yet recorded it — the one window in which 05 §4
 * allows a resend after a crash. The token is never recorded.
 */
import { createServer, type Server } from "node:http";

export interface RecordedSend {
  /** Milliseconds since the epoch when the request body had arrived. */
  at: number;
  chatId: unknown;
  /** The `id:` line of the message (a `mc_…` or `ob_…` id), or null when absent. */
  sourceId: string | null;
  /** The `ref:` line without its label (`<outbox tail>#<attempts>`), or null. */
  ref: string | null;
  /** The attempt number of the delivery reference, or null. */
  attempt: number | null;
}

export interface TelegramStandIn {
  origin: string;
  sends: RecordedSend[];
  /** Requests that were not a `sendMessage` (answered 404): none are expected. */
  strays: number;
  close(): Promise<void>;
}

export interface StandInOptions {
  /** How long to hold back each answer (ms); default 0. */
  delayMs?: () => number;
  /** Called once a send is recorded, with the delay its answer is held back by. */
  onSend?: (send: RecordedSend, delayMs: number) => void;
}

export async function startTelegramStandIn(options: StandInOptions = {}): Promise<TelegramStandIn> {
  const sends: RecordedSend[] = [];
  let nextMessageId = 1;
  const standIn: TelegramStandIn = { origin: "", sends, strays: 0, close: () => Promise.resolve() };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const isSend = request.method === "POST" && /^\/bot[^/]+\/sendMessage$/.test(request.url ?? "");
      if (!isSend) {
        standIn.strays += 1;
        response.writeHead(404, { "content-type": "application/json" });
        response.end(JSON.stringify({ ok: false, error_code: 404, description: "Not Found" }));
        return;
      }
      let body: { chat_id?: unknown; text?: unknown } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        // recorded with no source: a check counts it as foreign
      }
      const text = typeof body.text === "string" ? body.text : "";
      const ref = /^ref: (\S+#(\d+))$/m.exec(text);
      const send: RecordedSend = {
        at: Date.now(),
        chatId: body.chat_id,
        sourceId: /^id: (\S+)$/m.exec(text)?.[1] ?? null,
        ref: ref?.[1] ?? null,
        attempt: ref === null ? null : Number(ref[2]),
      };
      sends.push(send);
      const messageId = nextMessageId++;
      const answer = () => {
        if (response.destroyed) return;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ ok: true, result: { message_id: messageId, date: Math.floor(Date.now() / 1000), text: "" } }));
      };
      const delay = options.delayMs?.() ?? 0;
      options.onSend?.(send, delay);
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
    // A client killed mid-request: nothing arrived whole, nothing is recorded.
    request.on("error", () => undefined);
    response.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  standIn.origin = `http://127.0.0.1:${port}`;
  standIn.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return standIn;
}

/** Sends recorded per source id. */
export function sendsBySource(sends: readonly RecordedSend[]): Map<string, RecordedSend[]> {
  const bySource = new Map<string, RecordedSend[]>();
  for (const send of sends) {
    const key = send.sourceId ?? "(no id line)";
    bySource.set(key, [...(bySource.get(key) ?? []), send]);
  }
  return bySource;
}
