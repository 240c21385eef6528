/**
 * A fake Telegram Bot API behind the outbound-fetch seam (10 §2): it records
 * every `sendMessage` request and answers from a script — ok with a
 * `message_id`, 429 with or without `retry_after`, 401/403/404/500, a 302, a
 * 2xx without `ok`, a body over the read cap, a network error, or a hang that
 * only ends when the caller's abort signal fires. Error bodies can carry
 * canaries, to prove Telegram's answers never reach a log.
 */
import { useFakeHost } from "./network";

export type TelegramAnswer =
  | "ok"
  | { status: 429; retryAfter?: number | string; body?: string }
  | { status: number; body?: string; location?: string }
  | "ok_false"
  | "no_message_id"
  | "not_json"
  | "huge"
  | "network"
  | "hang"
  | ((request: RecordedTelegramRequest) => Response | Promise<Response>);

export interface RecordedTelegramRequest {
  url: string;
  method: string;
  path: string;
  contentType: string | null;
  redirect: string;
  body: { chat_id: unknown; text: string; link_preview_options?: unknown; parse_mode?: unknown; [key: string]: unknown };
}

export interface FakeTelegram {
  readonly requests: RecordedTelegramRequest[];
  /** Texts of every recorded sendMessage, in order. */
  texts(): string[];
  /** Answers used for the next requests, in order; when empty, `fallback` answers. */
  queue(...answers: TelegramAnswer[]): void;
  fallback: TelegramAnswer;
}

export const TELEGRAM_HOST = "api.telegram.org";

/** Installs the fake on `host` (the default API host, or a loopback stand-in's host:port). */
export function fakeTelegram(host: string = TELEGRAM_HOST): FakeTelegram {
  const requests: RecordedTelegramRequest[] = [];
  const pending: TelegramAnswer[] = [];
  let nextMessageId = 1000;
  const fake: FakeTelegram = {
    requests,
    texts: () => requests.map((request) => request.body.text),
    queue: (...answers) => void pending.push(...answers),
    fallback: "ok",
  };
  useFakeHost(host, async (request) => {
    const recorded: RecordedTelegramRequest = {
      url: request.url,
      method: request.method,
      path: new URL(request.url).pathname,
      contentType: request.headers.get("content-type"),
      redirect: request.redirect,
      body: JSON.parse(await request.text()) as RecordedTelegramRequest["body"],
    };
    requests.push(recorded);
    const answer = pending.shift() ?? fake.fallback;
    if (typeof answer === "function") return answer(recorded);
    if (answer === "ok") return json(200, { ok: true, result: { message_id: nextMessageId++, chat: { id: 1 }, text: "echo" } });
    if (answer === "ok_false") return json(200, { ok: false, description: "strange" });
    if (answer === "no_message_id") return json(200, { ok: true, result: {} });
    if (answer === "not_json") return new Response("<html>gateway</html>", { status: 200 });
    if (answer === "huge") return new Response(`{"ok":true,"result":{"message_id":1},"pad":"${"x".repeat(70 * 1024)}"}`, { status: 200 });
    if (answer === "network") throw new TypeError("connection reset by fake peer");
    if (answer === "hang") {
      return new Promise<Response>((_resolve, reject) => {
        const signal = request.signal;
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason));
      });
    }
    if (answer.status === 429 && "retryAfter" in answer) {
      const parameters = answer.retryAfter === undefined ? {} : { parameters: { retry_after: answer.retryAfter } };
      return new Response(answer.body ?? JSON.stringify({ ok: false, error_code: 429, description: "Too Many Requests", ...parameters }), {
        status: 429,
      });
    }
    const headers: Record<string, string> = "location" in answer && answer.location !== undefined ? { location: answer.location } : {};
    return new Response(answer.body ?? JSON.stringify({ ok: false, error_code: answer.status, description: "fake error" }), {
      status: answer.status,
      headers,
    });
  });
  return fake;
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
}
