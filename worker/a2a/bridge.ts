/**
 * `POST /a2a` and `POST /a2a/` (04 §3): the processing order, in one place.
 *
 *   1. body limit (the edge, before routing) → 413
 *   2. Content-Type → 415 / -32005       5. envelope → -32600
 *   3. parse → -32700                    6. notification → 204
 *   4. batch → -32600                    7. version: 1.0, 0.3 or -32009
 *                                        8. dispatch (methods.ts)
 *
 * `processPost` decides; `serveA2aPost` records the decision in telemetry and
 * renders it. Keeping the two apart means the event is derived from exactly
 * what was answered, and only from allow-listed labels.
 */
import type { DoorRequest } from "../edge/pipeline";
import type { RequestTelemetry } from "../edge/telemetry";
import { checkEnvelope, isAcceptedContentType, parseJsonBody, type JsonRpcId, type RpcRequest } from "./envelope";
import { rpcErrors, type JsonRpcError } from "./errors";
import type { A2aVersionLabel } from "./labels";
import type { A2aMethodLabel } from "../contracts/events";
import { dispatch, dispatchV03, type MethodAnswer } from "./methods";
import { notificationAccepted, rpcResponse } from "./responses";
import { a2aUrls, type A2aUrls } from "./urls";
import { checkVersion, readRequestedVersion } from "./version";

/** What the bridge decided, with the telemetry labels known at that point. */
type Decision =
  | { readonly kind: "unsupported_media_type" }
  | { readonly kind: "notification"; readonly methodLabel: A2aMethodLabel }
  | {
      readonly kind: "answer";
      readonly id: JsonRpcId;
      readonly answer: MethodAnswer;
      /** null when processing stopped before the envelope held a string method. */
      readonly methodLabel: A2aMethodLabel | null;
      /** null when processing stopped before step 7. */
      readonly versionLabel: A2aVersionLabel | null;
    };

export function serveA2aPost(req: DoorRequest): Response {
  const decision = processPost(req);
  record(req.telemetry, decision);
  return render(decision);
}

function processPost(req: DoorRequest): Decision {
  const urls = a2aUrls(req.env);
  if (!isAcceptedContentType(req.request.headers.get("content-type"))) return { kind: "unsupported_media_type" };

  const parsed = parseJsonBody(req.body);
  if (!parsed.ok) return early(null, rpcErrors.parseError(), null);
  if (Array.isArray(parsed.value)) return early(null, rpcErrors.batchNotSupported(), null);

  const envelope = checkEnvelope(parsed.value);
  if (envelope.kind === "invalid") return early(envelope.id, rpcErrors.invalidRequest(), envelope.methodLabel);
  if (envelope.kind === "notification") return { kind: "notification", methodLabel: envelope.methodLabel };

  const { id, request, methodLabel } = envelope;
  const version = checkVersion(readRequestedVersion(req.request, req.url));
  return { kind: "answer", id, answer: answerFor(version, request, urls), methodLabel, versionLabel: version };
}

/** Steps 7–8: the version class picks the method table (04 §4, §6). */
function answerFor(version: A2aVersionLabel, request: RpcRequest, urls: A2aUrls): MethodAnswer {
  switch (version) {
    case "1.0":
      return dispatch(request.method, request.params, urls);
    case "0.3":
      return dispatchV03(request.method, request.params, urls);
    case "unsupported":
      return { ok: false, error: rpcErrors.versionNotSupported(urls) };
  }
}

/** An error answered before the version check (steps 3–5). */
function early(id: JsonRpcId, error: JsonRpcError, methodLabel: A2aMethodLabel | null): Decision {
  return { kind: "answer", id, answer: { ok: false, error }, methodLabel, versionLabel: null };
}

/**
 * The event fields of 04 §7. `a2a_protocol_version` and `a2a_method` default
 * to null for every `a2a_request` event (telemetry.ts), so only known values
 * are set here; `rpc_error_code` accompanies `protocol_error` only.
 */
function record(telemetry: RequestTelemetry, decision: Decision): void {
  switch (decision.kind) {
    case "unsupported_media_type":
      telemetry.annotate({ outcome: "unsupported_media_type" });
      return;
    case "notification":
      telemetry.annotate({ outcome: "notification_accepted", a2a_method: decision.methodLabel });
      return;
    case "answer":
      telemetry.annotate({
        a2a_method: decision.methodLabel,
        a2a_protocol_version: decision.versionLabel,
        ...(decision.answer.ok
          ? { outcome: "success" as const }
          : { outcome: "protocol_error" as const, rpc_error_code: decision.answer.error.code }),
      });
      return;
  }
}

function render(decision: Decision): Response {
  switch (decision.kind) {
    case "unsupported_media_type":
      return rpcResponse(415, null, { error: rpcErrors.contentTypeNotSupported() });
    case "notification":
      return notificationAccepted();
    case "answer":
      return rpcResponse(
        200,
        decision.id,
        decision.answer.ok ? { result: decision.answer.result } : { error: decision.answer.error },
      );
  }
}
