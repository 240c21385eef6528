/**
 * A fake static-site origin (raw.githubusercontent.com): serves fixture files,
 * 404 otherwise, and records every request so tests can check the origin
 * User-Agent and that no query string is forwarded.
 */
import { useFakeHost } from "./network";

export const SITE_HOST = "raw.githubusercontent.com";
export const SITE_BASE_PATH = "/redkov-dev/cortex/main";

export interface SiteFake {
  readonly requests: Request[];
}

export interface SiteFile {
  body: string;
  headers?: Record<string, string>;
  status?: number;
}

export function useSiteOrigin(files: Record<string, SiteFile>): SiteFake {
  const requests: Request[] = [];
  useFakeHost(SITE_HOST, (request) => {
    requests.push(request);
    const path = new URL(request.url).pathname;
    const file = path.startsWith(SITE_BASE_PATH) ? files[path.slice(SITE_BASE_PATH.length)] : undefined;
    if (!file) return new Response("404: Not Found", { status: 404, headers: { "content-type": "text/plain" } });
    return new Response(request.method === "HEAD" ? null : file.body, {
      status: file.status ?? 200,
      headers: { "content-type": "text/plain; charset=utf-8", ...file.headers },
    });
  });
  return { requests };
}

/** A site origin whose every request fails at the network level. */
export function useUnreachableSiteOrigin(): void {
  useFakeHost(SITE_HOST, () => {
    throw new TypeError("connection refused CANARY-network-error-text");
  });
}
