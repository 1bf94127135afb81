// TypeScript declarations of agentlib, the library `agent-host build` bundles into every JavaScript
// guest (`import { agent, tooling } from "agentlib"`). Written beside the WIT declarations by
// `agent-host bindings --lang ts`, so that editors and `tsc -p GUEST/jsconfig.json` check a guest using it.
declare module "agentlib" {
  import type { ErrorCode, ElicitAction, ResourceContent, Role, FinishReason } from "agent-host:guest/types@0.3.0";

  /** A JSON value. */
  export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

  /** The arguments of a tool call: a JSON object. */
  export type Arguments = Record<string, unknown>;

  /** A failure of a host import. `toString()` is "code: message". */
  export class ToolingError extends Error {
    constructor(error: { code: ErrorCode | string; message: string; data?: string });
    /** As the WIT names it: "not-found", "tool-failed", ... */
    readonly code: ErrorCode;
    /** JSON text with details (for "tool-failed", the whole MCP result), or undefined. */
    readonly data: string | undefined;
    /** The WIT error record. */
    readonly payload: { code: ErrorCode; message: string; data: string | undefined };
    toString(): string;
  }

  // -- agent --------------------------------------------------------------------------------------

  /** A JSON Schema (only its top level is checked: `type`, `required`, each property's `type`). */
  export type Schema = { [key: string]: unknown };

  export interface AgentOptions {
    /** "json": `fn` gets the input parsed (default "text": the input as it is). */
    input?: "text" | "json";
    /** Parse the input as JSON and check it against this schema's top level. */
    inputSchema?: Schema;
  }

  /**
   * The guest's `run`: `export const run = agent((input) => ...)` (or `export default agent(...)`).
   * The answer: a string as it is, undefined or null as "", anything else as its JSON. An input
   * that is not JSON or breaks the schema is the agent's error ("invalid input: ...").
   */
  export function agent(fn: (input: string) => unknown): (input: string) => string;
  export function agent(fn: (input: string) => unknown, options: { input: "text" }): (input: string) => string;
  export function agent<T = any>(fn: (input: T) => unknown, options: AgentOptions): (input: string) => string;

  // -- toolings -----------------------------------------------------------------------------------

  /** A tool as the server lists it, its schemas parsed. */
  export interface ToolInfo {
    name: string;
    description: string | undefined;
    inputSchema: Schema;
    outputSchema: Schema | undefined;
  }

  /** A resource as the server lists it. */
  export interface ResourceInfo {
    uri: string;
    name: string;
    description: string | undefined;
    mimeType: string | undefined;
  }

  /** A resource's content: `text` (binary content decoded as UTF-8) and `data` (the bytes). */
  export interface Resource {
    uri: string;
    mimeType: string | undefined;
    /** Whether the host sent it as text (no MIME type, or text/*), not base64. */
    isText: boolean;
    readonly text: string;
    readonly data: Uint8Array;
    /** The WIT resource-content. */
    raw: ResourceContent;
  }

  /** A content block of a tool's result (MCP): `{ type: "text", text }`, an image, ... */
  export interface ContentBlock {
    type: string;
    text?: string;
    [key: string]: unknown;
  }

  /** The outcome of a tool call. */
  export interface ToolResult {
    /** The tool called. */
    name: string;
    /** The arguments it was called with. */
    arguments: Arguments;
    /** The MCP CallToolResult, as the host sent it. */
    raw: { content?: ContentBlock[]; structuredContent?: any; isError?: boolean; [key: string]: unknown };
    /** Its structuredContent, undefined when the tool gave none. */
    structured: any;
    content: ContentBlock[];
    /** The text of its text blocks, joined with "\n". */
    text: string;
  }

  /** A call started with `start`: the events of `id` are its own. */
  export interface Call {
    readonly id: string;
    readonly tool: string;
    /** True until its final event was received or it was cancelled. */
    isOpen(): boolean;
    /** Cancel it upstream (nothing for `id` arrives afterwards); whether it was open. */
    cancel(): boolean;
    /** Answer its open question (an "elicitation" event). */
    respond(action: ElicitAction, content?: Record<string, unknown>): void;
    [Symbol.dispose](): void;
  }

