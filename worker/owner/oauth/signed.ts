/**
 * Compact signed objects (06 §3.2), with `jose` only: HS256 JWS whose `typ`
 * names the object. Verification pins `alg` to HS256 (no `none`, no key
 * confusion), checks the `typ`, the expiry against the injected clock, and
 * then the payload's exact shape. Every failure is the same `null`: callers
 * never learn (or tell) which check failed.
 */
import { jwtVerify, SignJWT, type JWTPayload } from "jose";
import * as z from "zod";

/** The `typ` header of each object (06 §3.2). */
export const OBJECT_TYPES = {
  client: "magnt-client",
  consent: "magnt-authz",
  link: "magnt-link",
  code: "magnt-code",
  access: "magnt-at",
  refresh: "magnt-rt",
} as const;

export type ObjectType = (typeof OBJECT_TYPES)[keyof typeof OBJECT_TYPES];

/** Seconds since the epoch of a millisecond clock reading. */
export function seconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

/** Signs `payload` as an HS256 JWS with `typ` in the protected header. */
export function signObject(typ: ObjectType, key: Uint8Array, payload: JWTPayload): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ }).sign(key);
}

/**
 * Verifies `compact` as an object of type `typ` signed with `key`, unexpired
 * at `nowMs` (jose: `exp ≤ now` fails; no clock tolerance), and parses the
 * payload with `schema`. Null on any failure.
 */
export async function verifyObject<T>(
  compact: string,
  typ: ObjectType,
  key: Uint8Array,
  nowMs: number,
  schema: z.ZodType<T>,
): Promise<T | null> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(compact, key, {
      algorithms: ["HS256"],
      typ,
      currentDate: new Date(nowMs),
      clockTolerance: 0,
    }));
  } catch {
    return null;
  }
  const parsed = schema.safeParse(payload);
  return parsed.success ? parsed.data : null;
}

/** A NumericDate claim. */
export const numericDate = z.number().int().nonnegative();
