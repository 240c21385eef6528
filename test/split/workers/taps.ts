/**
 * Test-only taps bundled beside each auxiliary Worker's real entry module
 * (see ../global-setup.ts). The entry's named exports are re-exported
 * unchanged and its default handler is called unchanged; this module only
 * records what that handler received, and adds two named entrypoints no
 * production binding reaches:
 *
 * - `TestTaps`: the console lines this Worker printed (its telemetry events),
 *   because Miniflare sends an auxiliary Worker's console to the host process,
 *   where a test inside workerd cannot read it; the method, URL and headers of
 *   every request its default `fetch` received; and the rate-limit keys below.
 * - `RateLimitRecorder`: a fake Workers Rate Limiting binding (01 §14) that
 *   always allows and remembers every key it was asked about.
 *
 * One isolate per Worker, so module state is shared by every entrypoint of it.
 */
import { WorkerEntrypoint } from "cloudflare:workers";

/** What the default `fetch` handler was given (the body is not kept). */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: [string, string][];
}

const lines: string[] = [];
const limiterKeys: string[] = [];
const received: ReceivedRequest[] = [];

function format(args: unknown[]): string {
  return args
    .map((arg) => {
      if (typeof arg === "string") return arg;
      try {
        return JSON.stringify(arg) ?? String(arg);
      } catch {
        return String(arg);
      }
    })
    .join(" ");
}

// Installed when the bundle is evaluated, before any request: nothing the Worker prints is lost or shown.
for (const level of ["log", "info", "warn", "error", "debug"] as const) {
  console[level] = (...args: unknown[]) => {
    lines.push(format(args));
  };
}

type FetchHandler = (request: Request, env: unknown, ctx: ExecutionContext) => Response | Promise<Response>;

/**
 * The entry's default export with its `fetch` recording each request's method,
 * URL and headers before handing the same Request object on. Everything else
 * (`scheduled`, ...) is the entry's own.
 */
export function tapDefault<T>(entry: T): T {
  if (typeof entry !== "object" || entry === null || !("fetch" in entry) || typeof entry.fetch !== "function") return entry;
  const fetch = entry.fetch as FetchHandler;
  return {
    ...entry,
    fetch(request: Request, env: unknown, ctx: ExecutionContext) {
      received.push({ method: request.method, url: request.url, headers: [...request.headers] });
      return fetch.call(entry, request, env, ctx);
    },
  } as T;
}

export class TestTaps extends WorkerEntrypoint {
  /** Every console line printed since the last `reset()`. */
  lines(): string[] {
    return [...lines];
  }

  /** Every key `PUBLIC_WRITES.limit()` was called with since the last `reset()`. */
  limiterKeys(): string[] {
    return [...limiterKeys];
  }

  /** Every request the default `fetch` handler received since the last `reset()`. */
  requests(): ReceivedRequest[] {
    return received.map((request) => ({ ...request, headers: [...request.headers] }));
  }

  reset(): void {
    lines.length = 0;
    limiterKeys.length = 0;
    received.length = 0;
  }
}

export class RateLimitRecorder extends WorkerEntrypoint {
  limit(options: { key: string }): { success: boolean } {
    limiterKeys.push(options.key);
    return { success: true };
  }
}
