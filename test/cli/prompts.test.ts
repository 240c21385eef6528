/**
 * Confirmations (08 §3): shown only on a TTY without --json/--yes; otherwise
 * "confirmation required: pass --yes" (exit 2); declining exits 2.
 */
import { describe, expect, it, vi } from "vitest";
import type { CliContext } from "../../cli/lib/context";
import { CliError } from "../../cli/lib/errors";
import { canPrompt, requireConfirmation } from "../../cli/lib/prompts";

function ctx(tty: { stdin: boolean; stdout: boolean }): CliContext {
  return {
    stdout: { write: () => true, isTTY: tty.stdout },
    stderr: { write: () => true },
    stdin: { isTTY: tty.stdin },
    env: {},
    cwd: ".",
    wranglerTimeoutMs: { local: 1, remote: 1 },
    signals: { on: () => undefined, off: () => undefined },
  };
}
const both = ctx({ stdin: true, stdout: true });

async function exitOf(promise: Promise<void>): Promise<number> {
  try {
    await promise;
    return 0;
  } catch (error) {
    return error instanceof CliError ? error.exitCode : -1;
  }
}

describe("confirmation", () => {
  it("a prompt needs both TTYs and neither --json nor --yes", () => {
    expect(canPrompt(both, {})).toBe(true);
    expect(canPrompt(ctx({ stdin: false, stdout: true }), {})).toBe(false);
    expect(canPrompt(ctx({ stdin: true, stdout: false }), {})).toBe(false);
    expect(canPrompt(both, { json: true })).toBe(false);
    expect(canPrompt(both, { yes: true })).toBe(false);
  });

  it("--yes passes without asking", async () => {
    const ask = vi.fn();
    expect(await exitOf(requireConfirmation(ctx({ stdin: false, stdout: false }), { yes: true }, "?", ask))).toBe(0);
    expect(ask).not.toHaveBeenCalled();
  });

  it("no TTY (or --json) never asks and exits 2 with the fixed message", async () => {
    const ask = vi.fn();
    await expect(requireConfirmation(ctx({ stdin: false, stdout: true }), {}, "?", ask)).rejects.toThrow("confirmation required: pass --yes");
    expect(await exitOf(requireConfirmation(both, { json: true }, "?", ask))).toBe(2);
    expect(ask).not.toHaveBeenCalled();
  });

  it("on a TTY: yes proceeds, no or cancel exits 2", async () => {
    expect(await exitOf(requireConfirmation(both, {}, "?", async () => true))).toBe(0);
    expect(await exitOf(requireConfirmation(both, {}, "?", async () => false))).toBe(2);
    expect(await exitOf(requireConfirmation(both, {}, "?", async () => Symbol("clack:cancel")))).toBe(2);
  });
});
