// The TypeScript SDK's client with its OAuth support (`ClientCredentialsProvider`, the
// client_credentials grant) against a bearer-protected `McpServer`, for tools-mcp's tests: it is
// refused (401), discovers the protected resource metadata and the authorization server, gets a
// token for the resource, lists the tools and calls one (a 403 insufficient_scope makes it ask for
// the scope named and retry: the step-up).
//
// Usage: node oauth_client.mjs SDK_DIR URL ISSUER CLIENT_ID SECRET SCOPE TOOL
//   SDK_DIR: the folder of npm's @modelcontextprotocol/sdk.
//
// Prints one JSON object: the sorted tool names and the call's structured result (or its error).

import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdk, url, issuer, clientId, clientSecret, scope, tool] = process.argv.slice(2);
const load = (file) => import(pathToFileURL(path.join(sdk, "dist/esm/client", file)).href);
const { Client } = await load("index.js");
const { StreamableHTTPClientTransport } = await load("streamableHttp.js");
const { ClientCredentialsProvider } = await load("auth-extensions.js");

const authProvider = new ClientCredentialsProvider({
  clientId,
  clientSecret,
  scope,
  expectedIssuer: issuer,
});
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: "oauth-test", version: "1.0.0" });
const out = {};
try {
  await client.connect(transport);
  const listed = await client.listTools();
  out.tools = listed.tools.map((t) => t.name).sort();
  try {
    const result = await client.callTool({ name: tool, arguments: {} });
    out.call = result.structuredContent ?? null;
    out.is_error = Boolean(result.isError);
  } catch (e) {
    out.error = String(e);
  }
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(out));
