/** The probe's path and keys live in the shared contracts (worker/contracts/probe.ts). */
export { PROBE_FIELDS, PROBE_PATH, type ProbeField } from "../../worker/contracts/probe";
