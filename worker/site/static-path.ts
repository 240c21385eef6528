/**
 * Mapping and checking of static paths (01 §6).
 *
 * Threat model: path traversal and header/log injection through the URL. The
 * raw pathname is decoded once for checking only; anything that decodes to a
 * `..`, a backslash or a control character is refused, and the upstream URL is
 * built from the raw (undecoded) path so what was checked is what is fetched.
 */

type StaticPath = { ok: true; mapped: string } | { ok: false; reason: "bad_request" };

// U+0000–U+001F and U+007F.
const CONTROL = /[\u0000-\u001f\u007f]/;

export function mapStaticPath(rawPath: string): StaticPath {
  const mapped = rawPath.endsWith("/") ? `${rawPath}index.html` : rawPath;
  let decoded: string;
  try {
    decoded = decodeURIComponent(mapped);
  } catch {
    return { ok: false, reason: "bad_request" };
  }
  if (decoded.includes("..") || decoded.includes("\\") || CONTROL.test(decoded)) {
    return { ok: false, reason: "bad_request" };
  }
  return { ok: true, mapped };
}
