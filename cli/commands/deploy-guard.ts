/**
 * `magnt deploy-guard --config <file>` (hidden; 00 §3, §8): the check every
 * `npm run deploy*` script runs before `wrangler deploy`. Refuses (exit 2)
 * while the config carries the placeholder `database_id`, and refuses to
 * deploy a monolith config once the B.1 cutover is done
 * (`MAGNT_CUTOVER_DONE=true`), because that would put the D1 binding and the
 * cron back on the public Worker. The role comes from the config's `main`
 * entry module, so adding `deploy:core` & co. is one package.json line each.
 */
import { withRuntime, type ParentCommand } from "../lib/command";
import type { CliContext } from "../lib/context";
import { UsageError } from "../lib/errors";
import { assertNoPlaceholderDatabase, readWranglerConfig, roleOfConfig } from "../lib/wrangler-config";

/** The shell-profile switch of cutover step 7 (00 §3); exactly "true" counts, like every flag. */
export const CUTOVER_ENV = "MAGNT_CUTOVER_DONE";

export function registerDeployGuard(program: ParentCommand, ctx: CliContext): void {
  program
    .command("deploy-guard", { hidden: true })
    .description("refuse a deploy while the config carries the placeholder database_id, or a monolith deploy after the cutover")
    .action(
      withRuntime(ctx, async (rt) => {
        const { out, globals } = rt;
        if (globals.config === undefined) throw new UsageError("deploy-guard needs --config <wrangler config>");
        const config = readWranglerConfig(globals.config, ctx.cwd, globals.env);
        const role = roleOfConfig(config);
        if (role === "monolith" && ctx.env[CUTOVER_ENV] === "true") {
          throw new UsageError(
            `${CUTOVER_ENV}=true: the B.1 cutover is done, and deploying the monolith (${config.path}) would put the D1 binding and the cron back on the public Worker. Deploy wrangler.gateway.jsonc instead (docs/deploy.md).`,
            { showUsage: false },
          );
        }
        assertNoPlaceholderDatabase(config);
        if (out.json) out.jsonLine({ config: config.path, role: role ?? null, ok: true });
        else out.info(`deploy guard: ${config.path} (${role ?? "unknown role"}) ok`);
      }),
    );
}
