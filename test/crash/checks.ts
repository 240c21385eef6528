/**
 * The crash suite's verdict, as a pure function of what the clients saw (the
 * workload ledger), what the stand-in Telegram recorded, what D1 held at each
 * kill and at the end. Each check that fails adds a line to `failures`; the
 * figures are counted on the way. `plantedDefects` rebuilds the input with one
 * defect of each kind, so the run proves every check can fail on its own data.
 *
 * What the checks hold the door to (issue 20 item 2, 02 §5.3, 03 §8.2, 05 §4):
 * - every receipt a client received has exactly its row (the row with the
 *   write's marker, under the receipt's id and the write's submission id);
 * - a row without a receipt exists only for a write whose answer was lost in a
 *   kill (it committed; the process died before answering);
 * - the identical retry of a lost write with a `submission_id` answers a
 *   receipt: `duplicate` with the row's id when the write had committed before
 *   the kill (the row is older than the kill), new when it had not (the row is
 *   younger than the kill);
 * - the outbox: every non-test contact row delivered (with goal notifications
 *   on, every goal row delivered or skipped as `overflow`), test contacts never
 *   queued or sent, and no contact notified twice — except a resend in the one
 *   window 05 §4 allows: the stand-in had received the message (Telegram
 *   delivered it) while the row was still `sending` when the kill came, so the
 *   restarted door recovers it as `interrupted` and sends it again, recognisable
 *   by its delivery reference (a higher attempt number);
 * - no lease held after the final passes.
 */
import type { RecordedSend } from "./telegram-stand-in";
import type { Send, Write } from "./workload";

export interface ContactRow {
  contact_id: string;
  submission_id: string;
  summary: string;
  self_reported_test: number;
  created_at: string;
}

export interface SignalRow {
  signal_id: string;
  submission_id: string;
  goal: string;
  created_at: string;
}

export interface OutboxRow {
  source_kind: string;
  source_id: string;
  state: string;
  attempts: number;
  last_error_code?: string | null;
}

export interface ObservationRow {
  observation_id: string;
}

export interface SendingAtKill {
  source_id: string;
  attempts: number;
}

export interface KillRecord {
  round: number;
  /** Milliseconds since the epoch when SIGKILL went to the group. */
  at: number;
  /** The kill was timed inside a Telegram answer's delay (a send received, its answer held back). */
  targeted: boolean;
  /** Requests in flight when the kill came (writes and reads). */
  inFlight: number;
  /** Outbox rows in `sending` in the state the kill left (read before the restart). */
  sendingRows: SendingAtKill[];
  /** The cron lease was held and unexpired in the state the kill left. */
  leaseHeld: boolean;
}

export interface CrashInput {
  writes: readonly Write[];
  markerPattern: RegExp;
  contacts: readonly ContactRow[];
  signals: readonly SignalRow[];
  outbox: readonly OutboxRow[];
  /** The stored observations when goal notifications are on; absent when they are off (then no goal row may exist). */
  observations?: readonly ObservationRow[];
  sends: readonly RecordedSend[];
  strays: number;
  chatId: string;
  kills: readonly KillRecord[];
  lease: { lease_id: unknown; lease_expires_at: unknown } | undefined;
}

export interface CrashFigures {
  writes: number;
  contactsPlanned: number;
  signalsPlanned: number;
  withoutSubmission: number;
  testContacts: number;
  sendsByKindOutcome: Map<string, number>;
  receipts: number;
  contactRows: number;
  signalRows: number;
  /** Writes whose first send a kill took, by whether they had committed (row older than the kill) and carried a submission id. */
  lostCommittedWithSubmission: number;
  lostCommittedWithoutSubmission: number;
  lostNotCommittedWithSubmission: number;
  lostNotCommittedWithoutSubmission: number;
  /** Identical retries of already answered writes whose answer a kill took. */
  lostRetries: number;
  /** Rows no answer ever named: committed writes without a submission id whose answer a kill took. */
  rowsWithoutReceipt: number;
  retriedAfterKill: number;
  retryDuplicate: number;
  retryNew: number;
  refused: Map<string, number>;
  errors: number;
  notifiable: number;
  delivered: number;
  goalsDelivered: number;
  goalsOverflow: number;
  telegramSends: number;
  sourcesSentOnce: number;
  /** Sources sent more than once, every extra send inside a window 05 §4 allows. */
  sourcesResentInWindow: number;
  extraSendsInWindow: number;
  unexplainedExtraSends: number;
  /** Claims kills left `sending` (each row and attempt once) whose message the stand-in had received (answer lost). */
  windowsAnswerLost: number;
  /** Claims kills left `sending` whose message never reached the stand-in (claimed, not sent). */
  windowsClaimedNotSent: number;
  killsWithLeaseHeld: number;
}

