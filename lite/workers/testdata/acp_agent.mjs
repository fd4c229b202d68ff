// An ACP agent for the workers tests, built with the reference
// TypeScript SDK (@agentclientprotocol/sdk) and modelled on its example
// agent (src/examples/agent.ts): it streams message chunks and a tool
// call, asks one permission (to run "npm test"), writes a file through
// the client when allowed, and ends its turn; session/cancel aborts it.
// The SDK's entry module is given in ACP_SDK (the npm package sits in
// .peers, outside this tree).
import { randomBytes } from "node:crypto"; // no global crypto on Node 18, Debian 12's
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
const sessions = new Map();

const say = (cx, sessionId, text) =>
  cx.client.notify("session/update", {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });

async function turn(cx, sessionId, cwd, signal) {
  await say(cx, sessionId, "Reading ");
  await say(cx, sessionId, "the project.");
  await cx.client.notify("session/update", {
    sessionId,
    update: {
      sessionUpdate: "tool_call", toolCallId: "call_1", title: "Reading project files", kind: "read",
      status: "pending", locations: [{ path: cwd + "/README.md" }], rawInput: { path: cwd + "/README.md" },
    },
  });
  const toolCall = {
    toolCallId: "call_2", title: "Run the tests", kind: "execute", status: "pending",
    rawInput: { command: "npm test" },
  };
  await cx.client.notify("session/update", { sessionId, update: { sessionUpdate: "tool_call", ...toolCall } });
  const res = await cx.client.request("session/request_permission", {
    sessionId, toolCall,
    options: [
      { kind: "allow_once", name: "Allow", optionId: "allow" },
      { kind: "reject_once", name: "Skip", optionId: "reject" },
    ],
  });
  if (signal.aborted || res.outcome.outcome === "cancelled") {
    return "cancelled";
  }
  if (res.outcome.optionId === "allow") {
    await cx.client.request("fs/write_text_file", { sessionId, path: cwd + "/from-node.txt", content: "tests ran\n" });
    await say(cx, sessionId, "Tests allowed; wrote from-node.txt.");
  } else {
    await say(cx, sessionId, "Tests rejected; skipped.");
  }
  return "end_turn";
}

const app = acp.agent({ name: "agnx-test-agent" })
  .onRequest("initialize", async () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    authMethods: [],
  }))
  .onRequest("session/new", async ({ params }) => {
    const sessionId = "node-" + randomBytes(8).toString("hex");
    sessions.set(sessionId, { cwd: params.cwd, abort: null });
    return { sessionId };
  })
  .onRequest("session/prompt", async (cx) => {
    const s = sessions.get(cx.params.sessionId);
    if (!s) {
      throw acp.RequestError.invalidParams({ details: "no such session" });
    }
    s.abort = new AbortController();
    return { stopReason: await turn(cx, cx.params.sessionId, s.cwd, s.abort.signal) };
  })
  .onNotification("session/cancel", async ({ params }) => {
    sessions.get(params.sessionId)?.abort?.abort();
  });

app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
