/**
 * The baseline of the door-overhead benchmark (10 §6): a bare Worker with the
 * SDK's own handler and no guards, telemetry or per-request handler
 * construction. Two strict-object tools:
 * - `echo` returns its arguments (the baseline of `tools/list` and `about_magnt`);
 * - `echo_search` does the storage work of a search and nothing else — the
 *   same window query over the same 100 seeded signals and one insert of the
 *   searched task, in its own migrated D1 (`ECHO_DB`) — so the search's ratio
 *   measures the door's overhead (guards, validation, matching, telemetry;
 *   the seeded rows are short, so the door reads no texts after the window,
 *   03 §4) rather than the cost of storage, which a storage-free echo never
 *   pays. The echo holds no lists (`?5` is `[]`), so it reads every row's
 *   list; the door, after its first search, reads none (03 §5.6).
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { SEARCH_WINDOW_SQL } from "../../worker/storage/signals/sql";
import { TOKENIZER_VERSION } from "../../worker/signals/tokenize";
import { SEARCH_WINDOW_INLINE_TEXT_MAX } from "../../worker/contracts/limits";

interface EchoEnv {
  ECHO_DB?: D1Database;
}

/**
 * The database of the request being served. The SDK's factory receives no
 * env; every request of this one-binding benchmark worker carries the same
 * binding, so a module-level slot set before each request is enough.
 */
let database: D1Database | undefined;

const OBSERVATION_SQL =
  "INSERT INTO observed_task_signals (observation_id, created_at, goal, blocker, tried, self_reported_test) VALUES (?, ?, ?, ?, ?, ?)";

function buildEchoServer(): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0" }, { capabilities: { tools: { listChanged: false } } });
  server.registerTool("echo", { inputSchema: z.strictObject({ text: z.string().optional() }) }, async (args) => ({
    content: [{ type: "text" as const, text: JSON.stringify(args) }],
    structuredContent: args,
  }));
  server.registerTool("echo_search", { inputSchema: z.strictObject({ goal: z.string() }) }, async (args) => {
    if (database === undefined) throw new Error("ECHO_DB is not bound");
    const window = await database.prepare(SEARCH_WINDOW_SQL).bind(0, 100, TOKENIZER_VERSION, SEARCH_WINDOW_INLINE_TEXT_MAX, "[]").all();
    await database.prepare(OBSERVATION_SQL).bind(`ot_${crypto.randomUUID()}`, new Date().toISOString(), args.goal, null, null, 0).run();
    const result = { goal: args.goal, candidates: window.results.length };
    return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result };
  });
  return server;
}

const handler = createMcpHandler(buildEchoServer, { legacy: "stateless" });

export default {
  fetch: (request: Request, env: EchoEnv) => {
    database = env.ECHO_DB;
    return handler.fetch(request);
  },
};