export interface CrashVerdict {
  failures: string[];
  figures: CrashFigures;
}

const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
const receiptsOf = (write: Write) => write.sends.filter((send) => send.outcome === "receipt");

export function checkCrashRun(input: CrashInput): CrashVerdict {
  const failures: string[] = [];
  const fail = (line: string) => {
    if (failures.length < 200) failures.push(line);
  };
  const bySeq = new Map(input.writes.map((write) => [write.seq, write]));
  const seqOf = (text: string): number | undefined => {
    const match = input.markerPattern.exec(text);
    return match === null ? undefined : Number(match[1]);
  };

  // Rows by the write they belong to.
  interface StoredRow {
    id: string;
    submissionId: string;
    createdAt: number;
    isTest: boolean;
    op: Write["op"];
  }
  const rowsBySeq = new Map<number, StoredRow[]>();
  const addRow = (text: string, row: StoredRow) => {
    const seq = seqOf(text);
    const write = seq === undefined ? undefined : bySeq.get(seq);
    if (seq === undefined || write === undefined || write.op !== row.op) {
      fail(`foreign ${row.op === "propose_contact" ? "contact" : "signal"} row ${row.id}: no planned write carries its marker`);
      return;
    }
    rowsBySeq.set(seq, [...(rowsBySeq.get(seq) ?? []), row]);
  };
  for (const row of input.contacts) {
    addRow(row.summary, { id: row.contact_id, submissionId: row.submission_id, createdAt: Date.parse(row.created_at), isTest: row.self_reported_test === 1, op: "propose_contact" });
  }
  for (const row of input.signals) {
    addRow(row.goal, { id: row.signal_id, submissionId: row.submission_id, createdAt: Date.parse(row.created_at), isTest: false, op: "contribute_task_signal" });
  }

  const figures: CrashFigures = {
    writes: input.writes.length,
    contactsPlanned: input.writes.filter((write) => write.op === "propose_contact").length,
    signalsPlanned: input.writes.filter((write) => write.op === "contribute_task_signal").length,
    withoutSubmission: input.writes.filter((write) => write.submissionId === null).length,
    testContacts: input.writes.filter((write) => write.isTest).length,
    sendsByKindOutcome: new Map(),
    receipts: 0,
    contactRows: input.contacts.length,
    signalRows: input.signals.length,
    lostCommittedWithSubmission: 0,
    lostCommittedWithoutSubmission: 0,
    lostNotCommittedWithSubmission: 0,
    lostNotCommittedWithoutSubmission: 0,
    lostRetries: 0,
    rowsWithoutReceipt: 0,
    retriedAfterKill: 0,
    retryDuplicate: 0,
    retryNew: 0,
    refused: new Map(),
    errors: 0,
    notifiable: 0,
    delivered: 0,
    goalsDelivered: 0,
    goalsOverflow: 0,
    telegramSends: input.sends.length,
    sourcesSentOnce: 0,
    sourcesResentInWindow: 0,
    extraSendsInWindow: 0,
    unexplainedExtraSends: 0,
    windowsAnswerLost: 0,
    windowsClaimedNotSent: 0,
    killsWithLeaseHeld: input.kills.filter((kill) => kill.leaseHeld).length,
  };
  const killOfRound = new Map(input.kills.map((kill) => [kill.round, kill]));

  for (const write of input.writes) {
    const rows = rowsBySeq.get(write.seq) ?? [];
    const receipts = receiptsOf(write);
    for (const send of write.sends) {
      count(figures.sendsByKindOutcome, `${send.kind} → ${send.outcome}`);
      if (send.outcome === "refused") count(figures.refused, send.status);
      if (send.outcome === "error") {
        figures.errors += 1;
        fail(`write #${write.seq} (${write.op}): no answer without a kill (${send.status})`);
      }
    }
    figures.receipts += receipts.length;
    if (rows.length > 1) fail(`write #${write.seq} (${write.op}) has ${rows.length} rows: ${rows.map((row) => row.id).join(", ")}`);
    const row = rows[0];

    // Every receipt has exactly its row.
    const ids = new Set(receipts.map((send) => send.id));
    if (ids.size > 1) fail(`write #${write.seq} (${write.op}) answered with ${ids.size} ids: ${[...ids].join(", ")}`);
    if (receipts.filter((send) => send.fresh === true).length > 1) fail(`write #${write.seq} (${write.op}) got more than one new (non-duplicate) receipt`);
    for (const send of receipts) {
      if (row === undefined) fail(`lost write: write #${write.seq} (${write.op}) got receipt ${send.id} (${send.kind}, round ${send.round}) and has no row`);
      else if (row.id !== send.id) fail(`write #${write.seq} (${write.op}): receipt ${send.id} but its row is ${row.id}`);
    }
    if (row !== undefined && write.submissionId !== null && row.submissionId !== write.submissionId) {
      fail(`write #${write.seq} (${write.op}): row ${row.id} carries another submission id`);
    }
    if (row !== undefined && row.isTest !== write.isTest) fail(`write #${write.seq}: row ${row.id} is_test ${row.isTest}, sent ${write.isTest}`);

    // Writes whose answer a kill took: their first send, or an identical retry of a write already answered.
    const lost = write.sends.filter((send) => send.outcome === "lost_in_kill");
    figures.lostRetries += lost.filter((send) => send.kind !== "first").length;
    const lostFirst = write.sends[0]?.outcome === "lost_in_kill" ? write.sends[0] : undefined;
    if (lostFirst !== undefined) {
      // Committed before the process died: the row exists and is older than that kill.
      const kill = killOfRound.get(lostFirst.round);
      const committed = row !== undefined && kill !== undefined && row.createdAt < kill.at;
      const key = write.submissionId === null ? "Without" : "With";
      figures[`lost${committed ? "Committed" : "NotCommitted"}${key}Submission`] += 1;
    }
    if (row !== undefined && receipts.length === 0) {
      const kill = lostFirst === undefined ? undefined : killOfRound.get(lostFirst.round);
      if (kill === undefined) fail(`write #${write.seq} (${write.op}): row ${row.id} exists, but its answer was not lost in a kill and carried no receipt (${write.sends.map((send) => send.status).join(", ")})`);
      else if (!(row.createdAt < kill.at)) fail(`write #${write.seq} (${write.op}): row ${row.id} has no receipt and is younger than the kill that took its answer`);
      else figures.rowsWithoutReceipt += 1;
    }

    // The identical retry after the restart.
    for (const [index, send] of write.sends.entries()) {
      if (send.kind !== "after_kill") continue;
      figures.retriedAfterKill += 1;
      const before = write.sends[index - 1];
      if (before === undefined || before.outcome !== "lost_in_kill") fail(`write #${write.seq}: an after-kill retry without a lost send before it`);
      if (send.outcome !== "receipt") {
        fail(`write #${write.seq} (${write.op}): the identical retry after the restart answered ${send.status}, not a receipt`);
        continue;
      }
      const kill = before === undefined ? undefined : killOfRound.get(before.round);
      if (send.fresh === true) figures.retryNew += 1;
      else figures.retryDuplicate += 1;
      if (row !== undefined && kill !== undefined) {
        // duplicate ⇒ the write had committed before the kill; new ⇒ it had not, and this retry stored it.
        if (send.fresh === false && !(row.createdAt < kill.at)) fail(`write #${write.seq}: retry answered duplicate, but row ${row.id} is younger than the kill`);
        if (send.fresh === true && !(row.createdAt > kill.at)) fail(`write #${write.seq}: retry answered new, but row ${row.id} is older than the kill`);
      }
    }
  }

  checkOutbox(input, rowsBySeq, bySeq, figures, fail);
  if (input.lease === undefined) fail("notification_state has no row after the passes");
  else if (input.lease.lease_id !== null || input.lease.lease_expires_at !== null) {
    fail(`the cron lease is still held after the last pass ended (lease_expires_at ${String(input.lease.lease_expires_at)})`);
  }
  return { failures, figures };
}

