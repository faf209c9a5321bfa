// The TypeScript SDK side of bench/mcp_client.py: N sequential `echo` calls over one session,
// after one warm-up call. Usage: node mcp_client_ts.mjs SDK_DIR URL N. Prints "<n> <milliseconds>".
const [sdk, url, count] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);

const n = Number(count);
const client = new Client({ name: "bench", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.callTool({ name: "echo", arguments: { message: "hi" } });
const start = performance.now();
for (let i = 0; i < n; i++) {
  await client.callTool({ name: "echo", arguments: { message: "hi" } });
}
const elapsed = performance.now() - start;
console.log(`${n} ${elapsed.toFixed(1)}`);
await client.close();