  /** An active subscription: the events of `id` are its own. */
  export interface Subscription {
    readonly id: string;
    /** The URI, "resource list" or "tool list". */
    readonly target: string;
    readonly closed: boolean;
    /** Unsubscribe (once); whether it was active. */
    close(): boolean;
    [Symbol.dispose](): void;
  }

  /** `demo.NAME(args)`: the tool's structured content when it gives one, else its text. */
  export type ToolFunction = (args?: Arguments) => any;

  /** The named methods of a tooling; any other name is a tool (`demo.add({ a: 2, b: 3 })`). */
  export interface ToolingMethods {
    /** The name it was asked by. */
    readonly name: string;
    /** "mcp", "python" or "mock" (connects). */
    readonly kind: string;
    /** Call `tool` and wait: the whole result. */
    call(tool: string, args?: Arguments): ToolResult;
    /** A function calling `tool`, for a tool named like a method. */
    tool(tool: string): ToolFunction;
    /** Start a call; its events arrive in the inbox under `call.id`. */
    start(tool: string, args?: Arguments): Call;
    tools(): ToolInfo[];
    resources(): ResourceInfo[];
    read(uri: string): Resource;
    /** Each change of the resource arrives as a "resource-updated" event. */
    subscribe(uri: string): Subscription;
    /** Each change of the resource list arrives as a "resource-list-updated" event. */
    subscribeResourceList(): Subscription;
    /** Each change of the tool list arrives as a "tool-list-updated" event. */
    subscribeToolList(): Subscription;
    /** Drop the handle (the host cancels its open calls); a later use gets a new one. Whether it was held. */
    close(): boolean;
    [Symbol.dispose](): void;
  }

  export type Tooling = ToolingMethods & { readonly [tool: string]: ToolFunction };

  /** The tooling `name`, connected on first use. */
  export function tooling(name: string): Tooling;

  // -- the inbox ----------------------------------------------------------------------------------

  export interface ProgressEvent {
    type: "progress";
    id: string;
    progress: number;
    total: number | undefined;
    message: string | undefined;
  }
  /** A call's final event. */
  export interface ResultEvent {
    type: "result";
    id: string;
    result: ToolResult;
  }
  /** A call's (or stream's) final event. */
  export interface ErrorEvent {
    type: "error";
    id: string;
    error: ToolingError;
  }
  export interface ResourceUpdatedEvent {
    type: "resource-updated";
    id: string;
    uri: string;
    resource: Resource;
  }
  export interface ResourceListUpdatedEvent {
    type: "resource-list-updated";
    id: string;
    resources: ResourceInfo[];
  }
  export interface ToolListUpdatedEvent {
    type: "tool-list-updated";
    id: string;
    tools: ToolInfo[];
  }
  /** A question of the call's server: answer it with `call.respond(...)`. */
  export interface ElicitationEvent {
    type: "elicitation";
    id: string;
    message: string;
    schema: Schema;
  }
  export interface ChatDeltaEvent {
    type: "chat-delta";
    id: string;
    content: string | undefined;
    toolCall: ToolCall | undefined;
  }
  /** A stream's final event. */
  export interface ChatEndEvent {
    type: "chat-end";
    id: string;
    reply: Reply;
  }
  export type Event =
    | ProgressEvent
    | ResultEvent
    | ErrorEvent
    | ResourceUpdatedEvent
    | ResourceListUpdatedEvent
    | ToolListUpdatedEvent
    | ElicitationEvent
    | ChatDeltaEvent
    | ChatEndEvent;

  /** What `until` takes: a call (or stream) or its id, or several. */
  export type Until = string | { readonly id: string } | Array<string | { readonly id: string }>;