function checkOutbox(
  input: CrashInput,
  rowsBySeq: Map<number, Array<{ id: string; isTest: boolean; op: Write["op"] }>>,
  bySeq: Map<number, Write>,
  figures: CrashFigures,
  fail: (line: string) => void,
): void {
  const contactIds = new Map<string, boolean>(); // id → is test
  for (const [seq, rows] of rowsBySeq) {
    if (bySeq.get(seq)?.op !== "propose_contact") continue;
    for (const row of rows) contactIds.set(row.id, row.isTest);
  }
  const observationIds = new Set((input.observations ?? []).map((row) => row.observation_id));
  const goals = input.observations !== undefined;
  const outboxBySource = new Map(input.outbox.map((row) => [row.source_id, row]));
  for (const row of input.outbox) {
    if (row.source_kind === "observation") {
      if (!goals) fail(`outbox row of kind observation (${row.source_id}): goal notifications are off`);
      else if (!observationIds.has(row.source_id)) fail(`outbox row for unknown observation ${row.source_id}`);
      else if (row.state === "delivered") figures.goalsDelivered += 1;
      else if (row.state === "skipped" && row.last_error_code === "overflow") figures.goalsOverflow += 1;
      else fail(`goal row ${row.source_id} ended ${row.state}${row.last_error_code ? ` (${row.last_error_code})` : ""}, neither delivered nor skipped as overflow`);
    } else if (row.source_kind !== "contact") fail(`outbox row of kind ${row.source_kind} (${row.source_id})`);
    else if (!contactIds.has(row.source_id)) fail(`outbox row for unknown contact ${row.source_id}`);
    else if (contactIds.get(row.source_id) === true) fail(`test contact ${row.source_id} was queued (${row.state})`);
  }
  for (const id of observationIds) if (!outboxBySource.has(id)) fail(`observation ${id} has no outbox row (it is written with its observation, 03 §7)`);
  for (const [id, isTest] of contactIds) {
    if (isTest) continue;
    figures.notifiable += 1;
    const row = outboxBySource.get(id);
    if (row === undefined) fail(`contact ${id} was never queued`);
    else if (row.state !== "delivered") fail(`contact ${id} ended ${row.state} (attempts ${row.attempts}), not delivered`);
    else figures.delivered += 1;
  }

  if (input.strays > 0) fail(`${input.strays} requests to the stand-in were not a sendMessage`);
  const claimsLeftSending = uniqueClaims(input.kills);
  const bySource = new Map<string, RecordedSend[]>();
  for (const send of input.sends) {
    if (String(send.chatId) !== input.chatId) fail(`a message went to chat ${String(send.chatId)}`);
    const key = send.sourceId ?? "(no id line)";
    bySource.set(key, [...(bySource.get(key) ?? []), send]);
  }
  for (const [source, sends] of bySource) {
    const kind = contactIds.has(source) ? "contact" : observationIds.has(source) ? "observation" : undefined;
    if (kind === undefined) {
      fail(`${sends.length} message(s) for ${source}, which is no stored contact${goals ? " or observation" : ""}`);
      continue;
    }
    if (contactIds.get(source) === true) fail(`test contact ${source} was sent ${sends.length} time(s)`);
    if (outboxBySource.get(source)?.state !== "delivered") fail(`${kind} ${source} was sent but its outbox row is ${outboxBySource.get(source)?.state ?? "missing"}`);
    if (sends.length === 1) {
      figures.sourcesSentOnce += 1;
      continue;
    }
    const attempts = sends.map((send) => send.attempt);
    if (new Set(attempts).size !== attempts.length) fail(`${kind} ${source}: one delivery reference sent twice (attempts ${attempts.join(", ")})`);
    // Windows 05 §4 allows: a kill found the row `sending` at an attempt whose message the stand-in already had.
    const windows = [...claimsLeftSending].filter((claim) => claim.source_id === source && sends.some((send) => send.attempt === claim.attempts)).length;
    const extra = sends.length - 1;
    if (extra <= windows) {
      figures.sourcesResentInWindow += 1;
      figures.extraSendsInWindow += extra;
    } else {
      figures.unexplainedExtraSends += extra - windows;
      fail(`${kind} ${source} was notified ${sends.length} times (attempts ${attempts.join(", ")}), ${windows} of them explained by a kill after Telegram's answer`);
    }
  }
  for (const [id, row] of outboxBySource) {
    if (row.state === "delivered" && !bySource.has(id)) fail(`${row.source_kind} ${id} is marked delivered but the stand-in never received it`);
  }
  for (const row of claimsLeftSending) {
    // The send of that claim carries the row's attempt number; a resend after the restart carries a higher one.
    const sends = bySource.get(row.source_id) ?? [];
    if (sends.some((send) => send.attempt === row.attempts)) {
      figures.windowsAnswerLost += 1;
      // 05 §4: the stale row is recovered as `interrupted` and sent again — the owner sees it twice, by design.
      if (!sends.some((send) => send.attempt !== null && send.attempt > row.attempts)) fail(`${row.source_id}: its claim #${row.attempts} was left sending after Telegram had it, but it was never sent again`);
    } else figures.windowsClaimedNotSent += 1;
  }
}

