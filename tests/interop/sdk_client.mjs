// Drive the Vault MCP server with the official MCP TypeScript SDK (a client we did not write).
//
// Reads a plan as JSON on stdin:
//   {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "token": "..." | null,
//    "headers": {...} | null, "calls": [{"name": "read", "arguments": {...}}, ...],
//    "texts": true (also get every prompt and read every resource) | absent}
//   {"transport": "stdio", "command": "node", "args": [...], "env": {...}, "calls": [...]}
// lists the tools, makes each call in order (skipping, and saying so, any call whose tool
// the server does not list), and prints one JSON report on stdout. Assertions live in
// tests/test_interop_node.py; this script only reports what the SDK saw.
// Exit status: 0 when the session worked (tool errors are results, not failures), 2 when
// connecting or a protocol request failed (the report then holds {"error": ...}).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readFileSync } from "node:fs";

const REQUEST_TIMEOUT_MS = 15000;

function makeTransport(plan) {
  if (plan.transport === "stdio") {
    return new StdioClientTransport({
      command: plan.command,
      args: plan.args ?? [],
      env: { ...process.env, ...(plan.env ?? {}) },
      stderr: "pipe",
    });
  }
  const headers = { ...(plan.headers ?? {}) };
  if (plan.token) headers.Authorization = `Bearer ${plan.token}`;
  return new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers } });
}

function textOf(result) {
  return (result.content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

// Every prompt got and every resource read, with the MIME types listed and read.
async function readTexts(client) {
  const options = { timeout: REQUEST_TIMEOUT_MS };
  const prompts = [];
  for (const prompt of (await client.listPrompts(undefined, options)).prompts) {
    const got = await client.getPrompt({ name: prompt.name }, options);
    prompts.push({ name: prompt.name, messages: got.messages.map((m) => m.content.type) });
  }
  const resources = [];
  for (const resource of (await client.listResources(undefined, options)).resources) {
    const read = await client.readResource({ uri: resource.uri }, options);
    const [content] = read.contents;
    resources.push({
      uri: resource.uri,
      listed: resource.mimeType ?? null,
      read: content.mimeType ?? null,
      size: (content.text ?? "").length,
    });
  }
  const unknown = await client.getPrompt({ name: "no-such-prompt" }, options).then(
    () => null,
    (error) => ({ code: error?.code ?? null, message: error?.message ?? String(error) }),
  );
  return { prompts, resources, unknownPrompt: unknown };
}

async function run(plan) {
  const transport = makeTransport(plan);
  let stderr = "";
  if (plan.transport === "stdio") {
    transport.stderr?.on("data", (chunk) => {
      stderr += chunk.toString();
    });
  }
  const client = new Client({ name: "vault-memory-interop", version: "1.0.0" });
  const report = { transport: plan.transport };
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    report.protocolVersion = transport.protocolVersion ?? null;
    report.sessionId = transport.sessionId ?? null;
    report.server = client.getServerVersion() ?? null;
    const listed = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
    report.tools = listed.tools.map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema }));
    const names = new Set(listed.tools.map((tool) => tool.name));
    report.results = [];
    for (const call of plan.calls ?? []) {
      if (!names.has(call.name)) {
        report.results.push({ name: call.name, skipped: true });
        continue;
      }
      const result = await client.callTool(
        { name: call.name, arguments: call.arguments ?? {} },
        undefined,
        { timeout: REQUEST_TIMEOUT_MS },
      );
      report.results.push({
        name: call.name,
        isError: result.isError === true,
        structuredContent: result.structuredContent ?? null,
        text: textOf(result),
      });
    }
    if (plan.texts) report.texts = await readTexts(client);
    if (typeof transport.terminateSession === "function" && transport.sessionId) {
      await transport.terminateSession();
    }
    return report;
  } catch (error) {
    report.error = `${error?.name ?? "Error"}: ${error?.message ?? String(error)}`;
    report.code = error?.code ?? null;
    return report;
  } finally {
    await client.close().catch(() => {});
    if (stderr) report.stderr = stderr.slice(-4000);
  }
}

const plan = JSON.parse(readFileSync(0, "utf-8"));
const report = await run(plan);
process.stdout.write(JSON.stringify(report) + "\n");
process.exit(report.error ? 2 : 0);
