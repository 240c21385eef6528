/**
 * Ready-to-paste MCP client configurations for a running door (08 §13,
 * docs/clients.md): Claude Code's `claude mcp add`, Claude Desktop through
 * `mcp-remote` (it speaks only stdio to its servers), VS Code's `mcp.json`
 * and Cursor's `mcp.json`. One place builds them, so what `magnt dev --owner`
 * prints and what docs/clients.md shows are the same text (a test compares).
 * Only URLs go in: never a token or a secret — every client gets its own
 * tokens through the owner gateway's OAuth flow.
 *
 * Why the owner entries of VS Code and Cursor go through `mcp-remote`: the
 * owner gateway accepts only redirect URIs on a loopback `http` address or an
 * `https` origin listed in `OWNER_REDIRECT_ORIGINS` (06 §3.2). `mcp-remote`
 * (like Claude Code) receives its code on a loopback address; VS Code's own
 * registration also lists its vscode.dev addresses, and an editor's custom
 * URI scheme is neither, so their built-in sign-in is refused unless the
 * operator lists those origins (docs/clients.md). The public door needs no
 * sign-in, so every client talks to it directly.
 */

/** The server names the snippets use. */
export const CLIENT_SERVER_NAMES = { door: "magnt-door", owner: "magnt-owner" } as const;

export interface ClientConfigs {
  claudeCode: string[];
  claudeDesktop: string;
  vscode: string;
  cursor: string;
}

/** A stdio server entry that runs `mcp-remote` for `url` (its OAuth callback is a loopback address). */
function viaMcpRemote(url: string): { command: string; args: string[] } {
  return { command: "npx", args: ["-y", "mcp-remote", url] };
}

/** The snippets for the public door's and (when given) the owner gateway's MCP URLs. */
export function clientConfigs(doorMcp: string, ownerMcp?: string): ClientConfigs {
  const servers: Array<[string, string]> = [
    ...(ownerMcp === undefined ? [] : [[CLIENT_SERVER_NAMES.owner, ownerMcp] as [string, string]]),
    [CLIENT_SERVER_NAMES.door, doorMcp],
  ];
  const object = (entries: Array<[string, unknown]>) => Object.fromEntries(entries);
  return {
    claudeCode: servers.map(([name, url]) => `claude mcp add --transport http ${name} ${url}`),
    claudeDesktop: JSON.stringify({ mcpServers: object(servers.map(([name, url]) => [name, viaMcpRemote(url)])) }),
    vscode: JSON.stringify({
      servers: object(servers.map(([name, url]) => [name, name === CLIENT_SERVER_NAMES.owner ? { type: "stdio", ...viaMcpRemote(url) } : { type: "http", url }])),
    }),
    cursor: JSON.stringify({ mcpServers: object(servers.map(([name, url]) => [name, name === CLIENT_SERVER_NAMES.owner ? viaMcpRemote(url) : { url }])) }),
  };
}

/** The snippets as the lines `magnt dev` prints. */
export function clientConfigLines(configs: ClientConfigs): string[] {
  const [first, ...rest] = configs.claudeCode;
  return [
    "connect a client (docs/clients.md):",
    `  Claude Code:    ${first}`,
    ...rest.map((line) => `                  ${line}`),
    `  Claude Desktop (claude_desktop_config.json): ${configs.claudeDesktop}`,
    `  VS Code (.vscode/mcp.json): ${configs.vscode}`,
    `  Cursor (.cursor/mcp.json): ${configs.cursor}`,
  ];
}
