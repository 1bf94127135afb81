// A JavaScript test guest that asks a model through the raw `provider` bindings (the JS twin of the
// thinker guest). Its input is one command per line; its answer is a JSON array, one result per line.
// TARGET is PROVIDER or PROVIDER:MODEL (none: the provider's default model).
// - "models TARGET": { kind, name, models } of the handle;
// - "chat TARGET TEXT": a blocking chat (maxTokens 1000, temperature 0.5):
//   { model, content, toolCalls, finishReason, usage: [input, output] };
// - "tools TARGET": a chat offering the one tool `lookup`: { toolCalls, finishReason };
// - "stream TARGET TEXT": chat-stream, then the inbox until its final envelope, then a short wait for
//   any more: { joined (the text pieces in order), toolCalls (the whole calls pieces carried), end
//   (the chat-end's result), kinds (every envelope kind of the stream, in order), open };
// - "cancel TARGET": a stream cancelled once its first piece came: { first, cancelled, open, after }
//   (after: the kinds of what arrived for it afterwards);
// - "denied TARGET": the payload of the error that get(PROVIDER).models() throws, caught.
// A host error any command throws is its result as { err: payload }.
// Written against wit/ (agent-host:guest@0.3.0) alone; typed with JSDoc so that it checks (tsc,
// strict) against the declarations `agent-host bindings --lang ts` writes.
import { recv } from "agent-host:guest/inbox@0.3.0";
import { get } from "agent-host:guest/provider@0.3.0";

/** @typedef {import("agent-host:guest/provider@0.3.0").Provider} Provider */
/** @typedef {import("agent-host:guest/types@0.3.0").ChatRequest} ChatRequest */
/** @typedef {import("agent-host:guest/types@0.3.0").ChatResult} ChatResult */
/** @typedef {import("agent-host:guest/types@0.3.0").Error} WitError */

const WAIT = 20000; // ms a stream's next envelope may take
const AFTER = 300; // ms waited for envelopes that must not come

/** @param {string} text */
function target(text) {
  const [provider, model] = text.split(":");
  return { provider, model };
}

/**
 * @param {string | undefined} model
 * @param {string} text
 * @param {Partial<ChatRequest>} extra
 * @returns {ChatRequest}
 */
function request(model, text, extra = {}) {
  return { model, messages: [{ role: "user", content: text, toolCalls: [] }], tools: [], ...extra };
}

/** @param {ChatResult} answer */
function result(answer) {
  return {
    model: answer.model,
    content: answer.content ?? null,
    toolCalls: answer.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    finishReason: answer.finishReason,
    usage: [answer.usage.inputTokens, answer.usage.outputTokens],
  };
}

/** @param {unknown} error - a host import's ComponentError (its payload: the WIT error), else thrown on */
function payload(error) {
  if (error === null || typeof error !== "object" || !("payload" in error)) throw error;
  const { code, message, data } = /** @type {{ payload: WitError }} */ (error).payload;
  return { code, message, data: data ?? null };
}

/** @param {string} id */
function later(id) {
  /** @type {string[]} */
  const kinds = [];
  for (let envelope = recv(AFTER); envelope !== undefined; envelope = recv(AFTER)) {
    if (envelope.id === id) kinds.push(envelope.event.tag);
  }
  return kinds;
}

/**
 * @param {Provider} llm
 * @param {string | undefined} model
 * @param {string} text
 */
function stream(llm, model, text) {
  const id = llm.chatStream(request(model, text));
  /** @type {string[]} */
  const pieces = [];
  /** @type {string[]} */
  const calls = [];
  /** @type {string[]} */
  const kinds = [];
  for (;;) {
    const envelope = recv(WAIT);
    if (envelope === undefined) return { timedOut: kinds };
    if (envelope.id !== id) continue;
    const event = envelope.event;
    kinds.push(event.tag);
    if (event.tag === "chat-delta") {
      if (event.val.content !== undefined) pieces.push(event.val.content);
      if (event.val.toolCall !== undefined) calls.push(event.val.toolCall.name);
      continue;
    }
    const end = event.tag === "chat-end" ? result(event.val) : null;
    const error = event.tag === "error" ? { code: event.val.code, message: event.val.message } : null;
    const open = llm.isOpen(id);
    kinds.push(...later(id));
    return { joined: pieces.join(""), toolCalls: calls, end, error, kinds, open };
  }
}

/** @param {string} line */
function command(line) {
  const [mode, where = "", ...rest] = line.trim().split(" ");
  const text = rest.join(" ");
  const { provider, model } = target(where);
  if (mode === "denied") {
    try {
      const llm = get(provider);
      llm.models();
      llm[Symbol.dispose]();
      return { granted: true };
    } catch (error) {
      return payload(error);
    }
  }
  const llm = get(provider);
  try {
    if (mode === "models") return { kind: llm.kind(), name: llm.name(), models: llm.models() };
    if (mode === "chat") return result(llm.chat(request(model, text, { maxTokens: 1000, temperature: 0.5 })));
    if (mode === "tools") {
      const lookup = {
        name: "lookup",
        description: "Look a city up.",
        inputSchema: JSON.stringify({ type: "object", properties: { city: { type: "string" } } }),
      };
      const answer = result(llm.chat(request(model, "Where is Paris?", { tools: [lookup] })));
      return { toolCalls: answer.toolCalls, finishReason: answer.finishReason };
    }
    if (mode === "stream") return stream(llm, model, text);
    if (mode === "cancel") {
      const id = llm.chatStream(request(model, "wait for it"));
      const first = recv(WAIT);
      if (first === undefined || first.id !== id) return { first: first === undefined ? "nothing" : "other" };
      const cancelled = llm.cancel(id);
      return { first: first.event.tag, cancelled, open: llm.isOpen(id), after: later(id) };
    }
    throw `unknown mode ${mode}`;
  } finally {
    llm[Symbol.dispose]();
  }
}

/** @param {string} input */
export function run(input) {
  /** @type {unknown[]} */
  const results = [];
  for (const line of input.split("\n").filter((line) => line.trim() !== "")) {
    try {
      results.push(command(line));
    } catch (error) {
      results.push({ err: payload(error) });
    }
  }
  return JSON.stringify(results);
}
