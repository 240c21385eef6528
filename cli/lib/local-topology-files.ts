/**
 * The filesystem and port side of `magnt dev --owner` (the planner is
 * cli/lib/local-topology.ts): reading the committed deployable configs,
 * choosing the free ports, and writing the planned configs, the fresh dev
 * registry and the link to the user's `.dev.vars`.
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { devVarsPath } from "./dev-vars";
import { EnvironmentError } from "./errors";
import { devVarsSource, planLocalSplit, SPLIT_CONFIG_FILES, SPLIT_ROLES, splitPorts, type LocalSplitPlan, type SplitPorts, type SplitRole } from "./local-topology";
import { freeLoopbackPorts } from "./loopback-ports";
import { readWranglerConfig, type WranglerConfig } from "./wrangler-config";

/**
 * Picks the ports and reads the deployable configs, then plans the run
 * (writes nothing). A missing deployable config stops here (exit 3), before
 * migrations or Wrangler.
 */
export async function prepareLocalSplit(options: {
  local: WranglerConfig;
  projectDir: string;
  cwd: string;
  persistTo?: string;
  ip: string;
  port: number;
  ownerPort: number;
  telegramApiOrigin?: string;
}): Promise<LocalSplitPlan> {
  const ports = await pickSplitPorts(options.ip, options.port, options.ownerPort);
  return planLocalSplit({
    local: options.local,
    deployables: readDeployables(options.projectDir),
    cwd: options.cwd,
    ...(options.persistTo === undefined ? {} : { persistTo: options.persistTo }),
    ports,
    ...(options.telegramApiOrigin === undefined ? {} : { telegramApiOrigin: options.telegramApiOrigin }),
    devVarsPresent: existsSync(devVarsSource(options.local)),
  });
}

/** Core's port and one inspector port per process: free loopback ports, distinct, none equal to the two public ones. */
export async function pickSplitPorts(ip: string, port: number, ownerPort: number): Promise<SplitPorts> {
  return splitPorts(ip, port, ownerPort, await freeLoopbackPorts(1 + SPLIT_ROLES.length, [port, ownerPort]));
}

/** The three committed deployable configs (00 §3) of the project directory, read without an environment. */
export function readDeployables(projectDir: string): Record<SplitRole, WranglerConfig> {
  const entries = SPLIT_ROLES.map((role): [SplitRole, WranglerConfig] => {
    const file = SPLIT_CONFIG_FILES[role];
    if (!existsSync(join(projectDir, file))) throw new EnvironmentError(`--owner runs the split deployment and needs ${file} in ${projectDir}`);
    return [role, readWranglerConfig(file, projectDir)];
  });
  return Object.fromEntries(entries) as Record<SplitRole, WranglerConfig>;
}

/**
 * Writes the plan: the generated configs, a fresh (empty) dev registry, and
 * the link to the user's `.dev.vars` (a stale link or copy from an earlier run
 * is removed first, so a deleted `.dev.vars` is deleted here too).
 */
export function writeLocalSplit(plan: LocalSplitPlan): void {
  try {
    mkdirSync(plan.dir, { recursive: true });
    rmSync(plan.registry, { recursive: true, force: true });
    mkdirSync(plan.registry, { recursive: true });
    for (const worker of plan.processes) {
      writeFileSync(worker.configPath, `${JSON.stringify(worker.config, null, 2)}\n`);
    }
    const linked = devVarsPath(join(plan.dir, "any.json"));
    rmSync(linked, { force: true });
    if (plan.devVars.present) linkOrCopy(plan.devVars.source, linked);
  } catch (error) {
    if (error instanceof EnvironmentError) throw error;
    throw new EnvironmentError(`cannot write the local split configs in ${plan.dir}: ${(error as NodeJS.ErrnoException).code ?? "unwritable"}`);
  }
}

/** A symbolic link keeps one copy of the secrets on disk and follows the user's edits; copy (0600) where links are refused. */
function linkOrCopy(source: string, target: string): void {
  try {
    symlinkSync(isAbsolute(source) ? source : resolve(source), target);
  } catch {
    copyFileSync(source, target);
  }
}
