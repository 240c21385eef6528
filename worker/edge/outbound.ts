/**
 * The single exit to the network (10 §2). Every outbound request of the door
 * (static origin today; Telegram and GitHub in later releases) goes through
 * here, so tests can route all of them to local fakes and fail on any
 * unexpected host.
 */
export function fetchOutbound(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  return fetch(input, init);
}
