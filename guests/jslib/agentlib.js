// agentlib: the helper library of JavaScript guests, bundled by `agent-host build` into every build
// (`import { agent, tooling } from "agentlib"`). The JS twin of the Python guests' agentlib.
//
//   import { agent, tooling, events, provider, runAgent, log, ToolingError } from "agentlib";
//   const demo = tooling("demo");                           // lazy: the WIT `get` on first use
//   export const run = agent((input) => demo.echo({ text: input }));
//
// It imports only the WIT interfaces (agent-host:guest@0.3.0) and calls none of them while the
// module is evaluated: componentize-js evaluates it at build time, when no host is there. Every
// host failure it passes on is a `ToolingError` (code, message, data; `payload` for the entry that
// `agent-host build` generates, which reports an escaped one as "code: message (raised at FILE:LINE:COL)").
// The declarations are agentlib.d.ts beside it (`agent-host bindings --lang ts` writes them).
import { recv, tryRecv } from "agent-host:guest/inbox@0.3.0";
import { log as witLog } from "agent-host:guest/log@0.3.0";
import { get as getProvider } from "agent-host:guest/provider@0.3.0";
import { get as getTooling } from "agent-host:guest/tooling@0.3.0";

const MAX_TIMEOUT_MS = 2 ** 32 - 1; // the largest wait inbox.recv takes (a WIT u32)

// -- errors ---------------------------------------------------------------------------------------

/** A failure of a host import: `code` (as the WIT names it), `message`, `data` (JSON text or undefined). */
export class ToolingError extends Error {
  constructor(error) {
    super(String(error.message));
    this.name = "ToolingError";
    this.code = error.code;
    this.data = error.data ?? undefined;
    this.payload = { code: this.code, message: this.message, data: this.data }; // the WIT error record
  }

  toString() {
    return `${this.code}: ${this.message}`;
  }
}

/** `error` as a ToolingError when it is a host import's error (a payload with a code), else as it is. */
function translated(error) {
  if (error instanceof ToolingError) return error;
  const payload = error !== null && typeof error === "object" ? error.payload : undefined;
  if (payload !== null && typeof payload === "object" && typeof payload.code === "string") {
    return new ToolingError(payload);
  }
  return error;
}

/** `action()`, throwing a ToolingError where the host import threw its error. */
function host(action) {
  try {
    return action();
  } catch (error) {
    throw translated(error);
  }
}

// -- values ---------------------------------------------------------------------------------------

function parsed(text, fallback) {
  if (typeof text !== "string") return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A WIT tool-result as `{ name, arguments, raw, structured, content, text }`. */
function toolResult(result) {
  const raw = parsed(result.value, {});
  const content = Array.isArray(raw.content) ? raw.content : [];
  const texts = content.filter((block) => block && block.type === "text").map((block) => block.text ?? "");
  return {
    name: result.name,
    arguments: parsed(result.arguments, {}),
    raw,
    structured: raw.structuredContent ?? undefined,
    content,
    text: texts.join("\n"),
  };
}

/** A WIT tool with its schemas parsed: `{ name, description, inputSchema, outputSchema }`. */
function toolInfo(tool) {
  return {
    name: tool.name,
    description: tool.description ?? undefined,
    inputSchema: parsed(tool.inputSchema, {}),
    outputSchema: tool.outputSchema === undefined ? undefined : parsed(tool.outputSchema, undefined),
  };
}

function resourceInfo(info) {
  return {
    uri: info.uri,
    name: info.name,
    description: info.description ?? undefined,
    mimeType: info.mimeType ?? undefined,
  };
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64Bytes(text) {
  const clean = text.replace(/[^A-Za-z0-9+/]/g, "");
  const bytes = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let count = 0;
  let at = 0;
  for (const char of clean) {
    bits = (bits << 6) | BASE64.indexOf(char);
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes[at++] = (bits >> count) & 0xff;
    }
  }
  return bytes.subarray(0, at);
}

/** A WIT resource-content as `{ uri, mimeType, text, data, raw }` (text and data decoded on access). */
function resource(content) {
  const isText = content.mimeType === undefined || content.mimeType.toLowerCase().startsWith("text/");
  return {
    uri: content.uri,
    mimeType: content.mimeType ?? undefined,
    isText,
    raw: content,
    get text() {
      return isText ? content.content : new TextDecoder().decode(base64Bytes(content.content));
    },
    get data() {
      return isText ? new TextEncoder().encode(content.content) : base64Bytes(content.content);
    },
  };
}

/** A WIT tool-call with its arguments parsed (`{}` when they are not a JSON object); `raw`: the text. */
function toolCall(call) {
  const args = parsed(call.arguments, {});
  return { id: call.id, name: call.name, arguments: isObject(args) ? args : {}, raw: call.arguments };
}

/** A model's whole answer. `message()`: the assistant message that continues the conversation. */
class Reply {
  constructor(result) {
    this.content = result.content ?? undefined;
    this.toolCalls = result.toolCalls.map(toolCall);
    this.finishReason = result.finishReason;
    this.model = result.model;
    this.inputTokens = result.usage.inputTokens;
    this.outputTokens = result.usage.outputTokens;
  }

  message() {
    return { role: "assistant", content: this.content, toolCalls: this.toolCalls };
  }
}

// -- agent ----------------------------------------------------------------------------------------

const TYPES = {
  string: (value) => typeof value === "string",
  number: (value) => typeof value === "number" && Number.isFinite(value),
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === "boolean",
  object: isObject,
  array: Array.isArray,
  null: (value) => value === null,
};

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (Number.isInteger(value)) return "an integer";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function typeProblem(value, type) {
  const wanted = (Array.isArray(type) ? type : [type]).filter((name) => typeof name === "string");
  if (wanted.length === 0 || wanted.some((name) => TYPES[name] === undefined || TYPES[name](value))) return null;
  return `expected ${wanted.join(" or ")}, got ${typeOf(value)}`;
}

/** What is wrong with `value` by `schema`'s top level (`type`, `required`, the `type` of each property), or null. */
function schemaProblem(value, schema) {
  if (!isObject(schema)) return null;
  const top = typeProblem(value, schema.type);
  if (top !== null) return `$: ${top}`;
  if (!isObject(value)) return null;
  for (const key of Array.isArray(schema.required) ? schema.required : []) {
    if (!(key in value)) return `$.${key}: required, missing`;
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, property] of Object.entries(properties)) {
    if (!(key in value) || !isObject(property)) continue;
    const problem = typeProblem(value[key], property.type);
    if (problem !== null) return `$.${key}: ${problem}`;
  }
  return null;
}

