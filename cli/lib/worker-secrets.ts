/**
 * Remote Worker secrets through Wrangler (08 §4, §9): `secret list` (JSON),
 * `secret put` with the value on stdin (never in argv, where `ps` would show
 * it, and without a trailing newline), and `secret delete` (non-interactive).
 * Every call names the Worker by an explicit `--config`.
 */
import type { CliContext } from "./context";
import { EnvironmentError } from "./errors";
import type { D1Target } from "./target";
import { runWrangler, type WranglerRun } from "./wrangler";

/** Cloudflare's "binding name already in use" (a dashboard variable has the name). */
export const BINDING_IN_USE_CODE = "10053";

function configArgs(target: D1Target): string[] {
  return ["--config", target.config.path, ...(target.env === undefined ? [] : ["--env", target.env])];
}

/** Names of the Worker's secrets; a failing or unparseable listing → exit 3. */
export async function listWorkerSecrets(ctx: CliContext, target: D1Target, quiet: boolean): Promise<Set<string>> {
  const run = await runWrangler(ctx, ["secret", "list", ...configArgs(target), "--format", "json"], { mode: "remote", quiet });
  if (run.code !== 0) throw new EnvironmentError(`wrangler secret list failed (exit ${run.code})`);
  const start = run.stdout.indexOf("[");
  let parsed: unknown;
  try {
    parsed = JSON.parse(start === -1 ? run.stdout : run.stdout.slice(start));
  } catch {
    throw new EnvironmentError("wrangler secret list did not print a JSON list");
  }
  if (!Array.isArray(parsed)) throw new EnvironmentError("wrangler secret list did not print a JSON list");
  const names = new Set<string>();
  for (const entry of parsed) {
    const name = (entry as { name?: unknown } | null)?.name;
    if (typeof name === "string") names.add(name);
  }
  return names;
}

/**
 * `wrangler secret put <name>` with `value` on stdin; the run is returned so the
 * caller can explain 10053. Wrangler's stderr is forwarded only for a failure
 * that is not 10053, which the CLI explains itself.
 */
export async function putWorkerSecret(ctx: CliContext, target: D1Target, name: string, value: string, quiet: boolean): Promise<WranglerRun> {
  const run = await runWrangler(ctx, ["secret", "put", name, ...configArgs(target)], {
    mode: "remote",
    quiet,
    nonInteractive: true,
    forwardStderr: false,
    input: value,
  });
  if (!quiet && run.code !== 0 && run.stderr !== "" && !run.stderr.includes(BINDING_IN_USE_CODE)) ctx.stderr.write(run.stderr);
  return run;
}

/** `wrangler secret delete <name>`, with CI=1 so Wrangler does not ask. */
export async function deleteWorkerSecret(ctx: CliContext, target: D1Target, name: string, quiet: boolean): Promise<void> {
  const run = await runWrangler(ctx, ["secret", "delete", name, ...configArgs(target)], { mode: "remote", quiet, nonInteractive: true });
  if (run.code !== 0) throw new EnvironmentError(`wrangler secret delete ${name} failed (exit ${run.code})`);
}

/** Whether a failed run is Cloudflare error 10053. */
export function isBindingInUse(run: WranglerRun): boolean {
  return `${run.stdout}\n${run.stderr}`.includes(BINDING_IN_USE_CODE);
}
