/**
 * The Telegram adapter (05 §2, §6, §7): the only module that formats message
 * text and the only one that calls the network for notifications (through
 * edge/outbound.ts).
 *
 * Threat model:
 * - Visitor text (a contact summary, a searched goal) is untrusted. It is sent
 *   as plain text (no `parse_mode`, so it cannot inject markup), stripped of
 *   control, line-break and bidi characters, cut to 300 code points, and left
 *   out entirely in `metadata_only` mode. No other visitor field (`reply_to`,
 *   `operator`, `agent_identity`, `found_via`, client metadata) can reach a
 *   message: the message model does not carry them.
 * - The bot token is part of the request path. The URL, error objects, error
 *   messages and response bodies never leave this module: the result is a
 *   closed union of ids, kinds and numbers, and nothing here logs.
 * - The answer is read with a 64 KiB cap and parsed only for `ok`,
 *   `result.message_id` and `parameters.retry_after`.
 */
import { replaceDisplayControls } from "../contracts/display-controls";
import { postJsonCapped } from "../edge/outbound";
import type { PreviewMode } from "./config";

/** Longest excerpt, in Unicode code points, including the ellipsis (05 §7). */
export const EXCERPT_MAX_CODE_POINTS = 300;
const ELLIPSIS = "…";

/** What a message may say — ids, timestamps and booleans, plus the one excerpt source. */
export type MessageModel =
  | {
      kind: "contact";
      contactId: string;
      createdAt: string;
      hasReplyChannel: boolean;
      isFollowUp: boolean;
      outboxId: string;
      attempts: number;
      /** The contact's `summary`; used only in excerpt mode. */
      excerptSource: string;
    }
  | {
      kind: "observation";
      observationId: string;
      createdAt: string;
      hasBlocker: boolean;
      hasTried: boolean;
      outboxId: string;
      attempts: number;
      /** The observation's `goal`; used only in excerpt mode. */
      excerptSource: string;
    };

export type TelegramFailureKind = "timeout" | "network" | "redirect" | "http_4xx" | "http_429" | "http_5xx" | "bad_response";

export type TelegramResult =
  | { ok: true; messageId: number }
  | { ok: false; kind: TelegramFailureKind; httpStatus?: number; retryAfterSeconds?: number };

export interface TelegramTarget {
  apiOrigin: string;
  token: string;
  chatId: string;
  previewMode: PreviewMode;
}

/** Composes the plain text of one message (05 §7). */
export function formatMessage(model: MessageModel, previewMode: PreviewMode): string {
  const ref = `ref: ${model.outboxId.slice(-8)}#${model.attempts}`;
  const lines =
    model.kind === "contact"
      ? [
          "MAGNT · new contact",
          `id: ${model.contactId}`,
          `received: ${model.createdAt}`,
          `reply channel: ${yesNo(model.hasReplyChannel)} · follow-up: ${yesNo(model.isFollowUp)}`,
          ref,
          `read: magnt review contacts ${model.contactId}`,
        ]
      : [
          "MAGNT · searched goal",
          `id: ${model.observationId}`,
          `observed: ${model.createdAt}`,
          `blocker: ${yesNo(model.hasBlocker)} · tried: ${yesNo(model.hasTried)}`,
          ref,
        ];
  if (previewMode === "excerpt") {
    const text = excerpt(model.excerptSource);
    if (text !== "") lines.push("", text);
  }
  return lines.join("\n");
}

/**
 * The excerpt rule of 05 §7: every control character, line break and bidi
 * control (the shared class of contracts/display-controls.ts) becomes a
 * space (and a lone surrogate U+FFFD, so the JSON body stays valid UTF-8),
 * the result is trimmed, and text longer than 300 code points becomes its
 * first 299 code points followed by `…`.
 */
export function excerpt(source: string): string {
  const cleaned = replaceDisplayControls(source, () => " ")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")
    .trim();
  const points = Array.from(cleaned);
  if (points.length <= EXCERPT_MAX_CODE_POINTS) return cleaned;
  return points.slice(0, EXCERPT_MAX_CODE_POINTS - 1).join("") + ELLIPSIS;
}

function yesNo(value: boolean): "yes" | "no" {
  return value ? "yes" : "no";
}

/**
 * Sends one message (05 §6). Never throws; never returns a body, URL or error
 * text. `timeoutMs` exists for tests (a hang is simulated with a short limit).
 */
export async function sendTelegramMessage(
  target: TelegramTarget,
  model: MessageModel,
  options: { timeoutMs?: number } = {},
): Promise<TelegramResult> {
  const answer = await postJsonCapped(
    `${target.apiOrigin}/bot${target.token}/sendMessage`,
    {
      chat_id: chatIdValue(target.chatId),
      text: formatMessage(model, target.previewMode),
      link_preview_options: { is_disabled: true },
    },
    options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
  );
  if (!answer.ok) return answer.status === undefined ? { ok: false, kind: answer.kind } : { ok: false, kind: answer.kind, httpStatus: answer.status };
  const status = answer.status;
  const parsed = parseAnswer(answer.body);
  if (status >= 200 && status < 300) {
    return parsed.ok === true && parsed.messageId !== undefined
      ? { ok: true, messageId: parsed.messageId }
      : { ok: false, kind: "bad_response", httpStatus: status };
  }
  if (status === 429) {
    return parsed.retryAfter === undefined
      ? { ok: false, kind: "http_429", httpStatus: status }
      : { ok: false, kind: "http_429", httpStatus: status, retryAfterSeconds: parsed.retryAfter };
  }
  return { ok: false, kind: status >= 500 ? "http_5xx" : "http_4xx", httpStatus: status };
}

/** A numeric chat id goes out as a JSON number, a `@username` as a string (both are accepted by the Bot API). */
function chatIdValue(chatId: string): number | string {
  const value = Number(chatId);
  return /^-?[0-9]+$/.test(chatId) && Number.isSafeInteger(value) ? value : chatId;
}

interface ParsedAnswer {
  ok?: boolean;
  messageId?: number;
  retryAfter?: number;
}

/** Only `ok`, `result.message_id` and `parameters.retry_after` are looked at; everything else is ignored. */
function parseAnswer(body: string | null): ParsedAnswer {
  if (body === null || body === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return {};
  }
  if (typeof value !== "object" || value === null) return {};
  const record = value as { ok?: unknown; result?: { message_id?: unknown } | null; parameters?: { retry_after?: unknown } | null };
  const parsed: ParsedAnswer = {};
  if (typeof record.ok === "boolean") parsed.ok = record.ok;
  const messageId = typeof record.result === "object" && record.result !== null ? record.result.message_id : undefined;
  if (typeof messageId === "number" && Number.isSafeInteger(messageId)) parsed.messageId = messageId;
  const retryAfter = typeof record.parameters === "object" && record.parameters !== null ? record.parameters.retry_after : undefined;
  if (typeof retryAfter === "number" && Number.isFinite(retryAfter)) parsed.retryAfter = retryAfter;
  return parsed;
}