function answer(value) {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  // Thrown as strings (the agent's err), as the entry reports a `run` that returns no string.
  if (typeof value.then === "function") {
    throw "agent(fn): fn returned a Promise (fn must not be async: the WIT export is synchronous)";
  }
  let text;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw `agent(fn): fn's answer cannot be written as JSON (${error instanceof Error ? error.message : error})`;
  }
  if (text === undefined) throw `agent(fn): fn returned a ${typeof value}, which has no JSON`;
  return text;
}

/**
 * The guest's `run`: `export const run = agent((input) => ...)` (or `export default agent(...)`).
 * `fn(input)` gets the input text, or its parsed JSON with `{ input: "json" }` or `{ inputSchema }`
 * (checked at its top level). Its answer: a string as it is, undefined/null as "", anything else as JSON.
 */
export function agent(fn, options = {}) {
  if (typeof fn !== "function") throw new TypeError("agent(fn): fn must be a function (input) => answer");
  const schema = options.inputSchema;
  const json = options.input === "json" || schema !== undefined;
  if (options.input !== undefined && options.input !== "json" && options.input !== "text") {
    throw new TypeError(`agent(fn, { input }): input is "text" or "json", not ${JSON.stringify(options.input)}`);
  }
  const run = function run(input) {
    let value = input;
    if (json) {
      try {
        value = JSON.parse(input);
      } catch (error) {
        throw `invalid input: not JSON (${error instanceof Error ? error.message : String(error)})`;
      }
      const problem = schemaProblem(value, schema);
      if (problem !== null) throw `invalid input: it does not match the input schema: ${problem}`;
    }
    return answer(fn(value));
  };
  if (schema !== undefined) run.inputSchema = schema; // said to the host by the entry's `describe`
  return run;
}

// -- toolings -------------------------------------------------------------------------------------

/** A WIT handle obtained on first use; `dropped` once closed (a dropped handle must not be used). */
class Lazy {
  constructor(name, get) {
    this.name = name;
    this.get = get;
    this.current = undefined;
  }

  handle() {
    if (this.current === undefined || this.current.dropped) {
      this.current = { handle: host(() => this.get(this.name)), dropped: false };
    }
    return this.current;
  }

  close() {
    const current = this.current;
    this.current = undefined;
    if (current === undefined || current.dropped) return false;
    current.dropped = true;
    current.handle[Symbol.dispose]();
    return true;
  }
}

/** A call started with `start` (WIT `call-tool`): `id` is the id of its events. */
class Call {
  constructor(held, tool, id) {
    this.id = id;
    this.tool = tool;
    this.held = held;
  }

