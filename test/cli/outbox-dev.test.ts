/**
 * The local notification tooling of `magnt dev` (08 §13, 05 §1): the printed
 * cron pass and `--telegram-api-origin`, accepted only as a loopback `http`
 * origin written exactly as `new URL(value).origin` prints it (00 §7).
 */
import { describe, expect, it, vi } from "vitest";
import * as childProcess from "node:child_process";
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import { parseStandInOrigin, scheduledUrl } from "../../cli/commands/dev";
import { installFakeWrangler, runMagnt } from "./harness";

vi.mock("node:child_process", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:child_process")>()), spawn: vi.fn() }));
const spawnMock = vi.mocked(childProcess.spawn);

describe("magnt dev and the Telegram stand-in", () => {
  it("prints how to run one cron pass, once the door answers", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    // A wrangler dev that listens like the real one and answers the readiness tools/list.
    installFakeWrangler(spawnMock, () => ({
      hang: true,
      started: () => {
        const door = createServer((_request, response) => response.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x"}]}}'));
        door.listen(port, "127.0.0.1");
        return () => door.close();
      },
    }));
    const signals = new EventEmitter();
    let stdout = "";
    const running = runMagnt(["dev", "--no-migrate", "--port", String(port)], { signals, onStdout: (chunk) => (stdout += chunk) });
    await vi.waitFor(() => expect(stdout).toContain("stop: Ctrl-C"), { timeout: 20_000 });
    signals.emit("SIGINT");
    const run = await running;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`one cron pass (Telegram outbox, runs on this door, port ${port}):\n  curl http://127.0.0.1:${port}/cdn-cgi/handler/scheduled\n`);
    expect(scheduledUrl(8787)).toBe("http://127.0.0.1:8787/cdn-cgi/handler/scheduled");
  });

  it("passes --telegram-api-origin to wrangler dev as a --var", async () => {
    const { calls } = installFakeWrangler(spawnMock, () => ({ code: 0 }));
    const run = await runMagnt(["dev", "--no-migrate", "--port", "9000", "--telegram-api-origin", "http://127.0.0.1:8790"]);
    expect(run.code).toBe(0);
    const inspector = calls[0]!.args[calls[0]!.args.indexOf("--inspector-port") + 1];
    expect(calls[0]!.args).toEqual([
      "dev", "--config", "wrangler.local.jsonc", "--local", "--ip", "127.0.0.1", "--port", "9000", "--inspector-port", inspector,
      "--var", "PUBLIC_ORIGIN:http://localhost:9000", "--var", "TELEGRAM_API_ORIGIN:http://127.0.0.1:8790",
    ]);
  });

  it.each(["http://127.0.0.1:8790", "http://localhost:1", "http://[::1]:8790", "http://localhost"])("accepts %s", (origin) => {
    expect(parseStandInOrigin(origin)).toBe(origin);
  });

  it.each([
    "https://api.telegram.org",
    "https://127.0.0.1:8790",
    "http://127.0.0.1:8790/",
    "http://127.0.0.1:8790/bot",
    "http://evil.example:8790",
    "http://127.0.0.2:8790",
    "http://user@localhost:8790",
    "http://LOCALHOST:8790",
    "127.0.0.1:8790",
    "",
  ])("refuses %j with exit 2 before anything runs", async (origin) => {
    const { calls } = installFakeWrangler(spawnMock, () => ({ code: 0 }));
    const run = await runMagnt(["dev", "--telegram-api-origin", origin]);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });
});
