/** The shared contracts of the Worker and the `magnt` CLI. Pure TypeScript, no Workers APIs. */
export * from "./versions";
export * from "./flags";
export * from "./ids";
export * from "./limits";
export * from "./tools";
export * from "./events";
export * from "./migrations";
export * from "./probe";
export * from "./guards";
export * from "./origins";
export * from "./display-controls";
