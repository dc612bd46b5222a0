// npm's server-everything served over streamable HTTP with plain JSON answers: `node
// everything_json.mjs <server-everything's dist/index.js>` prints `port N` on stdout, then serves
// http://127.0.0.1:N/mcp. Its own `streamableHttp` mode answers every POST with an SSE stream;
// here the same server (its `createServer`, one per session as there) sits behind the TypeScript
// SDK's transport with `enableJsonResponse`, so each answer is an `application/json` body.
import { existsSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [index] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(file).href);

// The TypeScript SDK server-everything itself imports, found as Node finds it from there.
const sdkOf = (from) => {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const sdk = path.join(dir, "node_modules", "@modelcontextprotocol", "sdk");
    if (existsSync(sdk)) return sdk;
    if (dir === path.dirname(dir)) throw new Error(`no @modelcontextprotocol/sdk above ${from}`);
  }
};
const sdk = path.join(sdkOf(path.dirname(path.dirname(index))), "dist", "esm");
const { createServer } = await load(path.join(path.dirname(index), "server", "index.js"));
const { StreamableHTTPServerTransport } = await load(path.join(sdk, "server", "streamableHttp.js"));

const sessions = new Map();

const refuse = (res, status, message) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
};

const http = createHttpServer(async (req, res) => {
  try {
    const session = req.headers["mcp-session-id"];
    if (session) {
      const transport = sessions.get(session);
      if (!transport) return refuse(res, 404, "Session not found");
      return await transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return refuse(res, 400, "No session");
    // A POST without a session: a new server, as in server-everything's own HTTP mode. The
    // transport refuses anything but `initialize` itself.
    const { server, cleanup } = createServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    server.server.onclose = () => {
      if (transport.sessionId) {
        sessions.delete(transport.sessionId);
        cleanup(transport.sessionId);
      }
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) refuse(res, 500, "Internal server error");
  }
});

http.listen(0, "127.0.0.1", () => {
  process.stdout.write(`port ${http.address().port}\n`);
});