  /** True until its final event was received or it was cancelled. */
  isOpen() {
    return !this.held.dropped && this.held.handle.isOpen(this.id);
  }

  /** Cancel it upstream; nothing for `id` arrives afterwards. Whether it was open. */
  cancel() {
    return !this.held.dropped && this.held.handle.cancel(this.id);
  }

  /** Answer its open question (an `elicitation` event): "accept" with content, or "decline" / "cancel". */
  respond(action, content) {
    if (this.held.dropped) throw new ToolingError({ code: "not-found", message: `call ${this.id}: its tooling was closed` });
    const text = content === undefined ? undefined : JSON.stringify(content);
    host(() => this.held.handle.respond(this.id, action, text));
  }

  [Symbol.dispose]() {
    this.cancel();
  }
}

/** An active subscription: `id` is the id of its events; `close()` unsubscribes once. */
class Subscription {
  constructor(held, id, target, unsubscribe) {
    this.id = id;
    this.target = target;
    this.held = held;
    this.unsubscribe = unsubscribe;
  }

  get closed() {
    return this.unsubscribe === undefined;
  }

  close() {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    return unsubscribe !== undefined && !this.held.dropped && unsubscribe.call(this.held.handle, this.id);
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/** The value a tool call gives `demo.NAME(args)`: its structured content, else its text. */
function valueOf(result) {
  return result.structured !== undefined ? result.structured : result.text;
}

function argumentsText(tool, args) {
  if (args === undefined) return "{}";
  if (!isObject(args)) throw new TypeError(`the arguments of tool ${JSON.stringify(tool)} must be an object`);
  return JSON.stringify(args);
}

// Its own fields are private: every public name of the class (and of Object.prototype) is not a tool's.
class Tooling {
  #lazy;

  constructor(name) {
    this.#lazy = new Lazy(name, getTooling);
  }

  get name() {
    return this.#lazy.name;
  }

  get kind() {
    return this.#lazy.handle().handle.kind();
  }

  /** Call `tool` and wait (WIT `call-tool-blocking`): the whole result. */
  call(tool, args) {
    const text = argumentsText(tool, args);
    const held = this.#lazy.handle();
    return toolResult(host(() => held.handle.callToolBlocking(tool, text)));
  }

  /** A function calling `tool`: for a tool whose name is also a method's. */
  tool(tool) {
    return (args) => valueOf(this.call(tool, args));
  }

  /** Start a call of `tool` (WIT `call-tool`): a `Call`; its events arrive in the inbox. */
  start(tool, args) {
    const text = argumentsText(tool, args);
    const held = this.#lazy.handle();
    return new Call(held, tool, host(() => held.handle.callTool(tool, text)));
  }

  tools() {
    const held = this.#lazy.handle();
    return host(() => held.handle.listTools()).map(toolInfo);
  }

  resources() {
    const held = this.#lazy.handle();
    return host(() => held.handle.listResources()).map(resourceInfo);
  }

  read(uri) {
    const held = this.#lazy.handle();
    return resource(host(() => held.handle.readResource(uri)));
  }

  subscribe(uri) {
    const held = this.#lazy.handle();
    const id = host(() => held.handle.subscribeResource(uri));
    return new Subscription(held, id, uri, held.handle.unsubscribeResource);
  }

  subscribeResourceList() {
    const held = this.#lazy.handle();
    const id = host(() => held.handle.subscribeResourceList());
    return new Subscription(held, id, "resource list", held.handle.unsubscribeResourceList);
  }

  subscribeToolList() {
    const held = this.#lazy.handle();
    const id = host(() => held.handle.subscribeToolList());
    return new Subscription(held, id, "tool list", held.handle.unsubscribeToolList);
  }

  /** Drop the WIT handle (the host cancels its open calls and subscriptions); a later use gets a new one. */
  close() {
    return this.#lazy.close();
  }

  [Symbol.dispose]() {
    this.close();
  }
}

const NOT_TOOLS = new Set(["then", "toJSON"]); // asked by `await` and JSON.stringify: never tools

/**
 * The tooling `name`, connected on first use (never while the module is evaluated at build time).
 * `demo.add({ a: 2, b: 3 })` calls tool `add` and gives its structured content, else its text.
 */
export function tooling(name) {
  const target = new Tooling(String(name));
  return new Proxy(target, {
    get(object, key) {
      if (typeof key === "symbol" || key in object) {
        const value = Reflect.get(object, key, object);
        return typeof value === "function" ? value.bind(object) : value;
      }
      if (NOT_TOOLS.has(key)) return undefined;
      return object.tool(key);
    },
  });
}

// -- the inbox ------------------------------------------------------------------------------------

const FINAL = new Set(["tool-result", "error", "chat-end"]);

/** An envelope as a typed event: `{ type, id, ... }`. */
function typed(envelope) {
  const { id, event } = envelope;
  const value = event.val;
  switch (event.tag) {
    case "progress":
      return { type: "progress", id, progress: value.progress, total: value.total, message: value.message };
    case "tool-result":
      return { type: "result", id, result: toolResult(value) };
    case "error":
      return { type: "error", id, error: new ToolingError(value) };
    case "resource-updated":
      return { type: "resource-updated", id, uri: value.uri, resource: resource(value) };
    case "resource-list-updated":
      return { type: "resource-list-updated", id, resources: value.map(resourceInfo) };
    case "tool-list-updated":
      return { type: "tool-list-updated", id, tools: value.map(toolInfo) };
    case "elicitation":
      return { type: "elicitation", id, message: value.message, schema: parsed(value.requestedSchema, {}) };
    case "chat-delta":
      return {
        type: "chat-delta",
        id,
        content: value.content,
        toolCall: value.toolCall === undefined ? undefined : toolCall(value.toolCall),
      };
    case "chat-end":
      return { type: "chat-end", id, reply: new Reply(value) };
    default:
      return { type: event.tag, id, value };
  }
}

function receive(timeoutMs) {
  if (timeoutMs === undefined || timeoutMs === null) return recv(undefined);
  if (timeoutMs <= 0) return tryRecv();
  return recv(Math.min(Math.round(timeoutMs), MAX_TIMEOUT_MS));
}

/** The inbox as an iterator of typed events; `timedOut` and `pending` (ids of `until` not ended) after it. */
class Events {
  constructor(timeoutMs, until) {
    this.timeoutMs = timeoutMs;
    const several = until === undefined || until === null ? [] : Array.isArray(until) ? until : [until];
    this.pending = new Set(several.map((item) => (typeof item === "string" ? item : item.id)));
    this.watching = until !== undefined && until !== null;
    this.timedOut = false;
    this.ended = false;
  }

  [Symbol.iterator]() {
    return this;
  }

  next() {
    if (this.ended || (this.watching && this.pending.size === 0)) {
      this.ended = true;
      return { done: true, value: undefined };
    }
    const envelope = receive(this.timeoutMs);
    if (envelope === undefined) {
      this.ended = this.timedOut = true;
      return { done: true, value: undefined };
    }
    if (FINAL.has(envelope.event.tag)) this.pending.delete(envelope.id);
    return { done: false, value: typed(envelope) };
  }

  return() {
    this.ended = true;
    return { done: true, value: undefined };
  }
}

/**
 * Iterate the inbox: `for (const event of events(5000)) switch (event.type) { ... }`. Ends when
 * nothing arrives within `timeoutMs` (undefined: the host's maximum wait; 0: only what waits now),
 * or right after the final event (result, error, chat-end) of every call of `until`. `events({ until })`:
 * the host's maximum wait.
 */
export function events(timeoutMs, options = {}) {
  if (timeoutMs !== null && typeof timeoutMs === "object") return new Events(undefined, timeoutMs.until); // events({ until })
  return new Events(timeoutMs, options.until);
}

// -- models ---------------------------------------------------------------------------------------

function witToolCall(call) {
  const text = typeof call.raw === "string" ? call.raw : typeof call.arguments === "string" ? call.arguments
    : JSON.stringify(call.arguments ?? {});
  return { id: String(call.id), name: String(call.name), arguments: text };
}

function witMessage(message) {
  if (typeof message === "string") return { role: "user", content: message, toolCalls: [] };
  return {
    role: message.role ?? "user",
    content: message.content ?? undefined,
    toolCalls: (message.toolCalls ?? []).map(witToolCall),
    toolCallId: message.toolCallId ?? undefined,
  };
}

function witTool(tool) {
  const schema = (value) => (value === undefined || typeof value === "string" ? value : JSON.stringify(value));
  return {
    name: tool.name,
    description: tool.description ?? undefined,
    inputSchema: schema(tool.inputSchema) ?? "{}",
    outputSchema: schema(tool.outputSchema ?? undefined),
  };
}

function witRequest(messages, options) {
  const list = typeof messages === "string" ? [messages] : messages;
  const tools = options.tools instanceof Tooling ? options.tools.tools() : options.tools ?? [];
  return {
    model: options.model ?? undefined,
    messages: list.map(witMessage),
    tools: tools.map(witTool),
    maxTokens: options.maxTokens ?? undefined,
    temperature: options.temperature ?? undefined,
    responseSchema: options.schema === undefined ? undefined : JSON.stringify(options.schema),
  };
}

/** A streamed answer: iterate for text pieces (strings) and whole tool calls; `reply` once it ended. */
class Stream {
  constructor(held, id, timeoutMs) {
    this.id = id;
    this.reply = undefined;
    this.held = held;
    this.timeoutMs = timeoutMs;
  }

  *[Symbol.iterator]() {
    while (this.reply === undefined) {
      const envelope = receive(this.timeoutMs);
      if (envelope === undefined) {
        this.cancel();
        throw new ToolingError({ code: "timeout", message: `the stream sent nothing in ${this.timeoutMs} ms` });
      }
      if (envelope.id !== this.id) continue; // another call's envelope: this loop is the only reader
      const event = envelope.event;
      if (event.tag === "chat-delta") {
        if (event.val.content) yield event.val.content;
        if (event.val.toolCall !== undefined) yield toolCall(event.val.toolCall);
      } else if (event.tag === "chat-end") {
        this.reply = new Reply(event.val);
      } else if (event.tag === "error") {
        throw new ToolingError(event.val);
      }
    }
  }

  /** Close it upstream; whether it was open. */
  cancel() {
    return !this.held.dropped && this.held.handle.cancel(this.id);
  }

  [Symbol.dispose]() {
    if (this.reply === undefined) this.cancel();
  }
}

class Provider {
  #lazy;

  constructor(name) {
    this.#lazy = new Lazy(name, getProvider);
  }

  get name() {
    return this.#lazy.name;
  }

  get kind() {
    return this.#lazy.handle().handle.kind();
  }

  /** The models this agent may ask for. */
  models() {
    const held = this.#lazy.handle();
    return host(() => held.handle.models());
  }

  /** Ask the model and wait for its whole answer (a `Reply`). */
  chat(messages, options = {}) {
    const request = witRequest(messages, options);
    const held = this.#lazy.handle();
    return new Reply(host(() => held.handle.chat(request)));
  }

  /** Ask for a streamed answer: a `Stream` of its pieces (refused at once, or failing while iterated). */
  stream(messages, options = {}) {
    const request = witRequest(messages, options);
    const held = this.#lazy.handle();
    return new Stream(held, host(() => held.handle.chatStream(request)), options.timeoutMs ?? 60000);
  }

  close() {
    return this.#lazy.close();
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/** The provider `name`, obtained on first use. */
export function provider(name) {
  return new Provider(String(name));
}

/** What a tool answered, as text for the model: its structured content as JSON, else its text; its error. */
function toolAnswer(tools, call) {
  try {
    const result = tools.call(call.name, call.arguments);
    return result.structured !== undefined ? JSON.stringify(result.structured) : result.text;
  } catch (error) {
    if (error instanceof ToolingError) return `error: ${error.message}`;
    throw error;
  }
}

/**
 * Answer `prompt` with the model, letting it call `tools`' tools (none without): each chat's calls
 * run through the tooling (a failure goes back to the model as the tool's answer), until an answer
 * without calls, or `maxSteps` chats (then ToolingError limit-exceeded). The answer's text.
 */
export function runAgent(llm, tools, prompt, options = {}) {
  const { system, model, maxSteps = 8, maxTokens } = options;
  const offered = tools ? tools.tools() : [];
  const messages = system ? [{ role: "system", content: system }] : [];
  messages.push({ role: "user", content: prompt });
  for (let step = 0; step < maxSteps; step++) {
    const reply = llm.chat(messages, { model, tools: offered, maxTokens });
    if (reply.toolCalls.length === 0 || !tools) return reply.content ?? "";
    messages.push(reply.message());
    for (const call of reply.toolCalls) {
      messages.push({ role: "tool", toolCallId: call.id, content: toolAnswer(tools, call) });
    }
  }
  throw new ToolingError({ code: "limit-exceeded", message: `no answer after ${maxSteps} chats (maxSteps)` });
}

// -- log ------------------------------------------------------------------------------------------

function line(parts) {
  return parts
    .map((part) => {
      if (typeof part === "string") return part;
      try {
        return JSON.stringify(part) ?? String(part);
      } catch {
        return String(part);
      }
    })
    .join(" ");
}

/** Messages into the host's log, tagged with the agent's name: `log.info("...")`. */
export const log = Object.freeze({
  trace: (...parts) => witLog("trace", line(parts)),
  debug: (...parts) => witLog("debug", line(parts)),
  info: (...parts) => witLog("info", line(parts)),
  warn: (...parts) => witLog("warn", line(parts)),
  error: (...parts) => witLog("error", line(parts)),
});
