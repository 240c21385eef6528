/**
 * Free loopback ports for the processes `magnt dev` starts (inspector ports,
 * core's port in the split run). A port is "free" when binding it to port 0
 * returned it a moment ago; Wrangler binds it right after, so a collision is
 * possible but short-lived, and never with the ports the user chose (`taken`).
 */
import { createServer } from "node:net";
import { EnvironmentError } from "./errors";

/** Loopback: the address every generated port listens on, whatever `--ip` says. */
export const LOOPBACK_IP = "127.0.0.1";

/** A loopback port that was free a moment ago (bound to 0, then released). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK_IP, resolvePromise);
  });
  const address = server.address();
  await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
  if (address === null || typeof address === "string") throw new EnvironmentError("cannot find a free loopback port");
  return address.port;
}

/** `count` distinct free loopback ports, none of them in `taken`. */
export async function freeLoopbackPorts(count: number, taken: readonly number[]): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count; attempt += 1) {
    if (attempt > count * 20) throw new EnvironmentError("cannot find free loopback ports for the local split run");
    const port = await freeLoopbackPort();
    if (!taken.includes(port) && !ports.includes(port)) ports.push(port);
  }
  return ports;
}

/**
 * Refuses a port something already listens on, before any process starts: one
 * line naming the port and the option that changes it, instead of workerd's
 * stack trace after the migrations. Binding is the only reliable test (a
 * listener on 0.0.0.0 or [::] also takes 127.0.0.1's port); the port is
 * released at once. Other bind errors (an address not on this machine, a
 * privileged port) are left to Wrangler, which words them itself.
 */
export async function ensurePortFree(ip: string, port: number, option: string): Promise<void> {
  const server = createServer();
  const code = await new Promise<string | undefined>((resolvePromise) => {
    server.once("error", (error: NodeJS.ErrnoException) => resolvePromise(error.code ?? "error"));
    server.listen({ port, host: ip, exclusive: true }, () => resolvePromise(undefined));
  });
  if (code === undefined) await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
  if (code === "EADDRINUSE") {
    throw new EnvironmentError(`port ${port} on ${ip} is already in use: stop what listens there, or choose another port with ${option} <n>`);
  }
}