  export interface Events extends IterableIterator<Event> {
    /** Whether it ended because nothing arrived in time. */
    readonly timedOut: boolean;
    /** The ids of `until` whose final event has not arrived. */
    readonly pending: Set<string>;
  }

  /**
   * The inbox as typed events. Ends when nothing arrives within `timeoutMs` (undefined: the host's
   * maximum wait; 0: only what waits now), or right after the final event of every id of `until`.
   */
  export function events(timeoutMs?: number, options?: { until?: Until }): Events;
  /** `events(undefined, { until })`. */
  export function events(options: { until?: Until }): Events;

  // -- models -------------------------------------------------------------------------------------

  /** A model's request to call a tool, its arguments parsed ({} when not a JSON object). */
  export interface ToolCall {
    id: string;
    name: string;
    arguments: Arguments;
    /** The arguments as the model wrote them. */
    raw: string;
  }

  export interface Message {
    role: Role;
    content?: string | null;
    /** An assistant message's calls; each `arguments` an object or JSON text. */
    toolCalls?: Array<{ id: string; name: string; arguments: Arguments | string; raw?: string }>;
    /** A tool message: the id of the call it answers. */
    toolCallId?: string;
  }

  /** A model's whole answer. */
  export interface Reply {
    content: string | undefined;
    toolCalls: ToolCall[];
    finishReason: FinishReason;
    model: string;
    inputTokens: number;
    outputTokens: number;
    /** This answer as the assistant message that continues the conversation. */
    message(): Message;
  }

  /** A tool offered to the model: as `tools()` gives it (or the WIT record, schemas as text). */
  export interface OfferedTool {
    name: string;
    description?: string;
    inputSchema: Schema | string;
    outputSchema?: Schema | string;
  }

  export interface ChatOptions {
    /** Default: the provider's model. */
    model?: string;
    /** The tools the model may ask to call: a list, or a tooling (its tools). */
    tools?: OfferedTool[] | Tooling;
    maxTokens?: number;
    temperature?: number;
    /** A JSON Schema the answer's content must match (structured output). */
    schema?: Schema;
  }

  /** A streamed answer: text pieces and whole tool calls; `reply` once the iteration ended. */
  export interface Stream extends Iterable<string | ToolCall> {
    readonly id: string;
    readonly reply: Reply | undefined;
    /** Close it upstream; whether it was open. */
    cancel(): boolean;
    [Symbol.dispose](): void;
  }

  export interface Provider {
    readonly name: string;
    /** "openai", "anthropic" or "mock" (connects). */
    readonly kind: string;
    /** The models this agent may ask for. */
    models(): string[];
    /** Ask and wait for the whole answer. A string is one user message. */
    chat(messages: string | Array<Message | string>, options?: ChatOptions): Reply;
    /** Ask for a streamed answer (`timeoutMs`: the longest wait for its next piece, default 60 000). */
    stream(messages: string | Array<Message | string>, options?: ChatOptions & { timeoutMs?: number }): Stream;
    /** Drop the handle (its open streams are cancelled); whether it was held. */
    close(): boolean;
    [Symbol.dispose](): void;
  }

  /** The provider `name`, obtained on first use. */
  export function provider(name: string): Provider;

  export interface AgentLoopOptions {
    system?: string;
    model?: string;
    /** Chats at most (default 8); then a ToolingError "limit-exceeded". */
    maxSteps?: number;
    maxTokens?: number;
  }

  /** Answer `prompt` with the model, running the tool calls it asks for through `tools`: the answer's text. */
  export function runAgent(llm: Provider, tools: Tooling | null | undefined, prompt: string, options?: AgentLoopOptions): string;

  // -- log ----------------------------------------------------------------------------------------

  type LogFunction = (...parts: unknown[]) => void;

  /** Messages into the host's log (its stderr), tagged with the agent's name. */
  export const log: {
    readonly trace: LogFunction;
    readonly debug: LogFunction;
    readonly info: LogFunction;
    readonly warn: LogFunction;
    readonly error: LogFunction;
  };
}
