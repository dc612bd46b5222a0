// A stdio MCP server behind a recorder: `node record.mjs LOG PROGRAM ARGS...` runs the server and
// passes every line through both ways, appending each to LOG as it goes (`> ` from the client,
// `< ` from the server). When the server answers a client's `tasks/cancel`, the recorder asks the
// server `tasks/get` for that task itself (`+ ` in LOG, id `record-N`) and logs the answer
// without passing it on: what the server says of the task after it was cancelled.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import readline from "node:readline";

const [log, program, ...args] = process.argv.slice(2);
const server = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
const record = (mark, line) => appendFileSync(log, `${mark} ${line}\n`);
// The task of each `tasks/cancel` in flight, by request id.
const cancels = new Map();
let asked = 0;

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  record(">", line);
  try {
    const message = JSON.parse(line);
    if (message.method === "tasks/cancel" && message.id !== undefined) {
      cancels.set(JSON.stringify(message.id), message.params?.taskId);
    }
  } catch {
    // Not JSON: the server says so.
  }
  server.stdin.write(line + "\n");
}).on("close", () => server.stdin.end());

readline.createInterface({ input: server.stdout }).on("line", (line) => {
  record("<", line);
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    process.stdout.write(line + "\n");
    return;
  }
  if (typeof message.id === "string" && message.id.startsWith("record-")) {
    return; // the recorder's own question
  }
  process.stdout.write(line + "\n");
  const key = JSON.stringify(message.id);
  if (message.method === undefined && cancels.has(key)) {
    const taskId = cancels.get(key);
    cancels.delete(key);
    asked += 1;
    const get = JSON.stringify({
      jsonrpc: "2.0",
      id: `record-${asked}`,
      method: "tasks/get",
      params: { taskId },
    });
    if (!server.stdin.writableEnded) {
      record("+", get);
      server.stdin.write(get + "\n");
    }
  }
});

server.on("exit", (code) => process.exit(code ?? 0));
