/**
 * The built-in offline page (01 §6.1), served when `SITE_ORIGIN` is empty (the
 * local door). Self-contained: no external assets, no scripts, no outbound
 * request, so `npm start` works on a machine with no network.
 */
import { MCP_DOOR_VERSION, SHARED_MEMORY_VERSION, OWNER_RELEASE, DIALOGUE_RELEASE } from "../contracts/versions";
import { publicOrigin } from "../config/env";
import type { DoorRequest } from "../edge/pipeline";
import { notFound } from "../edge/responses";
import { escapeHtml } from "../lib/html";

/** The door endpoints the page lists, in order. */
const BUILTIN_PAGE_PATHS = [
  "/mcp",
  "/mcp/server-card",
  "/.well-known/ai-catalog.json",
  "/.well-known/agent-card.json",
  "/a2a",
  "/__magnt_probe",
] as const;

export function serveBuiltinPage(req: DoorRequest, mappedPath: string): Response {
  if (mappedPath !== "/index.html") return withBuiltinHeader(notFound());
  const html = renderBuiltinPage(publicOrigin(req.env));
  return new Response(req.request.method === "HEAD" ? null : html, {
    status: 200,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "x-magnt-origin": "builtin",
    },
  });
}

function withBuiltinHeader(response: Response): Response {
  response.headers.set("x-magnt-origin", "builtin");
  return response;
}

function renderBuiltinPage(origin: string): string {
  const links = BUILTIN_PAGE_PATHS.map((path) => {
    const url = escapeHtml(origin + path);
    return `      <li><a href="${url}">${url}</a></li>`;
  }).join("\n");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>MAGNT MCP Door (local)</title>
    <style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;line-height:1.5}code{background:#f3f3f3;padding:0 .25rem}</style>
  </head>
  <body>
    <h1>MAGNT MCP Door (local)</h1>
    <p>This is the built-in page of a door with no static site origin configured. AI agents connect to the MCP endpoint below with any MCP client over Streamable HTTP; no API key is needed.</p>
    <ul>
${links}
    </ul>
    <p>Versions: mcp_door <code>${MCP_DOOR_VERSION}</code>, shared_memory <code>${SHARED_MEMORY_VERSION}</code>, owner release <code>${OWNER_RELEASE}</code>, dialogue release <code>${DIALOGUE_RELEASE}</code>.</p>
  </body>
</html>
`;
}