/**
 * The claims kills left `sending`, each once: a stale row stays `sending` until
 * the 120 s recovery, so the next kill may find the same claim (same row, same
 * attempt) again — it is still one window, one possible resend.
 */
function uniqueClaims(kills: readonly KillRecord[]): SendingAtKill[] {
  const seen = new Map<string, SendingAtKill>();
  for (const kill of kills) for (const row of kill.sendingRows) seen.set(`${row.source_id}#${row.attempts}`, row);
  return [...seen.values()];
}

/**
 * One input per kind of defect, each built from the run's own data, with the
 * description of the check it must trip. A defect that cannot be planted in
 * this run's data (say, no resend happened) is left out and named.
 */
export function plantedDefects(input: CrashInput): { planted: Array<{ defect: string; input: CrashInput }>; skipped: string[] } {
  const planted: Array<{ defect: string; input: CrashInput }> = [];
  const skipped: string[] = [];
  const sentIds = new Set(input.sends.map((send) => send.sourceId));
  const receiptedContact = input.writes.find((write) => write.op === "propose_contact" && !write.isTest && receiptsOf(write).length > 0 && sentIds.has(receiptsOf(write)[0]!.id ?? ""));
  const receiptedSignal = input.writes.find((write) => write.op === "contribute_task_signal" && receiptsOf(write).length > 0);
  if (receiptedSignal !== undefined) {
    const id = receiptsOf(receiptedSignal)[0]!.id;
    planted.push({ defect: "a receipted signal's row is gone", input: { ...input, signals: input.signals.filter((row) => row.signal_id !== id) } });
  } else skipped.push("no receipted signal");
  if (receiptedContact !== undefined) {
    const id = receiptsOf(receiptedContact)[0]!.id!;
    const row = input.contacts.find((contact) => contact.contact_id === id)!;
    planted.push({ defect: "a receipted contact stored twice", input: { ...input, contacts: [...input.contacts, { ...row, contact_id: `${id.slice(0, -4)}dead`, submission_id: crypto.randomUUID() }] } });
    planted.push({ defect: "a delivered contact notified once more outside any kill window", input: { ...input, sends: [...input.sends, { ...input.sends.find((send) => send.sourceId === id)!, attempt: 99, at: Date.now() }] } });
    planted.push({ defect: "a contact left pending", input: { ...input, outbox: input.outbox.map((out) => (out.source_id === id ? { ...out, state: "pending" } : out)) } });
  } else skipped.push("no receipted contact");
  const answered = input.writes.find((write) => write.sends.length === 1 && write.sends[0]!.outcome === "receipt" && write.op === "contribute_task_signal");
  if (answered !== undefined) {
    const row = input.signals.find((signal) => signal.signal_id === answered.sends[0]!.id)!;
    planted.push({
      defect: "a row whose answer was refused without a kill",
      input: { ...input, writes: input.writes.map((write) => (write === answered ? { ...write, sends: [{ ...write.sends[0]!, outcome: "refused" as Send["outcome"], status: "storage_error", id: undefined }] } : write)) },
    });
    planted.push({ defect: "a foreign row", input: { ...input, signals: [...input.signals, { ...row, signal_id: "ts_foreign", goal: "no marker here" }] } });
  } else skipped.push("no answered signal");
  const retried = input.writes.find((write) => write.sends.some((send) => send.kind === "after_kill" && send.outcome === "receipt"));
  if (retried !== undefined) {
    planted.push({
      defect: "an after-kill retry answered with another id",
      input: { ...input, writes: input.writes.map((write) => (write === retried ? { ...write, sends: write.sends.map((send) => (send.kind === "after_kill" ? { ...send, id: "mc_00000000000000000000000000000000" } : send)) } : write)) },
    });
  } else skipped.push("no after-kill retry");
  const windowKill = input.kills.find((kill) => kill.sendingRows.some((row) => input.sends.some((send) => send.sourceId === row.source_id && send.attempt === row.attempts)));
  if (windowKill !== undefined) {
    const claim = windowKill.sendingRows.find((row) => input.sends.some((send) => send.sourceId === row.source_id && send.attempt === row.attempts))!;
    const resends = input.sends.filter((send) => send.sourceId === claim.source_id);
    planted.push({
      defect: "one stale claim seen by two kills excusing two resends",
      input: {
        ...input,
        kills: [...input.kills, { ...windowKill, round: windowKill.round + 1000 }],
        sends: [...input.sends, ...Array.from({ length: 3 - Math.min(resends.length, 2) }, (_, index) => ({ ...resends[0]!, attempt: 90 + index }))],
      },
    });
  } else skipped.push("no kill inside a Telegram answer");
  planted.push({ defect: "the lease still held", input: { ...input, lease: { lease_id: "held", lease_expires_at: new Date().toISOString() } } });
  return { planted, skipped };
}
