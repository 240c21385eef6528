/**
 * The one base64url and the one constant-time comparison of worker/lib in
 * workerd (whose `crypto.subtle.timingSafeEqual` the comparison uses):
 * RFC 4648 §10 vectors, the URL-safe alphabet, the strict decoder's refusals,
 * and equality of bytes and strings.
 */
import { describe, expect, it } from "vitest";
import { decodeBase64url, decodeBase64urlKey, encodeBase64url } from "../../worker/lib/base64url";
import { constantTimeEqual, constantTimeEqualBytes } from "../../worker/lib/constant-time";

const ascii = (text: string) => new TextEncoder().encode(text);

describe("base64url", () => {
  it.each([
    ["", ""],
    ["f", "Zg"],
    ["fo", "Zm8"],
    ["foo", "Zm9v"],
    ["foob", "Zm9vYg"],
    ["fooba", "Zm9vYmE"],
    ["foobar", "Zm9vYmFy"],
  ])("RFC 4648 vector %j ↔ %j (no padding)", (plain, encoded) => {
    expect(encodeBase64url(ascii(plain))).toBe(encoded);
    expect(decodeBase64url(encoded)).toEqual(ascii(plain));
  });

  it("uses the URL-safe alphabet and round-trips every byte value", () => {
    expect(encodeBase64url(Uint8Array.of(0xfb, 0xff, 0xbf))).toBe("-_-_");
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(decodeBase64url(encodeBase64url(all))).toEqual(all);
  });

  it("accepts complete padding", () => {
    expect(decodeBase64url("Zg==")).toEqual(ascii("f"));
    expect(decodeBase64url("Zm8=")).toEqual(ascii("fo"));
  });

  it.each([
    ["the standard alphabet", "+/+/"],
    ["whitespace", "Zm9v "],
    ["an impossible length", "Zm9vY"],
    ["incomplete padding", "Zg="],
    ["too much padding", "Zg==="],
    ["padding alone", "=="],
    ["padding inside", "Zg==Zg=="],
  ])("refuses %s", (_label, value) => {
    expect(decodeBase64url(value)).toBeNull();
  });

  it("reads a key secret only with enough bytes", () => {
    const key = encodeBase64url(new Uint8Array(32).fill(7));
    expect(decodeBase64urlKey(key, 32)).toEqual(new Uint8Array(32).fill(7));
    expect(decodeBase64urlKey(key, 33)).toBeNull();
    expect(decodeBase64urlKey(undefined, 1)).toBeNull();
    expect(decodeBase64urlKey("", 1)).toBeNull();
  });
});

describe("constant-time equality", () => {
  it("compares bytes, false for different lengths", () => {
    expect(constantTimeEqualBytes(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3))).toBe(true);
    expect(constantTimeEqualBytes(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 4))).toBe(false);
    expect(constantTimeEqualBytes(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2))).toBe(false);
    expect(constantTimeEqualBytes(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it("compares strings of any lengths", async () => {
    expect(await constantTimeEqual("nonce-value", "nonce-value")).toBe(true);
    expect(await constantTimeEqual("nonce-value", "nonce-valuf")).toBe(false);
    expect(await constantTimeEqual("nonce-value", "nonce")).toBe(false);
    expect(await constantTimeEqual("", "")).toBe(true);
    expect(await constantTimeEqual("", "x")).toBe(false);
  });
});
