// A small stdio MCP server (2025-11-25) whose one tool, `maybe`, declares the draft's
// `execution.taskSupport: "optional"`. Called with `task`, it answers with a task that ends
// after `ms` milliseconds: completed with "done as a task", or failed with the status message
// "it broke" when `fail` is true; called without, it answers "done plainly" at once. It speaks
// the draft's `tasks/get`, `tasks/result` and `tasks/cancel`, nothing else of tasks.
import readline from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const tasks = new Map();
let made = 0;

const view = (task) => ({
  taskId: task.taskId,
  status: task.status,
  ttl: task.ttl,
  createdAt: task.createdAt,
  lastUpdatedAt: task.lastUpdatedAt,
  pollInterval: 50,
  ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
});

const answers = {
  initialize: () => ({
    protocolVersion: "2025-11-25",
    capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
    serverInfo: { name: "draft-tasks", version: "1" },
  }),
  "tools/list": () => ({
    tools: [
      {
        name: "maybe",
        description: "Done as a task when asked for one.",
        inputSchema: {
          type: "object",
          properties: { ms: { type: "integer" }, fail: { type: "boolean" } },
        },
        execution: { taskSupport: "optional" },
      },
    ],
  }),
  "tools/call": (params) => {
    if (!params.task) {
      return { content: [{ type: "text", text: "done plainly" }] };
    }
    const now = new Date().toISOString();
    made += 1;
    const task = {
      taskId: `task-${made}`,
      status: "working",
      ttl: params.task.ttl ?? null,
      createdAt: now,
      lastUpdatedAt: now,
    };
    tasks.set(task.taskId, task);
    setTimeout(() => {
      if (task.status !== "working") return;
      task.lastUpdatedAt = new Date().toISOString();
      if (params.arguments?.fail) {
        task.status = "failed";
        task.statusMessage = "it broke";
      } else {
        task.status = "completed";
        task.result = { content: [{ type: "text", text: "done as a task" }] };
      }
    }, params.arguments?.ms ?? 0);
    return { task: view(task) };
  },
  "tasks/get": (params) => view(tasks.get(params.taskId)),
  "tasks/result": (params) => {
    const task = tasks.get(params.taskId);
    if (!task.result) throw new Error(`task ${task.taskId} has no result`);
    return { ...task.result, _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } } };
  },
  "tasks/cancel": (params) => {
    const task = tasks.get(params.taskId);
    task.status = "cancelled";
    task.lastUpdatedAt = new Date().toISOString();
    return view(task);
  },
};

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const answer = answers[message.method];
  if (!answer) {
    send({ id: message.id, error: { code: -32601, message: "Method not found" } });
    return;
  }
  try {
    send({ id: message.id, result: answer(message.params ?? {}) });
  } catch (error) {
    send({ id: message.id, error: { code: -32602, message: String(error.message ?? error) } });
  }
});
