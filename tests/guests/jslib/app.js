// A JavaScript test guest written with agentlib (the library every JavaScript build bundles), against
// the demo tooling and a mock provider "mock". Its input is JSON checked by the input schema:
// - { text, a, b }: one report of everything below (a JSON object);
// - { text, mode: "escape" }: the demo's `fail` tool's ToolingError escapes `run`.
// The report: the parsed input, tool objects' calls (structured content, text, the whole result,
// a name taken by a method), a failing call's ToolingError caught, the tooling's name, kind and
// tools, a text and a binary resource, a started call's typed events until its final one, a
// subscription's resource-updated event, a chat, the tool loop (runAgent), a stream, and the library's
// own input checks and answers. Typed with JSDoc so that it checks (tsc, strict) against the
// declarations `agent-host bindings --lang ts` writes.
import { agent, events, log, provider, runAgent, tooling, ToolingError } from "agentlib";

const demo = tooling("demo"); // lazy: nothing is asked of the host while the module is built
const llm = provider("mock");

const SCHEMA = {
  type: "object",
  required: ["text"],
  properties: { text: { type: "string" }, a: { type: "number" }, b: { type: "number" }, mode: { type: "string" } },
};

/** @param {unknown} error */
function caught(error) {
  if (!(error instanceof ToolingError)) throw error;
  return { code: error.code, text: String(error), message: error.message, data: error.data !== undefined };
}

/** @param {import("agentlib").Call} call */
function typedEvents(call) {
  /** @type {string[]} */
  const seen = [];
  for (const event of events(10000, { until: call })) {
    if (event.id !== call.id) continue;
    switch (event.type) {
      case "progress":
        seen.push(`progress ${event.progress}/${event.total}`);
        break;
      case "result":
        seen.push(`result ${event.result.text}`);
        break;
      case "error":
        seen.push(`error ${event.error.code}`);
        break;
      default:
        seen.push(event.type);
    }
  }
  return seen;
}

function noteChange() {
  const note = demo.subscribe("demo://note");
  demo.set_note({ text: "changed by jslib" });
  let text = "nothing";
  for (const event of events(5000)) {
    if (event.type === "resource-updated" && event.id === note.id) {
      text = `${event.uri}: ${event.resource.text}`;
      break;
    }
  }
  return { text, closed: note.close() };
}

/** @param {string} text */
function rejected(text) {
  const strict = agent((value) => value, { inputSchema: SCHEMA });
  try {
    return `accepted ${strict(text)}`;
  } catch (error) {
    return String(error);
  }
}

/** @param {unknown} value */
function answered(value) {
  try {
    return agent(() => value)("");
  } catch (error) {
    return `err ${String(error)}`;
  }
}

export default agent(
  (input) => {
    if (input.mode === "escape") return demo.fail({ message: "escaped on purpose" });
    log.info("jslib got", input.text);
    const whole = demo.call("add", { a: 1, b: 1 });
    const logo = demo.read("demo://logo.png");
    const slow = demo.start("sleep", { seconds: 0.2, steps: 2 });
    const started = typedEvents(slow);
    const stream = llm.stream("stream it");
    /** @type {string[]} */
    const pieces = [];
    for (const piece of stream) if (typeof piece === "string") pieces.push(piece);
    const chat = llm.chat([{ role: "user", content: "hello" }], { maxTokens: 100 });
    let failed;
    try {
      demo.fail({ message: "no luck" });
    } catch (error) {
      failed = caught(error);
    }
    return {
      input,
      sum: demo.add({ a: input.a, b: input.b }),
      echo: demo.echo({ text: input.text }),
      whole: { name: whole.name, arguments: whole.arguments, structured: whole.structured, text: whole.text },
      viaTool: demo.tool("echo")({ text: "by tool()" }), // how a tool named like a method is called
      failed,
      meta: { name: demo.name, kind: demo.kind, tools: demo.tools().map((tool) => tool.name) },
      readme: demo.read("demo://readme").text.split("\n")[0],
      logo: { mimeType: logo.mimeType, isText: logo.isText, bytes: logo.data.length, magic: logo.text.slice(1, 4) },
      resources: demo.resources().map((resource) => resource.uri),
      started: { seen: started, open: slow.isOpen() },
      note: noteChange(),
      stream: { pieces: pieces.join(""), reply: stream.reply?.content, finish: stream.reply?.finishReason },
      chat: { content: chat.content, finish: chat.finishReason, tokens: [chat.inputTokens, chat.outputTokens] },
      loop: runAgent(llm, demo, "What is 2 + 3?", { system: "Use the tools." }),
      inputs: ["not json", '{"a": 1}', '{"text": 3}', "[]", '{"text": "ok"}'].map(rejected),
      answers: [undefined, null, { n: 1 }, 7, Promise.resolve("later"), 1n].map(answered),
    };
  },
  { inputSchema: SCHEMA },
);
