/**
 * mcp-remote (the exact-pinned dev dependency, `node_modules/mcp-remote`) as
 * an independent OAuth client of a local owner gateway, for the e2e suites.
 *
 * mcp-remote is a stdio↔HTTP proxy: it discovers the server, registers (or,
 * with `--client-metadata-url`, presents its Client ID Metadata Document),
 * asks a browser to open the authorization URL, waits for the code on its
 * own loopback callback port, exchanges it and only then proxies MCP. The
 * official MCP client talks to it over stdio here, so `connect()` resolves
 * only once mcp-remote's whole OAuth flow succeeded.
 *
 * The browser step. mcp-remote opens the URL with the `open` package, which
 * on Linux runs its bundled `xdg-open`; with no desktop session (no
 * `DISPLAY`, no `XDG_CURRENT_DESKTOP`) `xdg-open` hands the URL to
 * `$BROWSER`. `BROWSER` is a two-line script that appends the URL to a file,
 * and the test opens it in Chromium (owner-helpers.ts `decideInChromium`) and
 * clicks as the owner would. Nothing of mcp-remote is patched; its
 * environment is otherwise minimal (its own HOME and `MCP_REMOTE_CONFIG_DIR`,
 * so no token or registration survives from another run).
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, tempDir, waitFor } from "./helpers";

const PROXY = join(REPO_ROOT, "node_modules", "mcp-remote", "dist", "proxy.js");

export interface McpRemoteOptions {
  /** mcp-remote's loopback callback port (its redirect URI is `http://localhost:<port>/oauth/callback`). */
  readonly callbackPort: number;
  /** `--client-metadata-url`: identify by this Client ID Metadata Document instead of registering. */
  readonly clientMetadataUrl?: string;
}

export interface McpRemoteRun {
  /** Resolves once mcp-remote completed the OAuth flow and the MCP handshake went through it. */
  readonly connected: Promise<Client>;
  /** The authorization URL mcp-remote asked a browser to open (waits for it). */
  authorizationUrl(): Promise<URL>;
  /** mcp-remote's stderr so far (its log). */
  log(): string;
  close(): Promise<void>;
}

/** The redirect URI mcp-remote registers (or lists in its document) for `callbackPort`. */
export function mcpRemoteRedirectUri(callbackPort: number): string {
  return `http://localhost:${callbackPort}/oauth/callback`;
}

/** Starts mcp-remote for `serverUrl` behind the official MCP client over stdio. */
export function startMcpRemote(serverUrl: string, options: McpRemoteOptions): McpRemoteRun {
  if (!existsSync(PROXY)) throw new Error(`${PROXY} is missing: run npm ci (mcp-remote is a dev dependency)`);
  const dir = tempDir("mcp-remote");
  const urls = join(dir, "browser-urls");
  const browser = join(dir, "browser.sh");
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> "${urls}"\n`);
  chmodSync(browser, 0o755);

  const args = [PROXY, serverUrl, String(options.callbackPort)];
  if (options.clientMetadataUrl !== undefined) args.push("--client-metadata-url", options.clientMetadataUrl);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      MCP_REMOTE_CONFIG_DIR: join(dir, "auth"),
      BROWSER: browser,
    },
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    log += chunk.toString("utf8");
  });
  const client = new Client({ name: "e2e-mcp-remote", version: "1.0.0" });
  const connected = client.connect(transport).then(() => client);
  // Observed by the test through `connected` (never an unhandled rejection while it waits for the
  // browser), and by `authorizationUrl`: mcp-remote that gives up before asking for a browser ends the wait.
  let failure: unknown;
  connected.catch((error: unknown) => {
    failure = error ?? new Error("mcp-remote ended");
  });

  return {
    connected,
    async authorizationUrl() {
      const line = await waitFor(
        () => {
          const asked = existsSync(urls) ? readFileSync(urls, "utf8").split("\n").find((entry) => entry.trim() !== "") : undefined;
          if (asked === undefined && failure !== undefined) throw new Error(`mcp-remote ended before asking for a browser: ${String(failure)}\n${log}`);
          return asked;
        },
        { timeoutMs: 60_000, intervalMs: 100, describe: () => `mcp-remote asked no browser to open a URL; its log:\n${log}` },
      );
      return new URL(line.trim());
    },
    log: () => log,
    async close() {
      await client.close().catch(() => undefined);
    },
  };
}
