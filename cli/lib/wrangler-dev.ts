/**
 * The one `wrangler dev` argv (08 §13), for plain `magnt dev` and for each of
 * the three processes of `magnt dev --owner`:
 *
 *   dev --config <cfg> [--env <name>] --local --ip <ip> --port <port>
 *       --inspector-port <port> [--var NAME:value]… [--persist-to <dir>]
 *
 * Each process gets its own inspector port (a free loopback port), so several
 * local doors can start at the same moment without racing for Wrangler's
 * default 9229.
 */

export interface WranglerDevRun {
  config: string;
  env?: string;
  ip: string;
  port: number;
  inspectorPort: number;
  /** `--var NAME:value`, in order. */
  vars?: ReadonlyArray<readonly [name: string, value: string]>;
  persistTo?: string;
}

export function wranglerDevArgs(run: WranglerDevRun): string[] {
  return [
    "dev",
    "--config",
    run.config,
    ...(run.env === undefined ? [] : ["--env", run.env]),
    "--local",
    "--ip",
    run.ip,
    "--port",
    String(run.port),
    "--inspector-port",
    String(run.inspectorPort),
    ...(run.vars ?? []).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    ...(run.persistTo === undefined ? [] : ["--persist-to", run.persistTo]),
  ];
}
