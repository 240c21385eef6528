/**
 * The JSON-RPC messages a request's server sends, seen as it sends them
 * (01 §9.2). A JSON answer of the SDK's transport is the serialisation of
 * the one response its server sent, so that response's members give the
 * answer's outcome without reading the answer back: no copy of the bytes,
 * no second `Response`, nothing scanned (issue 21; decision 220).
 *
 * How: the SDK connects the server its factory returns to that request's
 * transport (`McpServer.connect(transport)`, public API), and the server's
 * protocol layer sends every outgoing message through `Transport.send`
 * (the public transport interface). `watchSentMessages` wraps `connect` on
 * the one server it is given so that this transport's `send` reports each
 * message's facts first. Nothing else of the server or the transport changes.
 *
 * When nothing was seen (the SDK answered before any server was connected:
 * 406, 415, a header rejection, a body it could not parse; or a future SDK
 * that connects differently), the caller reads the answer as before
 * (response-reading.ts), so an SDK change can make this slower, never wrong.
 *
 * Threat model: the messages carry visitor text (arguments echoed in errors,
 * search results). Only `messageFacts` of each is kept — error code, result
 * kind, `isError`, `protocolVersion` — never text.
 */
import type { McpServer, Transport } from "@modelcontextprotocol/server";
import { messageFacts, type MessageFacts } from "./json-outcome";

/** What one request's server sent, in order: each message's facts (null for a non-object). */
export type SentMessages = (MessageFacts | null)[];

/** Wraps `server.connect` so the transport it is connected to reports each sent message into `sent`. */
export function watchSentMessages(server: McpServer, sent: SentMessages): McpServer {
  const connect = server.connect.bind(server);
  server.connect = (transport: Transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      sent.push(messageFacts(message));
      return send(message, options);
    };
    return connect(transport);
  };
  return server;
}

/** The responses among what was sent (a notification has neither `result` nor `error`). */
export function sentResponses(sent: SentMessages): MessageFacts[] {
  return sent.filter((facts): facts is MessageFacts => facts !== null && (facts.error !== null || facts.result !== null));
}
