/**
 * The static site (01 §6): a thin proxy of `SITE_ORIGIN`, or the built-in page
 * when no origin is configured so the local door works offline.
 */
import { ORIGIN_FETCH_USER_AGENT } from "../contracts/versions";
import { siteOrigin } from "../config/env";
import type { DoorRequest } from "../edge/pipeline";
import { fetchOutbound } from "../edge/outbound";
import { serviceUnavailable, textResponse } from "../edge/responses";
import { serveBuiltinPage } from "./builtin-page";
import { contentTypeForPath } from "./content-types";
import { mapStaticPath } from "./static-path";

/** Upstream headers that must not reach visitors (downloads, sniffing rules, cookies). */
const DROPPED_UPSTREAM_HEADERS = ["content-disposition", "x-content-type-options", "set-cookie"] as const;

/** GET and HEAD of every path that is not a door route. */
export async function serveStatic(req: DoorRequest): Promise<Response> {
  const path = mapStaticPath(req.url.pathname);
  if (!path.ok) {
    req.telemetry.annotate({ outcome: "bad_request" });
    return textResponse(400, "Bad Request");
  }
  const origin = siteOrigin(req.env);
  if (origin === "") return serveBuiltinPage(req, path.mapped);
  return proxyFromOrigin(req, origin, path.mapped);
}

async function proxyFromOrigin(req: DoorRequest, origin: string, mappedPath: string): Promise<Response> {
  let upstream: Response;
  try {
    upstream = await fetchOutbound(origin + mappedPath, {
      method: req.request.method,
      headers: {
        "User-Agent": ORIGIN_FETCH_USER_AGENT,
        Accept: req.request.headers.get("accept") ?? "*/*",
      },
      redirect: "manual",
      cf: { cacheEverything: true, cacheTtl: 60 },
    });
  } catch {
    // The network error text is never logged or shown: it can name internal hosts or addresses (01 §12).
    req.telemetry.annotate({ outcome: "origin_unavailable" });
    return serviceUnavailable();
  }

  const headers = new Headers(upstream.headers);
  for (const name of DROPPED_UPSTREAM_HEADERS) headers.delete(name);
  headers.set("x-magnt-origin", "github-raw");
  const contentType = contentTypeForPath(mappedPath);
  if (contentType) headers.set("Content-Type", contentType);

  const bodyless = req.request.method === "HEAD" || upstream.status === 204 || upstream.status === 304;
  if (bodyless) await upstream.body?.cancel();
  return new Response(bodyless ? null : upstream.body, {
    status: upstream.status,
    statusText: upstream.statusText,
    headers,
  });
}
