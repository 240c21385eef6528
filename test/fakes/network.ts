/**
 * The network seam in tests (10 §2): global `fetch` is replaced by a router to
 * local fakes. A request to a host no test registered is refused and fails the
 * test in `afterEach`.
 */
import { expect, vi } from "vitest";

export type FakeServer = (request: Request) => Response | Promise<Response>;

const fakes = new Map<string, FakeServer>();
let unexpected: string[] = [];

export function installNetworkGuard(): void {
  fakes.clear();
  unexpected = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const host = new URL(request.url).host;
    const fake = fakes.get(host);
    if (!fake) {
      unexpected.push(host);
      throw new TypeError("network access is disabled in tests");
    }
    return fake(request);
  });
}

/** Routes requests for `host` to `server` for the rest of the current test. */
export function useFakeHost(host: string, server: FakeServer): void {
  fakes.set(host, server);
}

export function assertNoUnexpectedRequests(): void {
  const hosts = unexpected;
  unexpected = [];
  vi.restoreAllMocks();
  expect(hosts, "outbound requests to hosts no test expected").toEqual([]);
}
