/**
 * The client pool of the crash and cron suites: closed-loop lanes sending a
 * mixed write load to the door's `/mcp` with the modern requests of the bench
 * (test/bench/requests.ts), and a ledger of every write and every time it was
 * sent, so a suite can hold the stored rows against what the clients saw.
 *
 * Every write carries a unique marker in its text (`summary` of a contact,
 * `goal` of a signal), so each stored row maps back to exactly one planned
 * write — including writes sent without a `submission_id`, whose row the
 * client can never name otherwise. The exact arguments are kept, so a write
 * whose answer was lost can be retried byte for byte.
 *
 * Mix (of requests): 35 % `propose_contact` with a `submission_id` (one in
 * eight of them `is_test`), 10 % without; 25 % `contribute_task_signal` with a
 * `submission_id`, 10 % without; 5 % an identical retry of an earlier answered
 * write; 10 % `search_shared_experience`, 5 % `tools/list`.
 */
import { CONTACT_STATUS, CONTRIBUTE_STATUS } from "../../worker/contracts/tools";
import { prng, sentence } from "../bench/corpus";
import { readToolAnswer, toolCall, toolsList, type McpRequest } from "../bench/requests";

export type WriteOp = "propose_contact" | "contribute_task_signal";

/** How one send of a write ended. */
export type SendOutcome =
  /** An accepted receipt (`accepted_for_human_review`, `accepted` or `duplicate`) with its id. */
  | "receipt"
  /** An answer without a receipt (`not_saved`, `storage_error`, a conflict, a JSON-RPC error, a non-200). */
  | "refused"
  /** No answer: the connection died while a kill of the door was under way. */
  | "lost_in_kill"
  /** No answer although the door was not being killed. */
  | "error";

export interface Send {
  round: number;
  /** `first`, `retry` (an identical retry during the load) or `after_kill` (the identical retry of a lost send). */
  kind: "first" | "retry" | "after_kill";
  startedAt: number;
  endedAt: number;
  outcome: SendOutcome;
  /** `structuredContent.status`, `http_<n>`, or the error's name. */
  status: string;
  /** The receipt's id (`mc_…` / `ts_…`). */
  id?: string;
  /** The receipt said the write was new (`duplicate: false` / `accepted`). */
  fresh?: boolean;
}

export interface Write {
  seq: number;
  op: WriteOp;
  marker: string;
  submissionId: string | null;
  isTest: boolean;
  args: Record<string, unknown>;
  sends: Send[];
}

const REQUEST_TIMEOUT_MS = 60_000;

export class Workload {
  readonly writes: Write[] = [];
  readonly reads = { sent: 0, answered: 0, failed: 0 };
  private readonly random: () => number;
  private readonly runTag: string;
  private inFlight = 0;
  /** Set while a kill is being delivered, so a send that dies then is `lost_in_kill`, not `error`. */
  killing = false;

  constructor(seed: number, private readonly mcp: () => string) {
    this.random = prng(seed);
    this.runTag = `ck${seed.toString(36)}`;
  }

  /** Markers look like `ck<seed>n<seq>x`: unique per write, findable with LIKE. */
  markerOf(seq: number): string {
    return `${this.runTag}n${seq}x`;
  }

  markerPattern(): RegExp {
    return new RegExp(`${this.runTag}n(\\d+)x`);
  }

  get pending(): number {
    return this.inFlight;
  }

