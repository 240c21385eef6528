/**
 * The filesystem and port side of `magnt dev --owner` (the planner is
 * cli/lib/local-topology.ts): reading the committed deployable configs and
 * the `.dev.vars` files, choosing the free ports, and writing the planned
 * configs, the fresh dev registry, the generated local-only `.dev.vars` (once)
 * and the link to the split run's `.dev.vars`.
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { devVarsPath, parseDevVars, readDevVarsText } from "./dev-vars";
import { EnvironmentError } from "./errors";
import { createDevVarsOnce, generatedDevVarsText } from "./generated-dev-vars";
import {
  chooseSplitDevVars,
  devVarsSource,
  generatedDevVarsPath,
  planLocalSplit,
  SPLIT_CONFIG_FILES,
  SPLIT_FREE_PORTS,
  SPLIT_ROLES,
  splitPorts,
  type LocalSplitPlan,
  type SplitDevVars,
  type SplitPorts,
  type SplitRole,
} from "./local-topology";
import { freeLoopbackPorts } from "./loopback-ports";
import { readWranglerConfig, type WranglerConfig } from "./wrangler-config";

/** The split run's `.dev.vars` for this local config (reads, writes nothing). */
export function findSplitDevVars(local: WranglerConfig): SplitDevVars {
  const userPath = devVarsSource(local);
  const user = existsSync(userPath) ? parseDevVars(readDevVarsText(userPath)) : undefined;
  const generated = generatedDevVarsPath(local);
  return chooseSplitDevVars(userPath, user, generated, existsSync(generated));
}

/**
 * The split run's `.dev.vars`, the generated one created first when it is the
 * one and does not exist yet (`magnt flags --owner` and `writeLocalSplit`).
 * Returns whether this call created it.
 */
export function ensureSplitDevVars(devVars: SplitDevVars): boolean {
  if (devVars.kind !== "generated" || existsSync(devVars.source)) return false;
  return createDevVarsOnce(devVars.source, generatedDevVarsText());
}

/** The values of the split run's `.dev.vars` (after `writeLocalSplit`): what the stand-ins must agree with. */
export function readSplitDevVars(plan: LocalSplitPlan): Map<string, string> {
  return parseDevVars(readDevVarsText(plan.devVars.source));
}

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
  const devVars = findSplitDevVars(options.local);
  const names = devVars.present ? new Set(parseDevVars(readDevVarsText(devVars.source)).keys()) : new Set<string>();
  return planLocalSplit({
    local: options.local,
    deployables: readDeployables(options.projectDir),
    cwd: options.cwd,
    ...(options.persistTo === undefined ? {} : { persistTo: options.persistTo }),
    ports,
    ...(options.telegramApiOrigin === undefined ? {} : { telegramApiOrigin: options.telegramApiOrigin }),
    devVars,
    devVarNames: names,
  });
}

/** Core's port, one inspector port per process and one per stand-in: free loopback ports, distinct, none equal to the two public ones. */
export async function pickSplitPorts(ip: string, port: number, ownerPort: number): Promise<SplitPorts> {
  return splitPorts(ip, port, ownerPort, await freeLoopbackPorts(SPLIT_FREE_PORTS, [port, ownerPort]));
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
 * Writes the plan: the generated configs, a fresh (empty) dev registry, the
 * generated local-only `.dev.vars` when it is the split run's and does not
 * exist yet (never over an existing file), and the link to the split run's
 * `.dev.vars` (a stale link or copy from an earlier run is removed first, so
 * a deleted `.dev.vars` is deleted here too). Returns whether it generated
 * the local-only file.
 */
export function writeLocalSplit(plan: LocalSplitPlan): boolean {
  const generated = ensureSplitDevVars(plan.devVars);
  const present = generated || existsSync(plan.devVars.source);
  try {
    mkdirSync(plan.dir, { recursive: true });
    rmSync(plan.registry, { recursive: true, force: true });
    mkdirSync(plan.registry, { recursive: true });
    for (const worker of plan.processes) {
      writeFileSync(worker.configPath, `${JSON.stringify(worker.config, null, 2)}\n`);
    }
    const linked = devVarsPath(join(plan.dir, "any.json"));
    rmSync(linked, { force: true });
    if (present) linkOrCopy(plan.devVars.source, linked);
  } catch (error) {
    if (error instanceof EnvironmentError) throw error;
    throw new EnvironmentError(`cannot write the local split configs in ${plan.dir}: ${(error as NodeJS.ErrnoException).code ?? "unwritable"}`);
  }
  return generated;
}

/** A symbolic link keeps one copy of the secrets on disk and follows the user's edits; copy (0600) where links are refused. */
function linkOrCopy(source: string, target: string): void {
  try {
    symlinkSync(isAbsolute(source) ? source : resolve(source), target);
  } catch {
    copyFileSync(source, target);
  }
}
