/**
 * Ready-to-paste MCP client configurations for a running door (08 §13,
 * docs/clients.md): Claude Code's `claude mcp add`, Claude Desktop through
 * `mcp-remote` (it speaks only stdio to its servers), VS Code's `mcp.json`
 * and Cursor's `mcp.json`. One place builds them, so what `magnt dev --owner`
 * prints and what docs/clients.md shows are the same text (a test compares).
 * Only URLs go in: never a token or a secret — every client gets its own
 * tokens through the owner gateway's OAuth flow.
 */

/** The server names the snippets use. */
export const CLIENT_SERVER_NAMES = { door: "magnt-door", owner: "magnt-owner" } as const;

export interface ClientConfigs {
  claudeCode: string[];
  claudeDesktop: string;
  vscode: string;
  cursor: string;
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
    claudeDesktop: JSON.stringify({ mcpServers: object(servers.map(([name, url]) => [name, { command: "npx", args: ["-y", "mcp-remote", url] }])) }),
    vscode: JSON.stringify({ servers: object(servers.map(([name, url]) => [name, { type: "http", url }])) }),
    cursor: JSON.stringify({ mcpServers: object(servers.map(([name, url]) => [name, { url }])) }),
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
