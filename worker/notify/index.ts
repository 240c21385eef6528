/** Owner notifications (05): what the entries may use. */
export { runScheduled } from "./scheduler";
