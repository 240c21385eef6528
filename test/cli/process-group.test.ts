/**
 * The process-group supervisor of `magnt dev` (cli/lib/process-group.ts) on
 * its own, with stand-in children: signals forwarded to every member, the
 * group ending as one unit, the outcome, and the listeners removed. The same
 * rules through the whole command are in test/cli/dev.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { EnvironmentError } from "../../cli/lib/errors";
import { runProcessGroup, startProcessGroup, type GroupMember } from "../../cli/lib/process-group";

/** A child that records the signals it gets and exits when told to (or stays up when `stubborn`). */
class StandIn extends EventEmitter {
  readonly killedWith: NodeJS.Signals[] = [];
  constructor(private readonly stubborn = false) {
    super();
  }
  kill(signal: NodeJS.Signals): boolean {
    this.killedWith.push(signal);
    if (!this.stubborn) queueMicrotask(() => this.emit("exit", null, signal));
    return true;
  }
  asChild(): ChildProcess {
    return this as unknown as ChildProcess;
  }
}

function member(label: string, child: StandIn): GroupMember {
  return { label, start: () => child.asChild() };
}

describe("runProcessGroup", () => {
  it.each(["SIGINT", "SIGTERM"] as const)("forwards %s to every member, resolves, and removes its listeners", async (signal) => {
    const signals = new EventEmitter();
    const [a, b] = [new StandIn(), new StandIn()];
    const run = runProcessGroup(signals, [member("a", a), member("b", b)]);
    expect(signals.listenerCount(signal)).toBe(1);
    signals.emit(signal);
    await expect(run).resolves.toBeUndefined();
    expect(a.killedWith).toEqual([signal]);
    expect(b.killedWith).toEqual([signal]);
    expect(signals.listenerCount("SIGINT") + signals.listenerCount("SIGTERM")).toBe(0);
  });

  it("a member that crashes stops the others and the group fails naming it", async () => {
    const signals = new EventEmitter();
    const [a, b, c] = [new StandIn(), new StandIn(), new StandIn()];
    const run = runProcessGroup(signals, [member("wrangler dev (core)", a), member("wrangler dev (gateway)", b), member("wrangler dev (owner)", c)]);
    b.emit("exit", 1, null);
    await expect(run).rejects.toThrow(new EnvironmentError("wrangler dev (gateway) ended with exit code 1"));
    expect(a.killedWith).toEqual(["SIGTERM"]);
    expect(b.killedWith).toEqual([]);
    expect(c.killedWith).toEqual(["SIGTERM"]);
  });

  it("a member that ends normally ends the run with success", async () => {
    const signals = new EventEmitter();
    const [a, b] = [new StandIn(), new StandIn()];
    const run = runProcessGroup(signals, [member("a", a), member("b", b)]);
    a.emit("exit", 0, null);
    await expect(run).resolves.toBeUndefined();
    expect(b.killedWith).toEqual(["SIGTERM"]);
  });

  it("a member that cannot start fails the group with its error code", async () => {
    const signals = new EventEmitter();
    const [a, b] = [new StandIn(), new StandIn()];
    const run = runProcessGroup(signals, [member("a", a), member("b", b)]);
    b.emit("error", Object.assign(new Error("spawn failed"), { code: "ENOENT" }));
    await expect(run).rejects.toThrow("cannot start b: ENOENT");
    expect(a.killedWith).toEqual(["SIGTERM"]);
  });

  it("when a later member cannot even be spawned, the ones already running are stopped and no listener stays", () => {
    const signals = new EventEmitter();
    const first = new StandIn(true);
    const broken: GroupMember = {
      label: "b",
      start: () => {
        throw new EnvironmentError("Wrangler is not installed next to the CLI: run npm ci");
      },
    };
    expect(() => runProcessGroup(signals, [member("a", first), broken])).toThrow("run npm ci");
    expect(first.killedWith).toEqual(["SIGTERM"]);
    expect(signals.listenerCount("SIGINT") + signals.listenerCount("SIGTERM")).toBe(0);
  });

  it("staged: members added later join the same unit (a signal reaches both stages, one crash stops all)", async () => {
    const signals = new EventEmitter();
    const [a, b, c] = [new StandIn(), new StandIn(), new StandIn()];
    const group = startProcessGroup(signals);
    group.add([member("a", a)]);
    group.add([member("b", b), member("c", c)]);
    b.emit("exit", 1, null);
    await expect(group.ended).rejects.toThrow("b ended with exit code 1");
    expect(a.killedWith).toEqual(["SIGTERM"]);
    expect(c.killedWith).toEqual(["SIGTERM"]);
    expect(group.isEnded).toBe(true);
    expect(signals.listenerCount("SIGINT") + signals.listenerCount("SIGTERM")).toBe(0);
  });

  it("staged: a member added after the group ended is stopped at once and changes nothing", async () => {
    const signals = new EventEmitter();
    const a = new StandIn();
    const group = startProcessGroup(signals);
    group.add([member("a", a)]);
    signals.emit("SIGINT");
    await expect(group.ended).resolves.toBeUndefined();
    const late = new StandIn();
    group.add([member("late", late)]);
    expect(late.killedWith).toEqual(["SIGINT"]);
  });

  it("staged: stop() ends the group without a failure", async () => {
    const signals = new EventEmitter();
    const [a, b] = [new StandIn(), new StandIn()];
    const group = startProcessGroup(signals);
    group.add([member("a", a), member("b", b)]);
    group.stop();
    await expect(group.ended).resolves.toBeUndefined();
    expect([a.killedWith, b.killedWith]).toEqual([["SIGTERM"], ["SIGTERM"]]);
  });
});