  /**
   * Runs `lanes` closed-loop lanes until `stop()` returns true; each lane
   * finishes the request it has in flight. `round` is recorded on every send.
   * `thinkMs` (0 by default) is a pause between a lane's requests.
   */
  async drive(lanes: number, round: number, stop: () => boolean, thinkMs: () => number = () => 0): Promise<void> {
    const lane = async () => {
      while (!stop()) {
        await this.step(round);
        const pause = thinkMs();
        if (pause > 0 && !stop()) await new Promise((resolve) => setTimeout(resolve, pause));
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  }

  /** Sends one planned request. */
  async step(round: number): Promise<void> {
    const roll = this.random();
    if (roll < 0.05) return this.read(toolsList());
    if (roll < 0.15) return this.read(toolCall("search_shared_experience", { goal: sentence(this.random, 80 + Math.floor(this.random() * 60)) }));
    if (roll < 0.2) {
      const earlier = this.answeredWithSubmission();
      if (earlier !== undefined) {
        await this.send(earlier, round, "retry");
        return;
      }
    }
    const op: WriteOp = roll < 0.6 ? "propose_contact" : "contribute_task_signal";
    const withSubmission = op === "propose_contact" ? roll < 0.5 : roll < 0.85;
    await this.send(this.plan(op, withSubmission), round, "first");
  }

  /** A new write with its marker and exact arguments. */
  plan(op: WriteOp, withSubmission: boolean): Write {
    const seq = this.writes.length + 1;
    const marker = this.markerOf(seq);
    const submissionId = withSubmission ? crypto.randomUUID() : null;
    const isTest = op === "propose_contact" && withSubmission && this.random() < 0.125;
    const args: Record<string, unknown> =
      op === "propose_contact"
        ? {
            summary: `message ${marker}: ${sentence(this.random, 120 + Math.floor(this.random() * 120))}`,
            intent: sentence(this.random, 60),
            reply_to: `agent-${seq}@example.test`,
            ...(isTest ? { is_test: true } : {}),
          }
        : {
            goal: `task ${marker} ${sentence(this.random, 100)}`,
            blocker: sentence(this.random, 120),
            tried: sentence(this.random, 200),
            learned: sentence(this.random, 120),
          };
    if (submissionId !== null) args.submission_id = submissionId;
    const write: Write = { seq, op, marker, submissionId, isTest, args, sends: [] };
    this.writes.push(write);
    return write;
  }

  /** Sends `write` with its exact arguments and files the outcome. */
  async send(write: Write, round: number, kind: Send["kind"]): Promise<Send> {
    const startedAt = Date.now();
    this.inFlight += 1;
    let send: Send;
    try {
      const response = await fetch(this.mcp(), { ...toolCall(write.op, write.args), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const text = await response.text();
      send = { round, kind, startedAt, endedAt: Date.now(), ...classify(write.op, response.status, text) };
    } catch (error) {
      const name = error instanceof Error ? (error.cause instanceof Error ? `${error.name}: ${error.cause.message}` : error.name) : "error";
      send = { round, kind, startedAt, endedAt: Date.now(), outcome: this.killing ? "lost_in_kill" : "error", status: name.slice(0, 120) };
    } finally {
      this.inFlight -= 1;
    }
    write.sends.push(send);
    return send;
  }

  private async read(request: McpRequest): Promise<void> {
    this.reads.sent += 1;
    this.inFlight += 1;
    try {
      const response = await fetch(this.mcp(), { ...request, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      await response.text();
      if (response.status === 200) this.reads.answered += 1;
      else this.reads.failed += 1;
    } catch {
      if (!this.killing) this.reads.failed += 1;
    } finally {
      this.inFlight -= 1;
    }
  }

  /** A random earlier write with a submission id whose first send got a receipt. */
  private answeredWithSubmission(): Write | undefined {
    for (let tries = 0; tries < 4 && this.writes.length > 0; tries += 1) {
      const candidate = this.writes[Math.floor(this.random() * this.writes.length)]!;
      if (candidate.submissionId !== null && candidate.sends.some((send) => send.outcome === "receipt")) return candidate;
    }
    return undefined;
  }

  /** Writes whose latest send was lost in a kill: the ones an agent would retry. */
  lostInKill(): Write[] {
    return this.writes.filter((write) => write.sends.at(-1)?.outcome === "lost_in_kill");
  }

  /** Waits until no request is in flight (bounded). */
  async settle(timeoutMs = REQUEST_TIMEOUT_MS + 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight > 0) {
      if (Date.now() > deadline) throw new Error(`${this.inFlight} requests still in flight after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function classify(op: WriteOp, status: number, text: string): Pick<Send, "outcome" | "status" | "id" | "fresh"> {
  if (status !== 200) return { outcome: "refused", status: `http_${status}` };
  const answer = readToolAnswer(text);
  const structured = answer.structured;
  if (op === "propose_contact" && answer.outcome === CONTACT_STATUS.accepted && typeof structured?.contact_id === "string") {
    return { outcome: "receipt", status: answer.outcome, id: structured.contact_id, fresh: structured.duplicate === false };
  }
  if (op === "contribute_task_signal" && (answer.outcome === CONTRIBUTE_STATUS.accepted || answer.outcome === CONTRIBUTE_STATUS.duplicate) && typeof structured?.signal_id === "string") {
    return { outcome: "receipt", status: answer.outcome, id: structured.signal_id, fresh: answer.outcome === CONTRIBUTE_STATUS.accepted };
  }
  return { outcome: "refused", status: answer.outcome };
}
