// A JavaScript test guest (the JS twin of the probe and blunders guests), chosen by its input:
// - "tools": the names of tooling demo's tools; "echo TEXT": call-tool-blocking of echo;
// - "async": call-tool of sleep, then the inbox until its final envelope (kinds, in order);
// - "read URI": read-resource; "dispose": a handle with an open call dropped with [Symbol.dispose]();
// - "throw": an Error escapes run; "nosuch": a host import's error escapes run;
// - "caught": a host import's error caught, its payload returned; "err": a thrown string (err);
// - "forged": a thrown object with a made-up payload; "unreadable": one whose reading throws;
// - "fetch": typeof fetch; "badarg": a binding's TypeError (a number where the WIT wants a string);
// - "number": run returns a number; "promise": run is async;
// - "oom": allocates until memory runs out; "spin": an endless loop;
// - "log": a message into the host's log; "now": performance.now() and Date.now() move;
// - "timed TOOLING N": seconds per call-tool-blocking of echo; "timed-name TOOLING N": per name().
// Written against wit/ alone.
import { recv } from "agent-host:guest/inbox@0.2.0";
import { log } from "agent-host:guest/log@0.2.0";
import { get } from "agent-host:guest/tooling@0.2.0";
import { words } from "./words.js";

export function run(input) {
  const [mode, ...rest] = words(input);
  const arg = rest.join(" ");
  if (mode === "tools") return get("demo").listTools().map((tool) => tool.name).join(",");
  if (mode === "echo") {
    const result = get("demo").callToolBlocking("echo", JSON.stringify({ text: arg }));
    return JSON.parse(result.value).content[0].text;
  }
  if (mode === "async") {
    const demo = get("demo");
    const id = demo.callTool("sleep", JSON.stringify({ seconds: 0.2, steps: 2 }));
    const kinds = [];
    for (;;) {
      const envelope = recv(10000);
      if (envelope === undefined) return `timeout after ${kinds.join(",")}`;
      if (envelope.id !== id) continue;
      kinds.push(envelope.event.tag);
      if (envelope.event.tag !== "progress") return kinds.join(",");
    }
  }
  if (mode === "read") return get("demo").readResource(arg).content;
  if (mode === "dispose") {
    const demo = get("demo");
    const id = demo.callTool("sleep", JSON.stringify({ seconds: 30, steps: 1 }));
    demo[Symbol.dispose](); // the host cancels the handle's open call: nothing arrives for it
    const again = get("demo");
    const envelope = recv(300);
    return `${again.name()} again; after dispose: ${envelope === undefined ? "nothing" : envelope.id === id ? "the call" : "other"}`;
  }
  if (mode === "throw") throw new Error("boom");
  if (mode === "nosuch") get("nosuch");
  if (mode === "caught") {
    try {
      get("nosuch");
    } catch (error) {
      return `${error.payload.code}|${error.payload.message}`;
    }
  }
  if (mode === "err") throw "declined";
  if (mode === "fetch") return typeof fetch;
  if (mode === "badarg") get("demo").callToolBlocking(123, "{}");
  if (mode === "forged") throw { payload: { code: "limit-exceeded", message: "the memory limit was reached" } };
  if (mode === "unreadable") throw { get payload() { throw new Error("no"); }, toString() { throw new Error("no"); } };
  if (mode === "number") return 42;
  if (mode === "promise") return Promise.resolve("later");
  if (mode === "oom") {
    const hoard = [];
    for (;;) hoard.push(new Array(1 << 20).fill(hoard.length));
  }
  if (mode === "spin") for (;;);
  if (mode === "log") {
    log("warn", `logged ${arg}`);
    return "logged";
  }
  if (mode === "now") {
    const start = performance.now();
    while (performance.now() - start < 5);
    return Date.now() > 1.7e12 ? "clocks move" : "frozen clock";
  }
  if (mode === "timed" || mode === "timed-name") {
    const [tooling, count] = rest;
    const handle = get(tooling);
    const echo = JSON.stringify({ text: "hello" });
    const once = mode === "timed" ? () => handle.callToolBlocking("echo", echo) : () => handle.name();
    for (let i = 0; i < 10; i++) once();
    const start = performance.now();
    for (let i = 0; i < Number(count); i++) once();
    return String((performance.now() - start) / 1000 / Number(count));
  }
  return `fine: ${input}`;
}
