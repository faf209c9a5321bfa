// The TypeScript SDK side of bench/mcp_serve.sh: the same `add` tool on McpServer, stateless
// Streamable HTTP with JSON replies (a server and transport per request, the SDK's stateless
// pattern), on 127.0.0.1:PORT/mcp. Usage: node mcp_serve_ts.cjs PORT NODE_MODULES
const path = require("path");
const modules = process.argv[3];
const req = (p) => require(path.join(modules, p));
const { McpServer } = req("@modelcontextprotocol/sdk/dist/cjs/server/mcp.js");
const { StreamableHTTPServerTransport } = req("@modelcontextprotocol/sdk/dist/cjs/server/streamableHttp.js");
const express = req("express");
const z = req("zod");

function build() {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  server.tool("add", "Adds two integers.", { a: z.number().int(), b: z.number().int() }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  return server;
}

const app = express();
app.use(express.json());
app.post("/mcp", async (request, response) => {
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  response.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, request.body);
});
app.listen(Number(process.argv[2]), "127.0.0.1");
