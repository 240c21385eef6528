/**
 * The loopback stand-ins `magnt dev --owner` runs in its process group
 * (08 §13, issue 19 item 1): scripts/github-stand-in.mjs for the owner's
 * GitHub sign-in and scripts/telegram-stand-in.mjs for notifications, each
 * on the free port the planner chose (cli/lib/local-topology.ts).
 *
 * What they are told, and how: the GitHub stand-in signs in as the split
 * run's `OWNER_GITHUB_ID` and checks its GitHub client — values that may be
 * generated secrets, so they travel in its environment, never on its command
 * line (a process listing shows argv), and it never prints them.
 *
 * Where their output goes: every line is relayed into `magnt dev`'s own
 * output, prefixed with the stand-in's name, so the owner sees what was
 * "sent" to Telegram in the terminal that runs the door. A Telegram line is
 * re-rendered (status and message text, never the chat id, which is one of
 * the split run's secrets), and message text — it may quote a visitor — is
 * cleaned of every terminal control first (cli/lib/terminal-text.ts).
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { CliContext } from "./context";
import type { StandIn, StandInRole } from "./local-topology";
import type { GroupMember } from "./process-group";
import { sanitiseTerminalText } from "./terminal-text";

/** The values the GitHub stand-in must agree with (read from the split run's `.dev.vars`). */
export const GITHUB_STAND_IN_ENV = ["OWNER_GITHUB_ID", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"] as const;

/** scripts/<role>-stand-in.mjs of this package (two levels above cli/lib/ and above dist/cli/ alike). */
export function standInScript(role: StandInRole): string {
  return fileURLToPath(new URL(`../../scripts/${role}-stand-in.mjs`, import.meta.url));
}

/** How the stand-in is named in relayed lines. */
export function standInLabel(role: StandInRole): string {
  return `${role} stand-in`;
}

/**
 * The stand-in's environment: the CLI's, with the GitHub values replaced by
 * the split run's (or removed, so a value exported in the shell never
 * disagrees with the Workers).
 */
export function standInEnv(role: StandInRole, base: Readonly<Record<string, string | undefined>>, devVars: ReadonlyMap<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (role === "github") {
    for (const name of GITHUB_STAND_IN_ENV) {
      const value = devVars.get(name) ?? "";
      if (value === "") delete env[name];
      else env[name] = value;
    }
  }
  return env;
}

/** The stand-in as a member of the process group; `relay` receives each rendered line. */
export function standInMember(ctx: CliContext, standIn: StandIn, devVars: ReadonlyMap<string, string>, relay: (line: string) => void): GroupMember {
  return {
    label: standInLabel(standIn.role),
    start() {
      const child = spawn(process.execPath, [standInScript(standIn.role), ...standIn.args], {
        cwd: ctx.cwd,
        env: standInEnv(standIn.role, ctx.env, devVars),
        stdio: ["ignore", "pipe", "pipe"],
        shell: false,
        windowsHide: true,
      });
      const prefix = `${standInLabel(standIn.role)}: `;
      if (child.stdout !== null) {
        createInterface({ input: child.stdout }).on("line", (line) => {
          for (const rendered of standIn.role === "telegram" ? renderTelegramLine(line) : [sanitiseTerminalText(line, { lineBreaks: "mark" })]) relay(`${prefix}${rendered}`);
        });
      }
      if (child.stderr !== null) {
        // Its own notes on stderr already start with its name ("github-stand-in: …").
        createInterface({ input: child.stderr }).on("line", (line) => relay(sanitiseTerminalText(line, { lineBreaks: "mark" })));
      }
      return child;
    },
  };
}

/**
 * One JSON line of the Telegram stand-in as the owner reads it: what it
 * answered, then the message text line by line (cleaned), never the chat id.
 */
export function renderTelegramLine(line: string): string[] {
  let entry: { method?: unknown; path?: unknown; status?: unknown; text?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return [sanitiseTerminalText(line, { lineBreaks: "mark" })];
  }
  const clean = (value: unknown) => sanitiseTerminalText(typeof value === "string" ? value : String(value), { lineBreaks: "mark" });
  const head = `${clean(entry.method)} ${clean(entry.path)} answered ${clean(entry.status)}`;
  if (typeof entry.text !== "string") return [head];
  return [`${head}, message:`, ...sanitiseTerminalText(entry.text, { lineBreaks: "keep" }).split("\n").map((text) => `| ${text}`)];
}
