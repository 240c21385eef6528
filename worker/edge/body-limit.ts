/**
 * The 24 KiB POST body limit (01 §5).
 *
 * Threat model: memory and CPU exhaustion by large or endless bodies. A
 * declared length over the limit is refused without reading; an undeclared
 * (chunked) body is counted while it streams and the reader is cancelled the
 * moment it crosses the limit, so the door never buffers more than the limit
 * plus one chunk.
 */
import { MAX_POST_BODY_BYTES } from "../contracts/limits";

type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: "body_too_large" };

export async function readBodyWithinLimit(request: Request, limit: number = MAX_POST_BODY_BYTES): Promise<BodyRead> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\s*\d+\s*$/.test(declared) && Number(declared) > limit) {
    return { ok: false, reason: "body_too_large" };
  }
  if (request.body === null) return { ok: true, bytes: new Uint8Array(0) };

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined); // the stream may already be errored; the answer is 413 either way
      return { ok: false, reason: "body_too_large" };
    }
    chunks.push(value);
  }
  return { ok: true, bytes: concatenate(chunks, total) };
}

function concatenate(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
