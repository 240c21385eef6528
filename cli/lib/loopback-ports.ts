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
