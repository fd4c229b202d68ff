// A small ACP client on the reference SDK (@agentclientprotocol/sdk): it
// starts the agent given as arguments, runs initialize, session/new and
// one session/prompt (the text in $ACP_PROMPT), answers permission
// requests with allow_once, and prints what it got as one JSON object.
// Usage: node acp_client.mjs PEERS_DIR AGENT [ARGS...], where PEERS_DIR
// holds node_modules/@agentclientprotocol/sdk.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [peers, cmd, ...args] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(peers), "package.json")).resolve("@agentclientprotocol/sdk");
const acp = await import(pathToFileURL(sdk).href);

const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
let text = "";
const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    const u = params.update;
    updates.push(u.sessionUpdate + (u.toolCallId ? " " + u.status : ""));
    if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") text += u.content.text;
  })
  .onRequest("session/request_permission", ({ params }) => {
    updates.push("request_permission " + params.options.map((o) => o.kind).join(","));
    return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once").optionId } };
  });

const out = await app.connectWith(stream, async (agent) => {
  const init = await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const session = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
  const resp = await agent.request("session/prompt", {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: process.env.ACP_PROMPT || "hello" }],
  });
  let unknown;
  try {
    await agent.request("no/such/method", {});
  } catch (e) {
    unknown = e.code;
  }
  return {
    protocolVersion: init.protocolVersion,
    loadSession: init.agentCapabilities?.loadSession ?? false,
    agentName: init.agentInfo?.name,
    sessionId: session.sessionId,
    stopReason: resp.stopReason,
    unknownMethodCode: unknown,
    text,
    updates,
  };
});
child.stdin.end();
process.stdout.write(JSON.stringify(out) + "\n");
await new Promise((resolve) => child.on("exit", resolve));
